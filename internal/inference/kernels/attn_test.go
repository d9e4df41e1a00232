package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sentinel fills the spare capacity behind a slice so a test can prove a
// kernel wrote nothing past the end.
const sentinel = float32(-12345.5)

func withGuard(n int) []float32 {
	b := make([]float32, n+9)
	for i := n; i < len(b); i++ {
		b[i] = sentinel
	}
	return b[:n]
}

func checkGuard(t *testing.T, what string, x []float32) {
	t.Helper()
	for i, v := range x[len(x):cap(x)] {
		if v != sentinel {
			t.Fatalf("%s: wrote %v past the end at +%d", what, v, i)
		}
	}
}

func TestExpF32Accuracy(t *testing.T) {
	var worst float64
	for x := -87.0; x <= 88.0; x += 0.0137 {
		got, want := float64(ExpF32(float32(x))), math.Exp(float64(float32(x)))
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("worst relative error %.2g over [-87, 88]", worst)
	}
	for _, x := range []float32{-89, -200, float32(math.Inf(-1))} {
		if got := ExpF32(x); got != 0 {
			t.Errorf("ExpF32(%v) = %v, want 0", x, got)
		}
	}
	if got := ExpF32(0); got != 1 {
		t.Errorf("ExpF32(0) = %v", got)
	}
}

// TestAttnAsmMatchesGo holds the vector kernels to the Go versions and to a
// float64 reference on every tail length and several head sizes.
func TestAttnAsmMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, hd := range []int{5, 8, 16, 24, 48, 64, 72, 128} {
		for _, n := range []int{1, 2, 3, 7, 8, 9, 31, 100, 257} {
			stride := 3*hd + 8
			off := hd + 3
			q := randomVector(r, hd)
			keys := randomVector(r, (n-1)*stride+off+hd)
			name := fmt.Sprintf("hd=%d/n=%d", hd, n)

			scores := withGuard(n)
			AttnScores(scores, q, keys, stride, off, 0.125)
			checkGuard(t, name+" scores", scores)
			goScores := make([]float32, n)
			attnScoresGo(goScores, q, keys[off:], stride, 0.125)
			for p := range scores {
				var ref float64
				for i := range hd {
					ref += float64(q[i]) * float64(keys[p*stride+off+i])
				}
				ref *= 0.125
				if math.Abs(float64(scores[p])-ref) > 1e-5*(1+math.Abs(ref)) || math.Abs(float64(goScores[p])-ref) > 1e-5*(1+math.Abs(ref)) {
					t.Fatalf("%s: score %d = %v (Go %v), want %v", name, p, scores[p], goScores[p], ref)
				}
			}

			w := randomVector(r, n)
			out := withGuard(hd)
			for i := range out {
				out[i] = 99 // overwritten, not accumulated
			}
			AttnWeightedSum(out, w, keys, stride, off)
			checkGuard(t, name+" weighted sum", out)
			for i := range hd {
				var ref float64
				for p := range n {
					ref += float64(w[p]) * float64(keys[p*stride+off+i])
				}
				if math.Abs(float64(out[i])-ref) > 1e-5*(1+math.Abs(ref)) {
					t.Fatalf("%s: out[%d] = %v, want %v", name, i, out[i], ref)
				}
			}
		}
	}
}

// softmaxKernel is one softmax implementation for the tests to hold to
// the reference; skip says why this machine cannot run it.
type softmaxKernel struct {
	name string
	fn   func(x []float32)
	skip string
}

// TestSoftmaxMatchesReference holds every softmax kernel to a float64
// reference: every length to 41 (the vector kernels' tails) and lengths
// around and past their unrolled loops (64 values a pass for AVX-512), in
// narrow and wide spreads, with a masked-out position.
func TestSoftmaxMatchesReference(t *testing.T) {
	var sizes []int
	for n := 1; n <= 41; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 47, 48, 63, 64, 65, 79, 80, 127, 128, 129, 200, 320, 1000)
	for _, k := range softmaxKernels() {
		t.Run(k.name, func(t *testing.T) {
			if k.skip != "" {
				t.Skip(k.skip)
			}
			r := rand.New(rand.NewPCG(9, 10))
			for _, n := range sizes {
				for _, spread := range []float64{0.1, 10, 300} {
					x := withGuard(n)
					for i := range x {
						x[i] = float32((r.Float64()*2 - 1) * spread)
					}
					if n > 3 {
						x[n/2] = -1e30 // a masked-out position ends at zero
					}
					ref := make([]float64, n)
					mx := math.Inf(-1)
					for _, v := range x {
						mx = max(mx, float64(v))
					}
					var sum float64
					for i, v := range x {
						ref[i] = math.Exp(float64(v) - mx)
						sum += ref[i]
					}
					k.fn(x)
					checkGuard(t, "softmax", x)
					var total float64
					for i := range x {
						want := ref[i] / sum
						total += float64(x[i])
						if math.Abs(float64(x[i])-want) > 1e-6*(1+want) {
							t.Fatalf("n=%d spread=%v: p[%d] = %v, want %v", n, spread, i, x[i], want)
						}
					}
					if math.Abs(total-1) > 1e-5 {
						t.Fatalf("n=%d: probabilities sum to %v", n, total)
					}
				}
			}
		})
	}
}

// BenchmarkSoftmax times each softmax kernel on rows of 320 positions (a
// decode step's span in bench engine) and of 48.
func BenchmarkSoftmax(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{48, 320} {
		x := randomVector(r, n)
		for _, k := range softmaxKernels() {
			b.Run(fmt.Sprintf("n=%d/%s", n, k.name), func(b *testing.B) {
				if k.skip != "" {
					b.Skip(k.skip)
				}
				y := make([]float32, n)
				for b.Loop() {
					copy(y, x)
					k.fn(y)
				}
			})
		}
	}
}

func TestSiLUMulMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for n := 0; n <= 41; n++ {
		gate, up := withGuard(n), randomVector(r, n)
		for i := range gate {
			gate[i] = float32((r.Float64()*2 - 1) * 12)
		}
		if n > 2 {
			gate[0], gate[1] = 120, -120 // saturated both ways
		}
		orig := append([]float32(nil), gate...)
		goGate := append([]float32(nil), gate...)
		SiLUMul(gate, up)
		siluMulGo(goGate, up)
		checkGuard(t, "silu", gate)
		for i, g := range orig {
			want := float64(g) / (1 + math.Exp(-float64(g))) * float64(up[i])
			tol := 1e-6 * (1 + math.Abs(want))
			if math.Abs(float64(gate[i])-want) > tol || math.Abs(float64(goGate[i])-want) > tol {
				t.Fatalf("n=%d: silu(%v)·%v = %v (Go %v), want %v", n, g, up[i], gate[i], goGate[i], want)
			}
		}
	}
}

// BenchmarkAttendHead measures one query head over 256 cached positions
// (head size 64, the 135M and 0.5B shapes): scores, softmax, weighted sum.
func BenchmarkAttendHead(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const hd, n, stride = 64, 256, 192
	q, keys, values := randomVector(r, hd), randomVector(r, n*stride), randomVector(r, n*stride)
	scores, out := make([]float32, n), make([]float32, hd)
	b.Run("vector", func(b *testing.B) {
		for b.Loop() {
			AttnScores(scores, q, keys, stride, 64, 0.125)
			Softmax(scores)
			AttnWeightedSum(out, scores, values, stride, 64)
		}
	})
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			attnScoresGo(scores, q, keys[64:], stride, 0.125)
			softmaxGo(scores)
			attnWeightedSumGo(out, scores, values[64:], stride)
		}
	})
}

// BenchmarkAttnScores compares the four-position path of AttnScores with
// the one-position path (positions handed over in threes stay on it).
func BenchmarkAttnScores(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const hd, n, stride = 64, 255, 192
	q, keys := randomVector(r, hd), randomVector(r, n*stride)
	scores := make([]float32, n)
	b.Run("by4", func(b *testing.B) {
		for b.Loop() {
			AttnScores(scores, q, keys, stride, 64, 0.125)
		}
	})
	b.Run("by1", func(b *testing.B) {
		for b.Loop() {
			for p := 0; p < n; p += 3 {
				AttnScores(scores[p:p+3], q, keys[p*stride:], stride, 64, 0.125)
			}
		}
	})
}
