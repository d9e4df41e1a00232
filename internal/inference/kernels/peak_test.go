package kernels

import (
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// TestProductProbeScales checks the ceiling `bench engine` reports is a
// measurement: positive, and with the assembly kernels more multiply-adds
// per second for ten tokens than for one (one token's product uses each
// weight once, ten reuse it from registers; the portable Go kernels take
// tokens one at a time and gain nothing).
func TestProductProbeScales(t *testing.T) {
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		p, err := NewProductProbe(typ)
		if err != nil {
			t.Fatal(err)
		}
		one, ten := p.Rate(1, 20*time.Millisecond), p.Rate(10, 20*time.Millisecond)
		t.Logf("%v: %.1f G multiply-adds/s for one token, %.1f for ten", typ, one/1e9, ten/1e9)
		if one <= 0 || ten <= 0 || (AsmEnabled() && ten <= one) {
			t.Errorf("%v: ten tokens %.3g multiply-adds/s, one %.3g: want both > 0 and, with the assembly, ten > one", typ, ten, one)
		}
	}
}
