package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"partnerapi/internal/testenv"
)

func TestOpenStories260K(t *testing.T) {
	f, err := Open(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Version != 3 || len(f.KV) != 19 || len(f.Tensors) != 48 || f.Alignment != 32 {
		t.Fatalf("version %d, %d kv, %d tensors, alignment %d", f.Version, len(f.KV), len(f.Tensors), f.Alignment)
	}
	if f.DataOffset() != 14176 {
		t.Errorf("data offset %d, want 14176", f.DataOffset())
	}
	if arch, _ := f.String("general.architecture"); arch != "llama" {
		t.Errorf("architecture %q", arch)
	}
	if n, ok := f.Uint("llama.embedding_length"); !ok || n != 64 {
		t.Errorf("embedding_length %d %v", n, ok)
	}
	if eps, ok := f.Float("llama.attention.layer_norm_rms_epsilon"); !ok || math.Abs(eps-1e-5) > 1e-9 {
		t.Errorf("eps %v %v", eps, ok)
	}
	toks, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok || len(toks) != 512 {
		t.Fatalf("tokens %d %v", len(toks), ok)
	}
	scores, ok := f.Float32s("tokenizer.ggml.scores")
	if !ok || len(scores) != 512 {
		t.Errorf("scores %d %v", len(scores), ok)
	}
	types, ok := f.Ints("tokenizer.ggml.token_type")
	if !ok || len(types) != 512 || types[0] != 2 || types[1] != 3 || types[3] != 6 {
		t.Errorf("token types %v %v", types[:4], ok)
	}
	ti, ok := f.Tensor("blk.0.ffn_down.weight")
	if !ok || ti.Type != F32 || len(ti.Dims) != 2 || ti.Dims[0] != 172 || ti.Dims[1] != 64 {
		t.Fatalf("ffn_down %+v %v", ti, ok)
	}
	data, err := f.TensorData(ti)
	if err != nil || len(data) != 172*64*4 {
		t.Fatalf("ffn_down data %d %v", len(data), err)
	}
	// The last tensor's data runs exactly to the end of the file.
	last := f.Tensors[len(f.Tensors)-1]
	fi, _ := os.Stat(testenv.Model(t, "stories260K.gguf"))
	if end := f.DataOffset() + last.Offset + last.Size(); end != uint64(fi.Size()) {
		t.Errorf("last tensor ends at %d, file is %d bytes", end, fi.Size())
	}
}

func TestOpenSharedModels(t *testing.T) {
	dir := testenv.Models(t)
	for _, tc := range []struct {
		name     string
		tensors  int
		template bool
	}{
		{"llama-2-tiny-random.gguf", 12, false},
		{"vocab/ggml-vocab-llama-spm.gguf", 0, false},
		{"vocab/ggml-vocab-gpt-2.gguf", 0, false},
		{"vocab/ggml-vocab-phi-3.gguf", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Open(filepath.Join(dir, tc.name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if len(f.Tensors) != tc.tensors {
				t.Errorf("%d tensors, want %d", len(f.Tensors), tc.tensors)
			}
			if _, ok := f.String("tokenizer.chat_template"); ok != tc.template {
				t.Errorf("chat template present = %v", ok)
			}
			for _, ti := range f.Tensors {
				if _, err := f.TensorData(ti); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestOpenSharesMapping(t *testing.T) {
	path := testenv.Model(t, "stories260K.gguf")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.TensorData(a.Tensors[0])
	db, _ := b.TensorData(b.Tensors[0])
	if &da[0] != &db[0] {
		t.Error("two opens of one file do not share the mapping")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// b still works after a is closed.
	if db2, err := b.TensorData(b.Tensors[0]); err != nil || db2[0] != db[0] {
		t.Fatal("second handle broken after first close", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err == nil {
		t.Error("double close accepted")
	}
	if _, err := b.TensorData(b.Tensors[0]); err == nil {
		t.Error("TensorData after close accepted")
	}
}

// sampleFile writes a small GGUF with every value type and two tensors.
func sampleFile(t testing.TB) []byte {
	kvs := []KV{
		{"general.architecture", StringValue("llama")},
		{"u32", Uint32Value(7)},
		{"u64", Uint64Value(1 << 40)},
		{"i32", Int32Value(-5)},
		{"f32", Float32Value(1.5)},
		{"flag", BoolValue(true)},
		{"strs", StringsValue([]string{"a", "", "ünï"})},
		{"floats", Float32sValue([]float32{1, -2, 3.25})},
		{"ints", Int32sValue([]int32{-1, 0, 1 << 30})},
		{"nested", Value{Type: TypeArray, ElemType: TypeArray, arrays: []Value{Int32sValue([]int32{1, 2}), StringsValue([]string{"x"})}}},
	}
	f32 := make([]byte, 4*8)
	for i := 0; i < 8; i++ {
		binary.LittleEndian.PutUint32(f32[4*i:], math.Float32bits(float32(i)))
	}
	q8 := make([]byte, 34*2)
	q8[0], q8[1] = 0x00, 0x3c // d = 1.0
	var buf bytes.Buffer
	err := Write(&buf, kvs, []WriteTensor{
		{Name: "a", Dims: []uint64{4, 2}, Type: F32, Data: f32},
		{Name: "b", Dims: []uint64{32, 2}, Type: Q8_0, Data: q8},
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteParseRoundTrip(t *testing.T) {
	f, err := Parse(sampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Uint("u32"); v != 7 {
		t.Errorf("u32 %d", v)
	}
	if v, _ := f.Uint("u64"); v != 1<<40 {
		t.Errorf("u64 %d", v)
	}
	if _, ok := f.Uint("i32"); ok {
		t.Error("negative int read as uint")
	}
	if v, _ := f.Float("i32"); v != -5 {
		t.Errorf("i32 as float %v", v)
	}
	if v, _ := f.Float("f32"); v != 1.5 {
		t.Errorf("f32 %v", v)
	}
	if v, ok := f.Bool("flag"); !v || !ok {
		t.Error("flag")
	}
	if s, _ := f.Strings("strs"); len(s) != 3 || s[2] != "ünï" {
		t.Errorf("strs %q", s)
	}
	if fl, _ := f.Float32s("floats"); len(fl) != 3 || fl[2] != 3.25 {
		t.Errorf("floats %v", fl)
	}
	if in, _ := f.Ints("ints"); len(in) != 3 || in[0] != -1 || in[2] != 1<<30 {
		t.Errorf("ints %v", in)
	}
	nested, _ := f.Get("nested")
	if arr, ok := nested.AsArrays(); !ok || len(arr) != 2 || arr[1].Len() != 1 {
		t.Errorf("nested %+v", nested)
	}
	if _, ok := f.String("u32"); ok {
		t.Error("u32 read as string")
	}
	a, _ := f.Tensor("a")
	data, err := f.TensorData(a)
	if err != nil || math.Float32frombits(binary.LittleEndian.Uint32(data[4*5:])) != 5 {
		t.Fatalf("tensor a: %v", err)
	}
	b, _ := f.Tensor("b")
	if b.Offset%32 != 0 || b.Size() != 68 {
		t.Errorf("tensor b %+v size %d", b, b.Size())
	}
}

func TestParseRefusesEveryTruncation(t *testing.T) {
	data := sampleFile(t)
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	end := f.DataOffset() + f.Tensors[1].Offset + f.Tensors[1].Size()
	for n := 0; n < int(end); n++ {
		if _, err := Parse(data[:n]); err == nil {
			t.Fatalf("prefix of %d bytes accepted", n)
		}
	}
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestParseRefusesHostileFiles(t *testing.T) {
	hdr := func(version uint32, nT, nKV uint64) []byte {
		return cat([]byte("GGUF"), le32(version), le64(nT), le64(nKV))
	}
	key := func(s string) []byte { return cat(le64(uint64(len(s))), []byte(s)) }
	tensor := func(name string, dims []uint64, typ uint32, off uint64) []byte {
		b := cat(key(name), le32(uint32(len(dims))))
		for _, d := range dims {
			b = cat(b, le64(d))
		}
		return cat(b, le32(typ), le64(off))
	}
	pad := make([]byte, 64)
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"bad magic", cat([]byte("GGML"), le32(3), le64(0), le64(0))},
		{"version 1", hdr(1, 0, 0)},
		{"big endian", cat([]byte("GGUF"), []byte{0, 0, 0, 3}, le64(0), le64(0))},
		{"huge kv count", hdr(3, 0, 1<<62)},
		{"huge tensor count", hdr(3, math.MaxUint64, 0)},
		{"huge key length", cat(hdr(3, 0, 1), le64(math.MaxUint64), pad)},
		{"huge string array", cat(hdr(3, 0, 1), key("k"), le32(uint32(TypeArray)), le32(uint32(TypeString)), le64(1<<60), pad)},
		{"huge int array", cat(hdr(3, 0, 1), key("k"), le32(uint32(TypeArray)), le32(uint32(TypeUint64)), le64(1<<61), pad)},
		{"unknown value type", cat(hdr(3, 0, 1), key("k"), le32(99), pad)},
		{"unknown array type", cat(hdr(3, 0, 1), key("k"), le32(uint32(TypeArray)), le32(99), le64(1), pad)},
		{"duplicate key", cat(hdr(3, 0, 2), key("k"), le32(uint32(TypeUint8)), []byte{1}, key("k"), le32(uint32(TypeUint8)), []byte{1}, pad)},
		{"bad bool", cat(hdr(3, 0, 1), key("k"), le32(uint32(TypeBool)), []byte{2}, pad)},
		{"alignment not power of two", cat(hdr(3, 0, 1), key("general.alignment"), le32(uint32(TypeUint32)), le32(24), pad)},
		{"alignment zero", cat(hdr(3, 0, 1), key("general.alignment"), le32(uint32(TypeUint32)), le32(0), pad)},
		{"five dims", cat(hdr(3, 1, 0), tensor("t", []uint64{1, 1, 1, 1, 1}, 0, 0), pad)},
		{"dims overflow", cat(hdr(3, 1, 0), tensor("t", []uint64{1 << 32, 1 << 32, 4}, 0, 0), pad)},
		{"unknown tensor type", cat(hdr(3, 1, 0), tensor("t", []uint64{1}, 77, 0), pad)},
		{"partial block", cat(hdr(3, 1, 0), tensor("t", []uint64{31}, uint32(Q8_0), 0), pad)},
		{"misaligned offset", cat(hdr(3, 1, 0), tensor("t", []uint64{1}, 0, 3), pad)},
		{"data past end", cat(hdr(3, 1, 0), tensor("t", []uint64{1024}, 0, 0), pad)},
		{"offset overflow", cat(hdr(3, 1, 0), tensor("t", []uint64{1}, 0, math.MaxUint64-31), pad)},
		{"duplicate tensor", cat(hdr(3, 2, 0), tensor("t", []uint64{1}, 0, 0), tensor("t", []uint64{1}, 0, 32), pad)},
		{"deep nesting", cat(hdr(3, 0, 1), key("k"), le32(uint32(TypeArray)),
			le32(uint32(TypeArray)), le64(1), le32(uint32(TypeArray)), le64(1), le32(uint32(TypeArray)), le64(1),
			le32(uint32(TypeArray)), le64(1), le32(uint32(TypeArray)), le64(1), le32(uint32(TypeUint8)), le64(0), pad)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.data)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrFormat) {
				t.Errorf("error %v does not wrap ErrFormat", err)
			}
		})
	}
	// A well-formed minimal file is accepted, so the cases above fail for
	// their stated reason and not for a broken header.
	if _, err := Parse(cat(hdr(3, 1, 0), tensor("t", []uint64{1}, 0, 0), pad)); err != nil {
		t.Fatalf("minimal file refused: %v", err)
	}
}

func TestWriteRefusesWrongDataSize(t *testing.T) {
	err := Write(&bytes.Buffer{}, nil, []WriteTensor{{Name: "t", Dims: []uint64{4}, Type: F32, Data: make([]byte, 15)}})
	if err == nil {
		t.Fatal("accepted 15 bytes for a 4-float tensor")
	}
}

// FuzzParse: Parse never panics, and every tensor of a file it accepts is
// readable, aligned and of its shape's size (checkTensors).
func FuzzParse(f *testing.F) {
	f.Add(sampleFile(f))
	for _, file := range tensorFiles(f) {
		f.Add(file)
	}
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	if p := testenv.SharedDir("models/stories260K.gguf"); p != "" {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b[:16384])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		checkTensors(t, file)
		for _, kv := range file.KV {
			_ = kv.Value.Len()
		}
	})
}

func TestParseVersion2(t *testing.T) {
	// v2 has the v3 layout (64-bit counts); only the version number differs.
	data := bytes.Clone(sampleFile(t))
	binary.LittleEndian.PutUint32(data[4:], 2)
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 2 || len(f.Tensors) != 2 {
		t.Errorf("version %d, %d tensors", f.Version, len(f.Tensors))
	}
}

func TestGGMLTypeTraits(t *testing.T) {
	tests := []struct {
		typ         GGMLType
		known       bool
		block, size int
		name        string
	}{
		{F32, true, 1, 4, "F32"},
		{Q4_0, true, 32, 18, "Q4_0"},
		{Q8_0, true, 32, 34, "Q8_0"},
		{Q6_K, true, 256, 210, "Q6_K"},
		{MXFP4, true, 32, 17, "MXFP4"},
		{4, false, 0, 0, "GGMLType(4)"},   // a removed type inside the table
		{31, false, 0, 0, "GGMLType(31)"}, // a gap after BF16
		{40, false, 0, 0, "GGMLType(40)"}, // past the last known type
		{1 << 31, false, 0, 0, "GGMLType(2147483648)"},
	}
	for _, tt := range tests {
		if got := tt.typ.Known(); got != tt.known {
			t.Errorf("%v.Known() = %v, want %v", tt.typ, got, tt.known)
		}
		if got := tt.typ.BlockSize(); got != tt.block {
			t.Errorf("%v.BlockSize() = %d, want %d", tt.typ, got, tt.block)
		}
		if got := tt.typ.TypeSize(); got != tt.size {
			t.Errorf("%v.TypeSize() = %d, want %d", tt.typ, got, tt.size)
		}
		if got := tt.typ.String(); got != tt.name {
			t.Errorf("String() = %q, want %q", got, tt.name)
		}
		if _, err := tt.typ.RowSize(256); (err == nil) != tt.known {
			t.Errorf("%v.RowSize(256) error %v, want an error: %v", tt.typ, err, !tt.known)
		}
	}
}
