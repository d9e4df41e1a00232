//go:build !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// BenchmarkTileKernel times one tile kernel call on cache-resident data
// (one 576-value row, one to ten tokens) and reports the
// multiply-adds per nanosecond of one core, the kernels' compute ceiling:
// per nanosecond of wall time and, where the OS tells, of the thread's CPU
// time, which on the shared development machine is the steadier figure.
// Where the CPU has AVX-512 VNNI each kernel runs in both families, AVX2
// then VNNI, so one run (-count n repeats the pairs) compares them.
func BenchmarkTileKernel(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(51, 52))
	const cols = 576
	families := []bool{false}
	if cpuVNNI {
		families = append(families, true)
	}
	for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
		rows := append(randomRow(r, typ, cols), randomRow(r, typ, cols)...)
		rb := len(rows) / 2
		type kernel struct {
			name        string
			fn          tileKernel
			biased      bool
			nRow, nToks int
		}
		var ks []kernel
		for n := maxTileTokens; n >= 1; n-- {
			for _, biased := range families {
				if biased && n == 1 {
					continue // one token always takes the AVX2 kernel
				}
				name := fmt.Sprintf("1x%d/avx2", n)
				if biased {
					name = fmt.Sprintf("1x%d/vnni", n)
				}
				ks = append(ks, kernel{name, tileKernels(typ, biased)[n], biased, 1, n})
			}
		}
		for _, k := range ks {
			var p q8Tiles
			p.prepareBiased(randomVector(r, k.nToks*cols), cols, k.nToks, k.biased)
			b.Run(fmt.Sprintf("%v/%s", typ, k.name), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var out [2 * maxTileTokens]float32
				cpu0 := threadCPU()
				for b.Loop() {
					k.fn(&rows[0], rb, &p.qs[0], &p.d[0], &p.cq[0], p.nb, &out[0], 8, 1)
				}
				macs := float64(k.nRow*k.nToks*cols) * float64(b.N)
				b.ReportMetric(macs/float64(b.Elapsed().Nanoseconds()), "MAC/ns")
				if cpu := threadCPU() - cpu0; cpu > 0 {
					b.ReportMetric(macs/float64(cpu.Nanoseconds()), "MAC/cpu-ns")
				}
			})
		}
		// The one-token row dot on two rows, for comparison with 1x1.
		one := rowDotFor(typ)
		var a activation
		a.prepare(actQ8_0, randomVector(r, cols))
		b.Run(fmt.Sprintf("%v/rowdot-2x1", typ), func(b *testing.B) {
			var sink float32
			for b.Loop() {
				sink += one(rows[:rb], &a) + one(rows[rb:], &a)
			}
			_ = sink
			b.ReportMetric(float64(2*cols)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "MAC/ns")
		})
	}
}

// BenchmarkKQuantKernel times the Q4_K and Q6_K products of one and four
// tokens on a cache-resident 1536-value row, AVX2 and (where the CPU has
// it) VNNI block kernels side by side, in multiply-adds per ns of wall
// time and of thread CPU time.
func BenchmarkKQuantKernel(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(53, 54))
	const cols = 1536
	families := []bool{false}
	if cpuVNNI {
		families = append(families, true)
	}
	for _, typ := range []gguf.GGMLType{gguf.Q4_K, gguf.Q6_K} {
		row := randomRow(r, typ, cols)
		acts := make([]activation, 4)
		for i := range acts {
			acts[i].prepare(activationKind(typ), randomVector(r, cols))
		}
		one, four := rowDotFor(typ), rowDot4For(typ)
		for _, tokens := range []int{1, 4} {
			for _, vnni := range families {
				name := fmt.Sprintf("%v/x%d/avx2", typ, tokens)
				if vnni {
					name = fmt.Sprintf("%v/x%d/vnni", typ, tokens)
				}
				b.Run(name, func(b *testing.B) {
					defer func(v bool) { kquantVNNI = v }(kquantVNNI)
					kquantVNNI = vnni
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					var out [4]float32
					cpu0 := threadCPU()
					for b.Loop() {
						if tokens == 1 {
							out[0] += one(row, &acts[0])
						} else {
							out = four(row, acts)
						}
					}
					macs := float64(tokens*cols) * float64(b.N)
					b.ReportMetric(macs/float64(b.Elapsed().Nanoseconds()), "MAC/ns")
					if cpu := threadCPU() - cpu0; cpu > 0 {
						b.ReportMetric(macs/float64(cpu.Nanoseconds()), "MAC/cpu-ns")
					}
				})
			}
		}
	}
}
