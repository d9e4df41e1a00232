package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// argmaxForms are the implementations this build can run: the portable
// lanes always, the vector passes where the CPU has them.
func argmaxForms() map[string]func([]float32) int {
	forms := map[string]func([]float32) int{"go": argmaxF32Go}
	if hasAVX2 {
		forms["asm"] = argmaxF32
	}
	return forms
}

// TestArgmaxMatchesOneChain compares every form with the single running
// best on vectors drawn so that ties, NaNs, infinities and signed zeros
// land in every lane, in every position of a vector block and in the tail.
func TestArgmaxMatchesOneChain(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0,
		float32(math.Copysign(0, -1)), 3, 3, -1}
	for name, argmax := range argmaxForms() {
		for n := 0; n < 300; n++ {
			for range 100 {
				x := make([]float32, n)
				for i := range x {
					if r.IntN(4) == 0 {
						x[i] = special[r.IntN(len(special))]
					} else {
						x[i] = float32(r.IntN(5)) // few values: many ties
					}
				}
				if got, want := argmax(x), argmaxOneChain(x); got != want {
					t.Fatalf("%s n=%d: %d, one chain %d on %v", name, n, got, want, x)
				}
			}
		}
		// A real vocabulary: the winner anywhere, also only in the tail.
		for _, n := range []int{32000, 49152, 151936, 32007} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			for _, at := range []int{0, 1, 7, 8, n / 2, n - 8, n - 1} {
				old := x[at]
				x[at] = 100
				if got := argmax(x); got != at {
					t.Fatalf("%s n=%d: winner at %d found at %d", name, n, at, got)
				}
				x[at] = old
			}
		}
	}
}

func FuzzArgmaxF32(f *testing.F) {
	seed := make([]byte, 4*40)
	for i := range seed {
		seed[i] = byte(i * 37)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, raw []byte) {
		x := make([]float32, len(raw)/4)
		for i := range x {
			x[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
		}
		want := argmaxOneChain(x)
		for name, argmax := range argmaxForms() {
			if got := argmax(x); got != want {
				t.Fatalf("%s: %d, one chain %d on %v", name, got, want, x)
			}
		}
	})
}

// BenchmarkArgmaxSideBySide times the single chain, the portable lanes and
// the vector passes on vocabularies of 15M (32 000), SmolLM2 (49 152) and
// Qwen2.5 (151 936) logits, alternating within each iteration, and reports
// the single chain's time ÷ each form's.
func BenchmarkArgmaxSideBySide(b *testing.B) {
	for _, n := range []int{32000, 49152, 151936} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			forms := []func([]float32) int{argmaxOneChain, argmaxF32Go}
			names := []string{"one-chain", "go-lanes"}
			if hasAVX2 {
				forms, names = append(forms, argmaxF32), append(names, "asm")
			}
			spent := make([]time.Duration, len(forms))
			sink := 0
			for b.Loop() {
				for i, f := range forms {
					t0 := time.Now()
					sink += f(x)
					spent[i] += time.Since(t0)
				}
			}
			if sink < 0 {
				b.Fatal(sink)
			}
			for i, name := range names {
				b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N), "ns-"+name)
				if i > 0 {
					b.ReportMetric(float64(spent[0])/float64(spent[i]), "one-chain÷"+name)
				}
			}
		})
	}
}
