package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// halfVector returns n random values rounded to half precision, as the KV
// cache stores them.
func halfVector(r *rand.Rand, n int) []uint16 {
	h := make([]uint16, n)
	FloatsToHalves(h, randomVector(r, n))
	return h
}

func halfFloats(h []uint16) []float32 {
	f := make([]float32, len(h))
	HalvesToFloats(f, h)
	return f
}

func near(got, want float64) bool { return math.Abs(got-want) <= 2e-5*(1+math.Abs(want)) }

// TestAttnGroupMatchesUngrouped holds the grouped half-precision kernels
// (assembly where present) to their Go versions, to the per-head float
// kernels on the widened cache and to a float64 reference, for every group
// size of the supported models and more, odd spans and head sizes on and
// off the vector path.
func TestAttnGroupMatchesUngrouped(t *testing.T) {
	forEachAttnPath(t, testAttnGroupMatchesUngrouped)
}

func testAttnGroupMatchesUngrouped(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, hd := range []int{8, 16, 48, 64, 128} {
		for g := 1; g <= 7; g++ {
			for _, span := range []int{1, 2, 3, 7, 8, 9, 31, 100, 257} {
				name := fmt.Sprintf("hd=%d/g=%d/span=%d", hd, g, span)
				stride, off := 2*hd+8, hd+3
				cache := halfVector(r, (span-1)*stride+off+hd)
				wide := halfFloats(cache)
				q := randomVector(r, g*hd)

				scores := withGuard(g * span)
				AttnScoresGroup(scores, q, cache, nil, hd, span, stride, off, 0.125)
				checkGuard(t, name+" scores", scores)
				goScores := make([]float32, g*span)
				attnScoresGroupGo(goScores, q, cache[off:], hd, span, stride, 0.125)
				perHead := make([]float32, span)
				for j := range g {
					AttnScores(perHead, q[j*hd:(j+1)*hd], wide, stride, off, 0.125)
					for p := range span {
						var ref float64
						for i := range hd {
							ref += float64(q[j*hd+i]) * float64(wide[p*stride+off+i])
						}
						ref *= 0.125
						got := scores[j*span+p]
						if !near(float64(got), ref) || !near(float64(goScores[j*span+p]), ref) || !near(float64(perHead[p]), ref) {
							t.Fatalf("%s: head %d score %d = %v (Go %v, per head %v), want %v", name, j, p, got, goScores[j*span+p], perHead[p], ref)
						}
					}
				}

				w := randomVector(r, g*span)
				out := withGuard(g * hd)
				for i := range out {
					out[i] = 99 // overwritten, not accumulated
				}
				AttnWeightedSumGroup(out, w, cache, hd, span, stride, off)
				checkGuard(t, name+" weighted sum", out)
				goOut := make([]float32, g*hd)
				attnWeightedSumGroupGo(goOut, w, cache[off:], hd, span, stride)
				headOut := make([]float32, hd)
				for j := range g {
					AttnWeightedSum(headOut, w[j*span:(j+1)*span], wide, stride, off)
					for i := range hd {
						var ref float64
						for p := range span {
							ref += float64(w[j*span+p]) * float64(wide[p*stride+off+i])
						}
						got := out[j*hd+i]
						if !near(float64(got), ref) || !near(float64(goOut[j*hd+i]), ref) || !near(float64(headOut[i]), ref) {
							t.Fatalf("%s: head %d out[%d] = %v (Go %v, per head %v), want %v", name, j, i, got, goOut[j*hd+i], headOut[i], ref)
						}
					}
				}
			}
		}
	}
}

// TestAttnGroupHeadIndependent checks that a head's scores and output are
// bit-identical whether it is computed alone or in any lane of a group of
// up to seven: decode stays deterministic only if nothing else in the
// group (or the group's size) leaks into a head's arithmetic.
func TestAttnGroupHeadIndependent(t *testing.T) {
	forEachAttnPath(t, testAttnGroupHeadIndependent)
}

func testAttnGroupHeadIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, hd := range []int{16, 48, 64, 128} {
		for _, span := range []int{1, 2, 5, 64, 131} {
			stride := 3 * hd
			cache := halfVector(r, span*stride)
			for g := 1; g <= 7; g++ {
				q, w := randomVector(r, g*hd), randomVector(r, g*span)
				scores, out := make([]float32, g*span), make([]float32, g*hd)
				AttnScoresGroup(scores, q, cache, cache, hd, span, stride, hd, 0.125)
				AttnWeightedSumGroup(out, w, cache, hd, span, stride, 2*hd)
				for j := range g {
					alone, aloneOut := make([]float32, span), make([]float32, hd)
					AttnScoresGroup(alone, q[j*hd:(j+1)*hd], cache, nil, hd, span, stride, hd, 0.125)
					AttnWeightedSumGroup(aloneOut, w[j*span:(j+1)*span], cache, hd, span, stride, 2*hd)
					for p := range span {
						if math.Float32bits(alone[p]) != math.Float32bits(scores[j*span+p]) {
							t.Fatalf("hd=%d span=%d g=%d head %d: score %d alone %v, in group %v", hd, span, g, j, p, alone[p], scores[j*span+p])
						}
					}
					for i := range hd {
						if math.Float32bits(aloneOut[i]) != math.Float32bits(out[j*hd+i]) {
							t.Fatalf("hd=%d span=%d g=%d head %d: out[%d] alone %v, in group %v", hd, span, g, j, i, aloneOut[i], out[j*hd+i])
						}
					}
				}
			}
		}
	}
}

// TestAttnGroupVectorFamiliesAgree checks that the vector families this CPU
// has (AVX-512 and AVX2) give bit-identical weighted sums, and scores within
// rounding of each other (the AVX-512 scores reduce their sums in another
// order), for head sizes of one to five blocks of sixteen values and every
// group size. A process runs one family for all its sequences, so the
// scores' last bits never depend on the batch.
func TestAttnGroupVectorFamiliesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, hd := range []int{16, 32, 48, 64, 80, 128} {
		for g := 1; g <= 7; g++ {
			for _, span := range []int{1, 4, 33, 130} {
				stride := 2*hd + 16
				cache := halfVector(r, span*stride)
				q, w := randomVector(r, g*hd), randomVector(r, g*span)
				var first string
				var firstScores, firstOut []float32
				for _, p := range attnPaths() {
					if p.skip != "" || p.name == "purego" {
						continue
					}
					restore := p.use()
					scores, out := make([]float32, g*span), make([]float32, g*hd)
					AttnScoresGroup(scores, q, cache, cache, hd, span, stride, 0, 0.125)
					AttnWeightedSumGroup(out, w, cache, hd, span, stride, hd)
					restore()
					if first == "" {
						first, firstScores, firstOut = p.name, scores, out
						continue
					}
					for i := range scores {
						if !near(float64(scores[i]), float64(firstScores[i])) {
							t.Fatalf("hd=%d g=%d span=%d: score %d is %v in %s, %v in %s", hd, g, span, i, scores[i], p.name, firstScores[i], first)
						}
					}
					for i := range out {
						if math.Float32bits(out[i]) != math.Float32bits(firstOut[i]) {
							t.Fatalf("hd=%d g=%d span=%d: out[%d] is %v in %s, %v in %s", hd, g, span, i, out[i], p.name, firstOut[i], first)
						}
					}
				}
			}
		}
	}
}

// TestAttnScoresGroupBlocks holds the score kernels of every path to a
// float64 reference for head sizes of one to sixteen blocks of sixteen
// values, group sizes up to fourteen (the passes of one, two, three and four
// heads and their mixes) and spans that leave every tail length of the
// eight- and four-position blocks, and checks the determinism decode relies
// on: a head's scores are the same bits alone as in its group, and a
// position's score is the same bits whatever the span (so a position scored
// in a last, partial block matches the full block's).
func TestAttnScoresGroupBlocks(t *testing.T) {
	forEachAttnPath(t, testAttnScoresGroupBlocks)
}

func testAttnScoresGroupBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	spans := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 23, 24, 25, 100, 101, 102, 103, 104, 105, 106, 107}
	const maxSpan = 107
	for _, hd := range []int{16, 32, 48, 64, 96, 128, 256} {
		stride := hd + 16
		cache := halfVector(r, (maxSpan-1)*stride+hd)
		wide := halfFloats(cache)
		for _, g := range []int{1, 2, 3, 4, 5, 6, 7, 9, 14} {
			q := randomVector(r, g*hd)
			full := make([]float32, g*maxSpan)
			AttnScoresGroup(full, q, cache, cache, hd, maxSpan, stride, 0, 0.125)
			alone := make([][]float32, g)
			for j := range g {
				alone[j] = make([]float32, maxSpan)
				AttnScoresGroup(alone[j], q[j*hd:(j+1)*hd], cache, nil, hd, maxSpan, stride, 0, 0.125)
			}
			for _, span := range spans {
				name := fmt.Sprintf("hd=%d/g=%d/span=%d", hd, g, span)
				scores := withGuard(g * span)
				AttnScoresGroup(scores, q, cache, cache, hd, span, stride, 0, 0.125)
				checkGuard(t, name, scores)
				for j := range g {
					for p := range span {
						var ref float64
						for i := range hd {
							ref += float64(q[j*hd+i]) * float64(wide[p*stride+i])
						}
						ref *= 0.125
						got := scores[j*span+p]
						if !near(float64(got), ref) {
							t.Fatalf("%s: head %d score %d = %v, want %v", name, j, p, got, ref)
						}
						if math.Float32bits(got) != math.Float32bits(full[j*maxSpan+p]) {
							t.Fatalf("%s: head %d score %d = %v, %v over span %d", name, j, p, got, full[j*maxSpan+p], maxSpan)
						}
						if math.Float32bits(got) != math.Float32bits(alone[j][p]) {
							t.Fatalf("%s: head %d score %d = %v in the group, %v alone", name, j, p, got, alone[j][p])
						}
					}
				}
			}
		}
	}
}

// TestFloatsToHalvesMatchesFloatToHalf holds the vector conversion to the
// scalar one bit for bit, over normal, subnormal, overflowing and infinite
// values and every tail length.
func TestFloatsToHalvesMatchesFloatToHalf(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	specials := []float32{0, float32(math.Copysign(0, -1)), 65504, 65519.99, 65520, -70000, 6e-8, 3e-8, -1e-5, 1e-40,
		float32(math.Inf(1)), float32(math.Inf(-1)), 1.00048828125, 1.000732421875}
	for n := 0; n <= 41; n++ {
		src := make([]float32, n)
		for i := range src {
			switch i % 3 {
			case 0:
				src[i] = specials[r.IntN(len(specials))]
			case 1:
				src[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-24)))
			default:
				src[i] = float32(r.NormFloat64())
			}
		}
		dst := make([]uint16, n+4)
		for i := range dst {
			dst[i] = 0xabcd
		}
		FloatsToHalves(dst[:n], src)
		for i, v := range src {
			if want := FloatToHalf(v); dst[i] != want {
				t.Fatalf("n=%d: %v → %#04x, want %#04x", n, v, dst[i], want)
			}
		}
		for i := n; i < len(dst); i++ {
			if dst[i] != 0xabcd {
				t.Fatalf("n=%d: wrote past the end at %d", n, i)
			}
		}
	}
	nan := []float32{float32(math.NaN()), 0, 0, 0, 0, 0, 0, 0}
	h := make([]uint16, len(nan))
	FloatsToHalves(h, nan)
	if f := HalfToFloat(h[0]); f == f {
		t.Errorf("NaN converted to %v", f)
	}
}

// BenchmarkAttnGroup compares, within one run, one KV group's attention
// (scores, softmax, weighted sum for g query heads over 320 cached
// positions, head size 64) done head by head over a float32 cache, as
// decode did before, with the grouped kernels over a half-precision cache.
// g = 3 is SmolLM2-135M, g = 7 Qwen2.5-0.5B. The grouped kernels run in
// every family this CPU has, side by side.
func BenchmarkAttnGroup(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 3))
	const hd, span, stride = 64, 320, 192
	keys, values := randomVector(r, span*stride), randomVector(r, span*stride)
	hkeys, hvalues := make([]uint16, len(keys)), make([]uint16, len(values))
	FloatsToHalves(hkeys, keys)
	FloatsToHalves(hvalues, values)
	for _, g := range []int{1, 3, 7} {
		q, out := randomVector(r, g*hd), make([]float32, g*hd)
		scores := make([]float32, g*span)
		b.Run(fmt.Sprintf("g=%d/f32-per-head", g), func(b *testing.B) {
			for b.Loop() {
				for j := range g {
					sc := scores[j*span : (j+1)*span]
					AttnScores(sc, q[j*hd:(j+1)*hd], keys, stride, 64, 0.125)
					Softmax(sc)
					AttnWeightedSum(out[j*hd:(j+1)*hd], sc, values, stride, 64)
				}
			}
		})
		for _, p := range attnPaths() {
			if p.skip != "" {
				continue
			}
			b.Run(fmt.Sprintf("g=%d/f16-grouped-%s", g, p.name), func(b *testing.B) {
				defer p.use()()
				for b.Loop() {
					AttnScoresGroup(scores, q, hkeys, hvalues, hd, span, stride, 64, 0.125)
					for j := range g {
						Softmax(scores[j*span : (j+1)*span])
					}
					AttnWeightedSumGroup(out, scores, hvalues, hd, span, stride, 64)
				}
			})
		}
	}
}

// BenchmarkAttnScoresGroup times the scores alone, in every vector family
// this CPU has, for the shapes of the three models: one head of 48 values
// (stories15M), three heads of 64 (SmolLM2-135M) and seven of 64
// (Qwen2.5-0.5B), over 320 cached positions (and 323, a partial last
// block) in a head-major cache, the value rows beside the keys.
func BenchmarkAttnScoresGroup(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 5))
	for _, c := range []struct{ hd, g, span int }{{48, 1, 320}, {64, 3, 320}, {64, 3, 323}, {64, 7, 320}} {
		keys, values := halfVector(r, c.span*c.hd), halfVector(r, c.span*c.hd)
		q, scores := randomVector(r, c.g*c.hd), make([]float32, c.g*c.span)
		for _, p := range attnPaths() {
			if p.skip != "" || p.name == "purego" {
				continue
			}
			b.Run(fmt.Sprintf("hd=%d/g=%d/span=%d/%s", c.hd, c.g, c.span, p.name), func(b *testing.B) {
				defer p.use()()
				for b.Loop() {
					AttnScoresGroup(scores, q, keys, values, c.hd, c.span, c.hd, 0, 0.125)
				}
			})
		}
	}
}

// BenchmarkAttnDecodeStep measures the attention of one batched decode step
// of ten streams at 320 cached positions: every layer's cache of every
// sequence once, far more than the L3 cache holds, as in the engine. It
// compares, in one run, the per-head kernels over a position-major float32
// cache (as decode did before) with the grouped kernels over a head-major
// half-precision cache (as the model keeps it now), for SmolLM2-135M (30
// layers, 9 query heads over 3 KV heads) and Qwen2.5-0.5B (24 layers, 14
// over 2).
func BenchmarkAttnDecodeStep(b *testing.B) {
	const hd, span, seqs = 64, 320, 10
	for _, shape := range []struct {
		name               string
		layers, kvHeads, g int
	}{{"135m", 30, 3, 3}, {"0.5b", 24, 2, 7}} {
		r := rand.New(rand.NewPCG(1, 4))
		stride := shape.kvHeads * hd
		caches := seqs * shape.layers
		keys, values := make([][]float32, caches), make([][]float32, caches)
		hkeys, hvalues := make([][]uint16, caches), make([][]uint16, caches)
		for i := range caches {
			keys[i], values[i] = randomVector(r, span*stride), randomVector(r, span*stride)
			hkeys[i], hvalues[i] = make([]uint16, span*stride), make([]uint16, span*stride)
			FloatsToHalves(hkeys[i], keys[i])
			FloatsToHalves(hvalues[i], values[i])
		}
		g := shape.g
		q, out := randomVector(r, g*hd), make([]float32, g*hd)
		scores := make([]float32, g*span)
		b.Run(shape.name+"/f32-per-head", func(b *testing.B) {
			for b.Loop() {
				for i := range caches {
					for kv := range shape.kvHeads {
						for j := range g {
							sc := scores[j*span : (j+1)*span]
							AttnScores(sc, q[j*hd:(j+1)*hd], keys[i], stride, kv*hd, 0.125)
							Softmax(sc)
							AttnWeightedSum(out[j*hd:(j+1)*hd], sc, values[i], stride, kv*hd)
						}
					}
				}
			}
		})
		b.Run(shape.name+"/f16-grouped", func(b *testing.B) {
			for b.Loop() {
				for i := range caches {
					for kv := range shape.kvHeads {
						AttnScoresGroup(scores, q, hkeys[i], hvalues[i], hd, span, hd, kv*span*hd, 0.125)
						for j := range g {
							Softmax(scores[j*span : (j+1)*span])
						}
						AttnWeightedSumGroup(out, scores, hvalues[i], hd, span, hd, kv*span*hd)
					}
				}
			}
		})
	}
}

// BenchmarkAttnWeightedSumGroup times the weighted sums alone, in every
// vector family this CPU has, for one head of 48 values (stories15M, where
// the AVX-512 family has a one-head kernel of its own) and three heads of
// 64 (SmolLM2-135M), over 320 cached positions.
func BenchmarkAttnWeightedSumGroup(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 6))
	for _, c := range []struct{ hd, g, span int }{{48, 1, 320}, {64, 1, 320}, {64, 3, 320}} {
		values := halfVector(r, c.span*c.hd)
		w, out := randomVector(r, c.g*c.span), make([]float32, c.g*c.hd)
		for _, p := range attnPaths() {
			if p.skip != "" || p.name == "purego" {
				continue
			}
			b.Run(fmt.Sprintf("hd=%d/g=%d/span=%d/%s", c.hd, c.g, c.span, p.name), func(b *testing.B) {
				defer p.use()()
				for b.Loop() {
					AttnWeightedSumGroup(out, w, values, c.hd, c.span, c.hd, 0)
				}
			})
		}
	}
}
