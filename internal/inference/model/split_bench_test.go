package model

import (
	"fmt"
	"testing"

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
				stepsSideBySide(b, batchedDecode135M(b, shape.load(b, typ), 10), 10, 4, set)
			})
		}
	}
}
