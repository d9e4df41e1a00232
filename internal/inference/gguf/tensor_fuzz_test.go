package gguf

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// tensorFiles are small valid files with one to three tensors of several
// types (float, integer, legacy and k-quant blocks), at the default
// alignment and at general.alignment 8 and 64. FuzzParse's byte mutations
// of one sample file found 2 new inputs in 45 s: a change to the tensor
// table almost always leaves some tensor outside the file. Seeds with
// several tables, and FuzzTensorTable's mutations of one table field at a
// time, start the fuzzer past that check.
func tensorFiles(tb testing.TB) [][]byte {
	type spec struct {
		name string
		dims []uint64
		typ  GGMLType
	}
	tables := [][]spec{
		{{"w", []uint64{8}, F32}},
		{{"embed", []uint64{4, 3}, F16}, {"q", []uint64{32, 2}, Q8_0}},
		{{"a", []uint64{32}, Q4_0}, {"blk.0.ffn", []uint64{256, 1}, Q4_K}, {"out", []uint64{256}, Q6_K}},
		{{"x", []uint64{2, 2, 2}, BF16}, {"y", []uint64{32}, Q5_0}, {"z", []uint64{3}, I32}},
	}
	var files [][]byte
	for _, align := range []uint32{0, 8, 64} {
		var kvs []KV
		if align != 0 {
			kvs = []KV{{"general.alignment", Uint32Value(align)}}
		}
		for _, table := range tables {
			tensors := make([]WriteTensor, len(table))
			for i, s := range table {
				size, err := tensorSize(TensorInfo{Name: s.name, Dims: s.dims, Type: s.typ})
				if err != nil {
					tb.Fatal(err)
				}
				data := make([]byte, size)
				for j := range data {
					data[j] = byte(7*j + i + 1)
				}
				tensors[i] = WriteTensor{Name: s.name, Dims: s.dims, Type: s.typ, Data: data}
			}
			var buf bytes.Buffer
			if err := Write(&buf, kvs, tensors); err != nil {
				tb.Fatal(err)
			}
			files = append(files, buf.Bytes())
		}
	}
	return files
}

// tableField is one fixed-width integer of a file's header or tensor
// table: a count, a string length, a dimension, a type or an offset.
type tableField struct{ pos, width int }

// tableFields lists the integer fields of a file tensorFiles wrote, whose
// metadata is at most a uint32 general.alignment.
func tableFields(tb testing.TB, data []byte) []tableField {
	fields := []tableField{{4, 4}, {8, 8}, {16, 8}} // version, tensor and pair counts
	le := binary.LittleEndian
	pos := 24
	for range le.Uint64(data[16:]) {
		pos += 8 + int(le.Uint64(data[pos:])) // the key
		if ValueType(le.Uint32(data[pos:])) != TypeUint32 {
			tb.Fatal("tableFields reads uint32 metadata only")
		}
		fields = append(fields, tableField{pos, 4}, tableField{pos + 4, 4})
		pos += 8
	}
	for range le.Uint64(data[8:]) {
		fields = append(fields, tableField{pos, 8})
		pos += 8 + int(le.Uint64(data[pos:]))
		nDims := int(le.Uint32(data[pos:]))
		fields = append(fields, tableField{pos, 4})
		pos += 4
		for range nDims {
			fields = append(fields, tableField{pos, 8})
			pos += 8
		}
		fields = append(fields, tableField{pos, 4}, tableField{pos + 4, 8})
		pos += 12
	}
	return fields
}

// FuzzTensorTable sets one header or tensor-table field of a valid file to
// value (its low bytes when the field is narrower) and holds what Parse
// accepts to the properties of FuzzParse and FuzzParseWriteRoundTrip:
// every tensor's bytes lie in the file at an aligned offset and are as
// many as its shape and type need, and Write reproduces the file's tensors
// and metadata.
func FuzzTensorTable(f *testing.F) {
	files := tensorFiles(f)
	fieldsOf := make([][]tableField, len(files))
	for i, file := range files {
		fieldsOf[i] = tableFields(f, file)
		for j := range fieldsOf[i] {
			if j%4 == i%4 {
				f.Add(uint8(i), uint8(j), uint64(j))
			}
		}
	}
	f.Fuzz(func(t *testing.T, which, field uint8, value uint64) {
		i := int(which) % len(files)
		at := fieldsOf[i][int(field)%len(fieldsOf[i])]
		data := bytes.Clone(files[i])
		var v [8]byte
		binary.LittleEndian.PutUint64(v[:], value)
		copy(data[at.pos:at.pos+at.width], v[:at.width])
		file, err := Parse(data)
		if err != nil {
			return
		}
		checkTensors(t, file)
		again, err := Parse(rewrite(t, file))
		if err != nil {
			t.Fatalf("the rewritten file does not parse: %v", err)
		}
		sameFile(t, file, again)
	})
}

// checkTensors holds a parsed file's tensors to their table: readable,
// aligned, and of the size their shape and type give.
func checkTensors(t *testing.T, file *File) {
	t.Helper()
	for _, ti := range file.Tensors {
		b, err := file.TensorData(ti)
		if err != nil {
			t.Fatalf("parsed file has unreadable tensor %q: %v", ti.Name, err)
		}
		want, err := tensorSize(ti)
		if err != nil || uint64(len(b)) != want || ti.Size() != want {
			t.Fatalf("tensor %q %v %v: %d bytes, Size %d, shape and type give %d (%v)", ti.Name, ti.Type, ti.Dims, len(b), ti.Size(), want, err)
		}
		if ti.Offset%file.Alignment != 0 || file.DataOffset()%file.Alignment != 0 {
			t.Fatalf("tensor %q at %d+%d, not aligned to %d", ti.Name, file.DataOffset(), ti.Offset, file.Alignment)
		}
	}
}
