package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// q8GoPath runs attention over the int8 cache in the Go kernels.
func q8GoPath() attnPath {
	return attnPath{name: "purego", use: func() func() {
		s, w, a, q := attnScoresQ8Vec, attnWeightedSumQ8Vec, kvAbsMaxVec, kvQuantizeVec
		kb, bs, vb, vs := keyBlocks, blockScoresVec, valueBlocks, blockSumsVec
		attnScoresQ8Vec, attnWeightedSumQ8Vec, kvAbsMaxVec, kvQuantizeVec = nil, nil, nil, nil
		keyBlocks, blockScoresVec, valueBlocks, blockSumsVec = false, false, false, false
		return func() {
			attnScoresQ8Vec, attnWeightedSumQ8Vec, kvAbsMaxVec, kvQuantizeVec = s, w, a, q
			keyBlocks, blockScoresVec, valueBlocks, blockSumsVec = kb, bs, vb, vs
		}
	}}
}

// forEachQ8Path runs fn once per path of q8Paths as a subtest, as
// forEachAttnPath does for the half-precision cache.
func forEachQ8Path(t *testing.T, fn func(t *testing.T)) {
	for _, p := range q8Paths() {
		t.Run(p.name, func(t *testing.T) {
			if p.skip != "" {
				t.Skip(p.skip)
			}
			defer p.use()()
			fn(t)
		})
	}
}

// q8Cache returns span random head rows of hd values quantised as the model
// stores them, and their dequantised values.
func q8Cache(r *rand.Rand, span, hd int) ([]int8, []float32, []float32) {
	q, s, wide := make([]int8, span*hd), make([]float32, span), make([]float32, span*hd)
	for p := range span {
		row := randomVector(r, hd)
		s[p] = QuantizeKVRow(q[p*hd:(p+1)*hd], row)
		for i := range hd {
			wide[p*hd+i] = s[p] * float32(q[p*hd+i])
		}
	}
	return q, s, wide
}

// q8KeyCache returns span random key rows of hd values stored as the model
// stores them (StoreKeyQ8, in the layout of the kernels in use, in whole
// blocks), their scales and their dequantised values, row-major.
func q8KeyCache(r *rand.Rand, span, hd int) ([]int8, []float32, []float32) {
	n := KVCapacity(span)
	k, s, wide := make([]int8, n*hd), make([]float32, n), make([]float32, span*hd)
	for p := range span {
		StoreKeyQ8(k, s, p, randomVector(r, hd))
		for i := range hd {
			wide[p*hd+i] = s[p] * float32(keyQ8(k, hd, p, i))
		}
	}
	return k, s, wide
}

// queryAsKernelSees is q as the score kernels multiply it: rounded to
// int16 per head (and back) by the AVX2 family's integer kernels, itself in
// the Go ones over row-major keys, rounded to int8 per block of 32 values
// (and back) over blocked ones.
func queryAsKernelSees(q []float32, hd int) []float32 {
	if !blockedKeys(hd) {
		if attnScoresQ8Vec == nil || kvQuantize16Vec == nil || hd%groupVecMinDim != 0 || hd > q8I16MaxDim {
			return q
		}
		// The AVX2 family's integer scores: each head rounded to int16.
		var qq queryI16
		qq.set(q, hd, 1)
		out := make([]float32, len(q))
		for i, v := range qq.q {
			out[i] = qq.m[i/hd] * float32(v)
		}
		return out
	}
	out, qi := make([]float32, len(q)), make([]int8, queryBlock)
	for j := range len(q) / hd {
		for b := 0; b < hd; b += queryBlock {
			lo, hi := j*hd+b, j*hd+min(b+queryBlock, hd)
			d := QuantizeKVRow(qi[:hi-lo], q[lo:hi])
			for i, v := range qi[:hi-lo] {
				out[lo+i] = d * float32(v)
			}
		}
	}
	return out
}

// TestQuantizeKVRow checks the round trip of a row to half a step of its
// scale, zero rows, and that a NaN reaches the scale.
func TestQuantizeKVRow(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, hd := range []int{16, 48, 64, 128} {
		src, dst := randomVector(r, hd), make([]int8, hd)
		src[3] *= 40
		d := QuantizeKVRow(dst, src)
		for i, v := range src {
			if math.Abs(float64(v-d*float32(dst[i]))) > 0.5001*float64(d) {
				t.Fatalf("hd=%d: value %d is %v, stored as %d × %v", hd, i, v, dst[i], d)
			}
		}
	}
	if d := QuantizeKVRow(make([]int8, 16), make([]float32, 16)); d != 0 {
		t.Fatalf("zero row: scale %v", d)
	}
	row := make([]float32, 16)
	row[5] = float32(math.NaN())
	if d := QuantizeKVRow(make([]int8, 16), row); d == d {
		t.Fatalf("NaN row: scale %v", d)
	}
}

// TestQuantizeKVRowVectorMatchesGo holds the vector conversion of rows to
// the Go loop bit for bit (values and scale), over random rows of every
// vector size, rows with a NaN or an infinity at every place of a block,
// zero rows and rows of a single value.
func TestQuantizeKVRowVectorMatchesGo(t *testing.T) {
	forEachQ8Path(t, testQuantizeKVRowVectorMatchesGo)
}

func testQuantizeKVRowVectorMatchesGo(t *testing.T) {
	if kvAbsMaxVec == nil {
		t.Skip("no vector conversion on this path")
	}
	r := rand.New(rand.NewPCG(45, 46))
	var rows [][]float32
	for _, hd := range []int{16, 32, 48, 64, 128, 256} {
		for range 20 {
			row := randomVector(r, hd)
			for i := range row {
				row[i] *= float32(math.Exp(4 * r.NormFloat64()))
			}
			rows = append(rows, row)
		}
		rows = append(rows, make([]float32, hd))
		one := make([]float32, hd)
		one[hd-1] = -3
		rows = append(rows, one)
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		for at := range 32 {
			row := randomVector(r, 48)
			row[at] = bad
			rows = append(rows, row)
		}
	}
	for n, row := range rows {
		got, want := make([]int8, len(row)), make([]int8, len(row))
		gd := QuantizeKVRow(got, row)
		restore := q8GoPath().use()
		wd := QuantizeKVRow(want, row)
		restore()
		if math.Float32bits(gd) != math.Float32bits(wd) && !(gd != gd && wd != wd) {
			t.Fatalf("row %d (%d values): scale %v, Go %v", n, len(row), gd, wd)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("row %d (%d values): %v, Go %v", n, len(row), got, want)
		}
	}
}

// TestAttnQ8MatchesReference holds every path's scores and weighted sums
// over the int8 cache to a float64 reference over the dequantised rows, and
// checks what decode relies on: a head's results are the same bits alone
// as in its group, and a position's score the same bits whatever the span
// (a lone last position against a block of four).
func TestAttnQ8MatchesReference(t *testing.T) {
	forEachQ8Path(t, testAttnQ8MatchesReference)
}

func testAttnQ8MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const maxSpan = 37
	for _, hd := range []int{16, 32, 48, 64, 80, 128} {
		keys, ks, wideK := q8KeyCache(r, maxSpan, hd)
		values, vs, wideV := q8Cache(r, maxSpan, hd)
		for _, g := range []int{1, 2, 3, 4, 5, 7} {
			q := randomVector(r, g*hd)
			qk := queryAsKernelSees(q, hd)
			full := make([]float32, g*maxSpan)
			AttnScoresGroupQ8(full, q, keys, ks, values, hd, 0, maxSpan, 0.125)
			for _, span := range []int{1, 2, 3, 4, 5, 8, 9, 31, maxSpan} {
				name := fmt.Sprintf("hd=%d/g=%d/span=%d", hd, g, span)
				scores := withGuard(g * span)
				AttnScoresGroupQ8(scores, q, keys, ks, values, hd, 0, span, 0.125)
				checkGuard(t, name, scores)
				// The same positions from every start (a chunk of a long
				// row): the same bits as from position zero.
				for _, from := range []int{1, 5, 15, 16, 17} {
					if from+span > maxSpan {
						continue
					}
					part := withGuard(g * span)
					AttnScoresGroupQ8(part, q, keys, ks, values, hd, from, span, 0.125)
					checkGuard(t, name, part)
					for j := range g {
						for p := range span {
							if a, b := part[j*span+p], full[j*maxSpan+from+p]; math.Float32bits(a) != math.Float32bits(b) {
								t.Fatalf("%s: head %d position %d from %d = %v, from 0 %v", name, j, from+p, from, a, b)
							}
						}
					}
				}
				checkGuard(t, name, scores)
				w := randomVector(r, g*span)
				out := make([]float32, g*hd)
				AttnWeightedSumGroupQ8(out, w, values, vs, hd, span)
				for j := range g {
					alone, aloneOut := make([]float32, span), make([]float32, hd)
					AttnScoresGroupQ8(alone, q[j*hd:(j+1)*hd], keys, ks, nil, hd, 0, span, 0.125)
					AttnWeightedSumGroupQ8(aloneOut, w[j*span:(j+1)*span], values, vs, hd, span)
					for p := range span {
						var ref float64
						for i := range hd {
							ref += float64(qk[j*hd+i]) * float64(wideK[p*hd+i])
						}
						ref *= 0.125
						got := scores[j*span+p]
						if !near(float64(got), ref) {
							t.Fatalf("%s: head %d score %d = %v, want %v", name, j, p, got, ref)
						}
						if math.Float32bits(got) != math.Float32bits(full[j*maxSpan+p]) || math.Float32bits(got) != math.Float32bits(alone[p]) {
							t.Fatalf("%s: head %d score %d = %v, over span %d %v, alone %v", name, j, p, got, maxSpan, full[j*maxSpan+p], alone[p])
						}
					}
					for i := range hd {
						var ref float64
						for p := range span {
							ref += float64(w[j*span+p]) * float64(wideV[p*hd+i])
						}
						got := out[j*hd+i]
						if !near(float64(got), ref) {
							t.Fatalf("%s: head %d out[%d] = %v, want %v", name, j, i, got, ref)
						}
						if math.Float32bits(got) != math.Float32bits(aloneOut[i]) {
							t.Fatalf("%s: head %d out[%d] = %v in the group, %v alone", name, j, i, got, aloneOut[i])
						}
					}
				}
			}
		}
	}
}

// TestAttnQ8LongSpans holds the weighted sums over spans longer than one
// call of the AVX2 kernels takes (q8SumChunk positions) to the float64
// reference, and a head's output in its group to the same head alone, on
// every path: the chunks must continue each sum, not restart it.
func TestAttnQ8LongSpans(t *testing.T) {
	forEachQ8Path(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(47, 48))
		for _, c := range []struct{ hd, g, span int }{
			{48, 1, 256}, {48, 1, 257}, {48, 6, 600}, {64, 3, 263}, {64, 3, 777}, {16, 2, 513},
		} {
			values, vs, wide := q8Cache(r, c.span, c.hd)
			w := randomVector(r, c.g*c.span)
			for i := range w {
				w[i] = abs32(w[i]) / float32(c.span)
			}
			out := make([]float32, c.g*c.hd)
			AttnWeightedSumGroupQ8(out, w, values, vs, c.hd, c.span)
			for j := range c.g {
				alone := make([]float32, c.hd)
				AttnWeightedSumGroupQ8(alone, w[j*c.span:(j+1)*c.span], values, vs, c.hd, c.span)
				for i := range c.hd {
					var ref float64
					for p := range c.span {
						ref += float64(w[j*c.span+p]) * float64(wide[p*c.hd+i])
					}
					got := out[j*c.hd+i]
					if !near(float64(got), ref) {
						t.Fatalf("%+v: head %d out[%d] = %v, want %v", c, j, i, got, ref)
					}
					if math.Float32bits(got) != math.Float32bits(alone[i]) {
						t.Fatalf("%+v: head %d out[%d] = %v in the group, %v alone", c, j, i, got, alone[i])
					}
				}
			}
		}
	})
}

// BenchmarkAttnQ8 times scores, softmax and weighted sum of one KV group
// over 320 cached positions (cache-resident) for the shapes of stories15M
// (one head of 48) and SmolLM2-135M (three heads of 64), over the int8 cache
// and the half-precision one side by side (see sideBySide).
func BenchmarkAttnQ8(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 7))
	for _, c := range []struct{ hd, g, span int }{{48, 1, 320}, {64, 3, 320}} {
		keys, ks, _ := q8KeyCache(r, c.span, c.hd)
		values, vs, _ := q8Cache(r, c.span, c.hd)
		hk, hv := halfVector(r, c.span*c.hd), halfVector(r, c.span*c.hd)
		q, out := randomVector(r, c.g*c.hd), make([]float32, c.g*c.hd)
		scores := make([]float32, c.g*c.span)
		b.Run(fmt.Sprintf("hd=%d/g=%d", c.hd, c.g), func(b *testing.B) {
			sideBySide(b, []string{"q8", "f16"}, func() {
				AttnScoresGroupQ8(scores, q, keys, ks, values, c.hd, 0, c.span, 0.125)
				for j := range c.g {
					Softmax(scores[j*c.span : (j+1)*c.span])
				}
				AttnWeightedSumGroupQ8(out, scores, values, vs, c.hd, c.span)
			}, func() {
				AttnScoresGroup(scores, q, hk, hv, c.hd, c.span, c.hd, 0, 0.125)
				for j := range c.g {
					Softmax(scores[j*c.span : (j+1)*c.span])
				}
				AttnWeightedSumGroup(out, scores, hv, c.hd, c.span, c.hd, 0)
			})
		})
	}
}

// sideBySide runs the variants fns alternately, one call of each per
// iteration, so that all of them meet the same load on a shared machine,
// and reports each one's median time per call (ns-NAME) and the first's
// time over the others' medians (NAME÷NAME).
func sideBySide(b *testing.B, names []string, fns ...func()) {
	b.Helper()
	times := make([][]time.Duration, len(fns))
	for b.Loop() {
		for i, f := range fns {
			t0 := time.Now()
			f()
			times[i] = append(times[i], time.Since(t0))
		}
	}
	med := make([]float64, len(fns))
	for i, t := range times {
		slices.Sort(t)
		med[i] = float64(t[len(t)/2].Nanoseconds())
		b.ReportMetric(med[i], "ns-"+names[i])
	}
	for i := 1; i < len(fns); i++ {
		b.ReportMetric(med[0]/med[i], names[0]+"÷"+names[i])
	}
}

// BenchmarkQuantizeKVRow converts one head row of 48 and of 64 values into
// the int8 cache, in the vector kernels and in Go.
func BenchmarkQuantizeKVRow(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 8))
	for _, hd := range []int{48, 64} {
		row, dst := randomVector(r, hd), make([]int8, hd)
		b.Run(fmt.Sprintf("hd=%d/vector", hd), func(b *testing.B) {
			if kvAbsMaxVec == nil {
				b.Skip("no vector conversion on this CPU")
			}
			for b.Loop() {
				QuantizeKVRow(dst, row)
			}
		})
		b.Run(fmt.Sprintf("hd=%d/purego", hd), func(b *testing.B) {
			am, qv := kvAbsMaxVec, kvQuantizeVec
			kvAbsMaxVec, kvQuantizeVec = nil, nil
			defer func() { kvAbsMaxVec, kvQuantizeVec = am, qv }()
			for b.Loop() {
				QuantizeKVRow(dst, row)
			}
		})
	}
}

// attnStepShapes are the attention shapes of the decode-step benchmarks:
// stories15M (6 layers, 6 heads of 48, no grouping) and SmolLM2-135M (30
// layers, 9 query heads over 3 KV heads of 64).
var attnStepShapes = []struct {
	name                   string
	layers, kvHeads, g, hd int
}{{"15m", 6, 6, 1, 48}, {"135m", 30, 3, 3, 64}}

// BenchmarkAttnQ8DecodeStep measures the attention of one batched decode
// step of ten streams at 320 cached positions over the int8 and the
// half-precision cache side by side, every layer's cache of every sequence once (more
// than the L2 caches hold, as in the engine), on one goroutine: stories15M
// (6 layers, 6 heads of 48, no grouping) and SmolLM2-135M (30 layers, 9
// query heads over 3 KV heads of 64).
func BenchmarkAttnQ8DecodeStep(b *testing.B) {
	const span, seqs = 320, 10
	for _, shape := range attnStepShapes {
		r := rand.New(rand.NewPCG(1, 9))
		hd, g := shape.hd, shape.g
		caches := seqs * shape.layers * shape.kvHeads
		k8, v8 := make([][]int8, caches), make([][]int8, caches)
		ks, vs := make([][]float32, caches), make([][]float32, caches)
		k16, v16 := make([][]uint16, caches), make([][]uint16, caches)
		for i := range caches {
			k8[i], ks[i], _ = q8KeyCache(r, span, hd)
			v8[i], vs[i], _ = q8Cache(r, span, hd)
			k16[i], v16[i] = halfVector(r, span*hd), halfVector(r, span*hd)
		}
		q, out := randomVector(r, g*hd), make([]float32, g*hd)
		scores := make([]float32, g*span)
		b.Run(shape.name, func(b *testing.B) {
			sideBySide(b, []string{"q8", "f16"}, func() {
				for i := range caches {
					AttnScoresGroupQ8(scores, q, k8[i], ks[i], v8[i], hd, 0, span, 0.125)
					for j := range g {
						Softmax(scores[j*span : (j+1)*span])
					}
					AttnWeightedSumGroupQ8(out, scores, v8[i], vs[i], hd, span)
				}
			}, func() {
				for i := range caches {
					AttnScoresGroup(scores, q, k16[i], v16[i], hd, span, hd, 0, 0.125)
					for j := range g {
						Softmax(scores[j*span : (j+1)*span])
					}
					AttnWeightedSumGroup(out, scores, v16[i], hd, span, hd, 0)
				}
			})
		})
	}
}
