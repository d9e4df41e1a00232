package gguf

import (
	"bytes"
	"math"
	"os"
	"slices"
	"testing"

	"partnerapi/internal/testenv"
)

// FuzzParseWriteRoundTrip holds the metadata and tensors of any file Parse
// accepts through Write: what Write makes of a parsed file parses again to
// the same keys, values (a NaN equals a NaN, other floats compare bit for
// bit), tensor names, shapes, types and bytes, and writing that again gives
// the same file. The model tooling rewrites files this way (quantising, the
// benchmarks' random-weight models), so a value the reader takes but the
// writer cannot reproduce would silently change a model's metadata.
func FuzzParseWriteRoundTrip(f *testing.F) {
	f.Add(sampleFile(f))
	// Metadata alone, of every value type: without a tensor whose data
	// must still lie inside the file, most mutations of the pairs parse,
	// so the fuzzer reaches the values rather than the tensor checks.
	var meta bytes.Buffer
	if err := Write(&meta, []KV{
		{"general.alignment", Uint32Value(64)},
		{"u8", Value{Type: TypeUint8, bits: 200}}, {"i8", Value{Type: TypeInt8, bits: uint64(1<<64 - 3)}},
		{"u16", Value{Type: TypeUint16, bits: 60000}}, {"i16", Value{Type: TypeInt16, bits: uint64(1<<64 - 300)}},
		{"i64", Value{Type: TypeInt64, bits: 1 << 63}}, {"f64", Value{Type: TypeFloat64, f: -0.5}},
		{"f32", Float32Value(float32(math.Inf(-1)))}, {"no", BoolValue(false)}, {"s", StringValue("ünï")},
		{"bools", Value{Type: TypeArray, ElemType: TypeBool, bools: []bool{true, false}}},
		{"u8s", Value{Type: TypeArray, ElemType: TypeUint8, ints: []int64{1, 255}}},
		{"f64s", Value{Type: TypeArray, ElemType: TypeFloat64, f64s: []float64{1, math.NaN()}}},
		{"f32s", Float32sValue([]float32{0, -1})}, {"i32s", Int32sValue([]int32{-7})},
		{"nested", Value{Type: TypeArray, ElemType: TypeArray, arrays: []Value{StringsValue([]string{"x", ""})}}},
	}, nil); err != nil {
		f.Fatal(err)
	}
	f.Add(meta.Bytes())
	if p := testenv.SharedDir("models/stories260K.gguf"); p != "" {
		if b, err := os.ReadFile(p); err == nil {
			// The header, metadata and tensor table; the tensors
			// themselves lie past the cut, so this seed is refused as is
			// and only its mutations that shrink the table get through.
			f.Add(b[:16384])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		first, err := Parse(data)
		if err != nil {
			return
		}
		written := rewrite(t, first)
		second, err := Parse(written)
		if err != nil {
			t.Fatalf("the rewritten file does not parse: %v", err)
		}
		sameFile(t, first, second)
		if again := rewrite(t, second); !bytes.Equal(again, written) {
			t.Fatalf("writing the rewritten file changes it (%d bytes, then %d)", len(written), len(again))
		}
	})
}

// rewrite writes f's metadata and tensors with Write.
func rewrite(t *testing.T, f *File) []byte {
	t.Helper()
	tensors := make([]WriteTensor, len(f.Tensors))
	for i, ti := range f.Tensors {
		b, err := f.TensorData(ti)
		if err != nil {
			t.Fatalf("tensor %q of a parsed file: %v", ti.Name, err)
		}
		tensors[i] = WriteTensor{Name: ti.Name, Dims: ti.Dims, Type: ti.Type, Data: b}
	}
	var buf bytes.Buffer
	if err := Write(&buf, f.KV, tensors); err != nil {
		t.Fatalf("Write refuses what Parse accepted: %v", err)
	}
	return buf.Bytes()
}

func sameFile(t *testing.T, a, b *File) {
	t.Helper()
	if len(a.KV) != len(b.KV) || len(a.Tensors) != len(b.Tensors) || a.Alignment != b.Alignment {
		t.Fatalf("%d pairs, %d tensors, alignment %d became %d, %d, %d",
			len(a.KV), len(a.Tensors), a.Alignment, len(b.KV), len(b.Tensors), b.Alignment)
	}
	for i := range a.KV {
		if a.KV[i].Key != b.KV[i].Key || !sameValue(a.KV[i].Value, b.KV[i].Value) {
			t.Fatalf("pair %d: %q = %+v became %q = %+v", i, a.KV[i].Key, a.KV[i].Value, b.KV[i].Key, b.KV[i].Value)
		}
	}
	for i, ta := range a.Tensors {
		tb := b.Tensors[i]
		if ta.Name != tb.Name || ta.Type != tb.Type || !slices.Equal(ta.Dims, tb.Dims) {
			t.Fatalf("tensor %d: %q %v %v became %q %v %v", i, ta.Name, ta.Type, ta.Dims, tb.Name, tb.Type, tb.Dims)
		}
		da, _ := a.TensorData(ta)
		db, err := b.TensorData(tb)
		if err != nil || !bytes.Equal(da, db) {
			t.Fatalf("tensor %q: data changed (%v)", ta.Name, err)
		}
	}
}

func sameValue(a, b Value) bool {
	if a.Type != b.Type || a.Type == TypeArray && a.ElemType != b.ElemType {
		return false
	}
	switch {
	case a.Type == TypeString:
		return a.s == b.s
	case a.Type == TypeFloat32 || a.Type == TypeFloat64:
		return sameFloat(a.f, b.f)
	case a.Type != TypeArray:
		return a.bits == b.bits
	}
	switch a.ElemType {
	case TypeString:
		return slices.Equal(a.strs, b.strs)
	case TypeFloat32:
		return slices.EqualFunc(a.f32s, b.f32s, func(x, y float32) bool { return sameFloat(float64(x), float64(y)) })
	case TypeFloat64:
		return slices.EqualFunc(a.f64s, b.f64s, sameFloat)
	case TypeBool:
		return slices.Equal(a.bools, b.bools)
	case TypeArray:
		return slices.EqualFunc(a.arrays, b.arrays, sameValue)
	}
	return slices.Equal(a.ints, b.ints)
}

// sameFloat compares bit for bit (so -0 and 0 differ) except that any NaN
// equals any NaN: converting a float32 signalling NaN to float64 and back,
// as the reader and writer do, sets its quiet bit.
func sameFloat(x, y float64) bool {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.IsNaN(x) && math.IsNaN(y)
	}
	return math.Float64bits(x) == math.Float64bits(y)
}
