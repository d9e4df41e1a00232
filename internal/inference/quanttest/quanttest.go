// Package quanttest re-encodes test models into quantised weight types, so
// that tests of the engine reach the Q8_0 and Q4_0 kernels with the small
// F32 models of ../shared/models (as llama.cpp's quantiser would make them).
package quanttest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
)

// File writes a copy of the GGUF file src whose 2-D weights are re-encoded
// as typ wherever the row length allows it (other tensors keep their type)
// into a temporary directory of tb, and returns the copy's path.
func File(tb testing.TB, src string, typ gguf.GGMLType) string {
	tb.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var tensors []gguf.WriteTensor
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti)
		if err != nil {
			tb.Fatal(err)
		}
		wt := gguf.WriteTensor{Name: ti.Name, Dims: ti.Dims, Type: ti.Type, Data: data}
		if len(ti.Dims) == 2 && ti.Dims[0]%uint64(typ.BlockSize()) == 0 {
			vals := make([]float32, ti.NumElements())
			kernels.DequantizeRow(vals, ti.Type, data)
			if wt.Data, err = kernels.Quantize(typ, vals); err != nil {
				tb.Fatal(err)
			}
			wt.Type = typ
		}
		tensors = append(tensors, wt)
	}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, f.KV, tensors); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), fmt.Sprintf("quantised-%v.gguf", typ))
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}
