package model

import (
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/hugepage"
)

// BenchmarkHugeStepSideBySide decodes with two copies of a random 135M
// model in one process, one loaded with its packed weights in huge pages
// (hugepage.Make) and one in 4 KB pages, alternating blocks of steps: one
// stream, and ten streams batched.
func BenchmarkHugeStepSideBySide(b *testing.B) {
	defer hugepage.SetEnabled(true)
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		for _, streams := range []int{1, 10} {
			b.Run(fmt.Sprintf("%v/streams=%d", typ, streams), func(b *testing.B) {
				var steps [2]func()
				for side := range steps {
					hugepage.SetEnabled(side == 0)
					steps[side] = batchedDecode135M(b, bench135M(b, typ), streams)
				}
				const block = 4
				var t [2]time.Duration
				for b.Loop() {
					for side, step := range steps {
						t0 := time.Now()
						for range block {
							step()
						}
						t[side] += time.Since(t0)
					}
				}
				b.ReportMetric(float64(t[1])/float64(t[0]), "huge-speedup")
				b.ReportMetric(float64(streams*block*b.N)/t[0].Seconds(), "tok/s-huge")
				b.ReportMetric(float64(streams*block*b.N)/t[1].Seconds(), "tok/s-small")
			})
		}
	}
}
