package model

import (
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
)

// BenchmarkSplitSideBySide compares decode with the weight products split
// over the pool from the calibrated threshold (kernels.CalibrateSplit) and
// from the fixed one it replaces, alternating blocks of tokens in one
// process, for one stream and ten, of the stories15M and SmolLM2-135M
// shapes.
func BenchmarkSplitSideBySide(b *testing.B) {
	cal := kernels.CalibrateSplit()
	b.Logf("calibrated: hand-off %v, %.0f multiply-adds/ns, split from %d", cal.Handoff, cal.Rate, cal.Threshold)
	const fixed = 1 << 15
	set := func(on bool) {
		if on {
			kernels.SetSplitThreshold(cal.Threshold)
		} else {
			kernels.SetSplitThreshold(fixed)
		}
	}
	for _, shape := range []struct {
		name string
		load func(*testing.B, gguf.GGMLType) *Model
	}{{"15M", bench15M}, {"135M", bench135M}} {
		b.Run(shape.name+"/streams=1", func(b *testing.B) { sideBySideAt(b, shape.load, 256, set) })
		for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
			b.Run(fmt.Sprintf("%s/streams=10/%v", shape.name, typ), func(b *testing.B) {
				defer set(true)
				step := batchedDecode135M(b, shape.load(b, typ), 10)
				const block = 4
				var on, off time.Duration
				for b.Loop() {
					set(true)
					t0 := time.Now()
					for range block {
						step()
					}
					t1 := time.Now()
					set(false)
					for range block {
						step()
					}
					on, off = on+t1.Sub(t0), off+time.Since(t1)
				}
				b.ReportMetric(float64(10*block*b.N)/on.Seconds(), "tok/s-new")
				b.ReportMetric(float64(10*block*b.N)/off.Seconds(), "tok/s-old")
				b.ReportMetric(float64(off)/float64(on), "speedup")
			})
		}
	}
}
