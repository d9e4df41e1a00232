//go:build linux

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/testenv"
)

// BenchmarkDecodeStepCPU runs the weight products of one decode step of a
// 135M-class and a 0.5B-class model (Q8_0 and Q4_0, 1 and 10 tokens) and
// reports, besides the wall time, the process CPU time per step. On the
// shared development machine the wall time of a step mostly measures how
// much of the CPU the other users left; the CPU time of a fixed amount of
// work does not, so old and new builds compare on it (with -cpu 1 it is the
// kernels' time alone, as there are no pool workers to spin).
func BenchmarkDecodeStepCPU(b *testing.B) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, shape := range []struct {
		name              string
		layers, e, kv, ff int
	}{{"135m", 30, 576, 192, 1536}, {"0.5b", 24, 896, 128, 4864}} {
		for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
			mat := func(rows, cols int) Matrix {
				return Pack(Matrix{Type: typ, Rows: rows, Cols: cols, Data: randomRow(r, typ, rows*cols)})
			}
			var layers [][7]Matrix
			for range shape.layers {
				e, kv, ff := shape.e, shape.kv, shape.ff
				layers = append(layers, [7]Matrix{mat(e, e), mat(kv, e), mat(kv, e), mat(e, e), mat(ff, e), mat(ff, e), mat(e, ff)})
			}
			x := randomVector(r, 10*shape.ff)
			out := make([]float32, 10*shape.ff)
			for _, n := range []int{1, 10} {
				b.Run(fmt.Sprintf("%s/%v/tokens=%d", shape.name, typ, n), func(b *testing.B) {
					cpu0 := testenv.ProcessCPU()
					for b.Loop() {
						for _, ly := range layers {
							for _, w := range ly {
								MatMul(out[:n*w.Rows], w, x[:n*w.Cols], n)
							}
						}
					}
					cpu := testenv.ProcessCPU() - cpu0
					b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
					b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "tok/cpu-s")
				})
			}
		}
	}
}
