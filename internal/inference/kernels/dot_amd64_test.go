//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"partnerapi/internal/inference/gguf"
)

func TestAsmMatchesGo(t *testing.T) {
	if !hasAVX2 {
		t.Skip("CPU lacks AVX2/FMA/F16C; the Go kernels are in use")
	}
	r := rand.New(rand.NewPCG(11, 12))
	cases := []struct {
		typ      gguf.GGMLType
		asm, ref rowDot
		sizes    []int // values per row
	}{
		{gguf.F32, dotF32Asm, dotF32Go, []int{1, 7, 8, 9, 31, 32, 33, 100, 4099}},
		{gguf.F16, dotF16Asm, dotF16Go, []int{1, 7, 8, 9, 31, 32, 33, 100, 4099}},
		{gguf.Q8_0, dotQ8_0Asm, dotQ8_0Go, []int{32, 64, 96, 160, 1056, 4864}},
		{gguf.Q4_0, dotQ4_0Asm, dotQ4_0Go, []int{32, 64, 96, 160, 1056, 4864}},
		{gguf.Q4_K, dotQ4KAsm, dotQ4KGo, []int{256, 512, 768, 1280, 4864}},
		{gguf.Q6_K, dotQ6KAsm, dotQ6KGo, []int{256, 512, 768, 1280, 4864}},
	}
	for _, c := range cases {
		for _, n := range c.sizes {
			t.Run(fmt.Sprintf("%v/%d", c.typ, n), func(t *testing.T) {
				for trial := 0; trial < 5; trial++ {
					row := randomRow(r, c.typ, n)
					x := randomVector(r, n)
					var a activation
					a.prepare(activationKind(c.typ), x)
					got, want := c.asm(row, &a), c.ref(row, &a)
					// Integer parts are exact; only float summation order
					// differs, so bound the error by the magnitude of the terms.
					deq := make([]float32, n)
					DequantizeRow(deq, c.typ, row)
					mag := termMagnitude(deq, x)
					if d := math.Abs(float64(got - want)); d > 1e-5*mag+1e-6 {
						t.Fatalf("asm %v, go %v (|diff| %g, Σ|terms| %g)", got, want, d, mag)
					}
				}
			})
		}
	}
	// Four-token kernels against four calls of the one-token assembly: the
	// same integer sums and float steps, so equal bit for bit.
	for _, c := range []struct {
		typ  gguf.GGMLType
		asm  rowDot4
		ref  rowDot
		size int
	}{
		{gguf.Q4_K, dotQ4Kx4Asm, dotQ4KAsm, 256}, {gguf.Q4_K, dotQ4Kx4Asm, dotQ4KAsm, 4864 / 256 * 256},
		{gguf.Q6_K, dotQ6Kx4Asm, dotQ6KAsm, 256}, {gguf.Q6_K, dotQ6Kx4Asm, dotQ6KAsm, 4864 / 256 * 256},
		{gguf.F16, dotF16x4Asm, dotF16Asm, 1}, {gguf.F16, dotF16x4Asm, dotF16Asm, 7}, {gguf.F16, dotF16x4Asm, dotF16Asm, 8},
		{gguf.F16, dotF16x4Asm, dotF16Asm, 23}, {gguf.F16, dotF16x4Asm, dotF16Asm, 40}, {gguf.F16, dotF16x4Asm, dotF16Asm, 4099},
	} {
		row := randomRow(r, c.typ, c.size)
		acts := make([]activation, 4)
		for i := range acts {
			acts[i].prepare(activationKind(c.typ), randomVector(r, c.size))
		}
		out := c.asm(row, acts)
		for i := range acts {
			if want := c.ref(row, &acts[i]); math.Float32bits(out[i]) != math.Float32bits(want) {
				t.Errorf("%v x4 n=%d token %d: %v, one-token kernel %v", c.typ, c.size, i, out[i], want)
			}
		}
	}
	// The two-row F16 tile and the four-token F32 dot against the
	// one-token assembly, row by row, where the CPU has AVX-512VL: equal
	// bit for bit, every tail length.
	if cpuVNNI {
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 40, 577, 4099} {
			row0, row1 := randomRow(r, gguf.F16, n), randomRow(r, gguf.F16, n)
			acts := make([]activation, 4)
			for i := range acts {
				acts[i].prepare(actFloat, randomVector(r, n))
			}
			out := dotF16x2x4Asm(row0, row1, acts)
			f32 := randomRow(r, gguf.F32, n)
			for i, got := range dotF32x4Asm(f32, acts) {
				if want := dotF32Asm(f32, &acts[i]); math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("F32 x4 n=%d token %d: %v, one-token kernel %v", n, i, got, want)
				}
			}
			for i := range acts {
				for j, row := range [][]byte{row0, row1} {
					if got, want := out[4*j+i], dotF16Asm(row, &acts[i]); math.Float32bits(got) != math.Float32bits(want) {
						t.Errorf("F16 2x4 n=%d row %d token %d: %v, one-token kernel %v", n, j, i, got, want)
					}
				}
			}
		}
	}
	// The public float helpers go through the same assembly.
	for _, n := range []int{0, 1, 15, 33, 1000} {
		x, y := randomVector(r, n), randomVector(r, n+3)
		want := append([]float32(nil), y...)
		axpyF32Go(want, 0.7, x)
		AxpyF32(y, 0.7, x)
		for i := range y {
			// FMA rounds once where Go rounds twice: allow one ulp-ish.
			if math.Abs(float64(y[i]-want[i])) > 1e-6*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("AxpyF32 n=%d [%d]: %v vs %v", n, i, y[i], want[i])
			}
		}
	}
	for _, n := range []int{0, 1, 15, 33, 1000} {
		x, y := randomVector(r, n), randomVector(r, n)
		if got, want := DotF32(x, y), dotF32VecGo(x, y); math.Abs(float64(got-want)) > 1e-4*math.Sqrt(float64(n)+1) {
			t.Errorf("DotF32 n=%d: %v vs %v", n, got, want)
		}
		if got, want := SumF32(x), sumF32Go(x); math.Abs(float64(got-want)) > 1e-4*math.Sqrt(float64(n)+1) {
			t.Errorf("SumF32 n=%d: %v vs %v", n, got, want)
		}
	}
}

// BenchmarkRowDot reports each kernel's weight-streaming rate (GB/s of row
// bytes) for the asm and Go versions over a row set larger than L2 cache.
func BenchmarkRowDot(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	const n, rows = 4864, 256 // one 0.5B-class FFN row width
	for _, c := range []struct {
		typ      gguf.GGMLType
		asm, ref rowDot
	}{
		{gguf.F32, dotF32Asm, dotF32Go},
		{gguf.F16, dotF16Asm, dotF16Go},
		{gguf.Q8_0, dotQ8_0Asm, dotQ8_0Go},
		{gguf.Q4_0, dotQ4_0Asm, dotQ4_0Go},
		{gguf.Q4_K, dotQ4KAsm, dotQ4KGo},
		{gguf.Q6_K, dotQ6KAsm, dotQ6KGo},
	} {
		cols := n
		if c.typ.BlockSize() == QK_K {
			cols = 4864 / 256 * 256
		}
		data := randomRow(r, c.typ, cols*rows)
		rb := len(data) / rows
		var a activation
		a.prepare(activationKind(c.typ), randomVector(r, cols))
		impls := []struct {
			name string
			fn   rowDot
			vnni bool
		}{{"asm", c.asm, false}, {"go", c.ref, false}}
		if c.typ == gguf.Q4_K || c.typ == gguf.Q6_K {
			// The K-quant block kernels exist in AVX2 and VNNI forms.
			impls[0].name = "asm-avx2"
			if cpuVNNI {
				impls = append(impls[:1], append([]struct {
					name string
					fn   rowDot
					vnni bool
				}{{"asm-vnni", c.asm, true}}, impls[1:]...)...)
			}
		}
		for _, impl := range impls {
			if impl.name != "go" && !hasAVX2 {
				continue
			}
			b.Run(fmt.Sprintf("%v/%s", c.typ, impl.name), func(b *testing.B) {
				defer func(v bool) { kquantVNNI = v }(kquantVNNI)
				kquantVNNI = impl.vnni
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(len(data)))
				var sink float32
				cpu0 := threadCPU()
				for b.Loop() {
					for i := 0; i < rows; i++ {
						sink += impl.fn(data[i*rb:(i+1)*rb], &a)
					}
				}
				_ = sink
				bytes := float64(len(data)) * float64(b.N)
				b.ReportMetric(bytes/b.Elapsed().Seconds()/1e9, "GB/s")
				if cpu := threadCPU() - cpu0; cpu > 0 {
					b.ReportMetric(bytes/cpu.Seconds()/1e9, "GB/cpu-s")
				}
			})
		}
	}
}
