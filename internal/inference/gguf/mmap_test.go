package gguf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestDropResidentKeepsContents drops the pages of a mapped tensor and reads
// it again: the bytes come back from the file. On a File parsed from memory
// it must do nothing (madvise would zero anonymous memory), and bytes that
// are not the file's are refused.
func TestDropResidentKeepsContents(t *testing.T) {
	const n = 64 << 10 // several pages, so whole pages lie inside the tensor
	data := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(i*2654435761))
	}
	var buf bytes.Buffer
	if err := Write(&buf, []KV{{"general.architecture", StringValue("llama")}},
		[]WriteTensor{{Name: "w", Dims: []uint64{n}, Type: F32, Data: data}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	mapped, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	parsed, err := Parse(bytes.Clone(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*File{"mapped": mapped, "parsed": parsed} {
		w, err := f.TensorData(f.Tensors[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := f.DropResident(w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(w, data) {
			t.Errorf("%s: tensor bytes changed after DropResident", name)
		}
	}
	if err := mapped.DropResident(make([]byte, 8192)); err == nil {
		t.Error("bytes outside the mapping accepted")
	}
}
