package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/kernels"
	"partnerapi/internal/inference/local"
	"partnerapi/internal/inference/model"
)

func init() { benchmarks["engine"] = runBenchEngine }

// engineShape is a real model's geometry (inference.md §8); the benchmark
// fills it with random weights because throughput does not depend on values.
type engineShape struct {
	name, arch                            string
	embd, ff, layers, heads, kvHeads, voc int
}

var engineShapes = []engineShape{
	{"15m", "llama", 288, 768, 6, 6, 6, 32000},
	{"135m", "llama", 576, 1536, 30, 9, 3, 49152},
	{"0.5b", "qwen2", 896, 4864, 24, 14, 2, 151936},
	// Llama-3.2-1B: widths that are multiples of 256, so the K-quant mixes
	// (q4_k_m, q3_k_m) are K-quants throughout, as in 1B-and-up files.
	{"1b", "llama", 2048, 8192, 16, 32, 8, 128256},
}

// engineResult is one case of `bench engine --json`.
type engineResult struct {
	Shape   string `json:"shape"`
	Quant   string `json:"quant"`
	Streams int    `json:"streams"`
	// PrefillTokS is every stream's prompt tokens over the time until the
	// last stream has its first token (with several streams, prompts are
	// prefilled a chunk at a time between the decode steps of the streams
	// already running).
	PrefillTokS float64 `json:"prefill_tok_s"`
	// DecodeTokS is the aggregate of all streams while every stream is in
	// the decode batch.
	DecodeTokS   float64 `json:"decode_tok_s"`
	BandwidthGBs float64 `json:"bandwidth_gb_s"`
	// RooflineFraction is decode steps per second against the memory
	// roofline as issue #8 defines it, bandwidth ÷ the weight bytes a step
	// reads (every weight once for all its streams): DecodeTokS / Streams ·
	// WeightBytesToken / bandwidth. It is the figure the goal (≥ 0.8) is
	// judged by.
	RooflineFraction float64 `json:"roofline_fraction"`
	// RooflineFractionKV is the same against the bytes a step really
	// reads, the weights plus each stream's own KV cache: DecodeTokS /
	// Streams · (WeightBytesToken + Streams · KVBytesToken) / bandwidth.
	// It is reported beside the goal's figure, not instead of it.
	RooflineFractionKV float64 `json:"roofline_fraction_with_kv"`
	// WeightBytesToken is the weight bytes a decode step reads (once for all
	// its streams).
	WeightBytesToken int64 `json:"weight_bytes_per_token"`
	// KVBytesToken is the KV cache bytes one stream's decode step reads,
	// averaged over the measured tokens (the cache grows by a position a
	// token): ~1.2 MB for a 15M stream at ~320 positions, 14 % of its
	// Q4_0 weights.
	KVBytesToken int64 `json:"kv_bytes_per_token"`
	// ProductMACsToken is the multiply-adds of a token's weight products
	// (every layer matrix and the output projection).
	ProductMACsToken int64 `json:"product_macs_per_token"`
	// ComputeCeilingTokS bounds decode by arithmetic instead of memory: the
	// multiply-adds per second MatMul reaches for Streams tokens on a
	// cache-resident matrix of the same type on all cores
	// (kernels.ProductProbe, measured in the run) ÷ ProductMACsToken. It
	// leaves out attention, norms and the step's serial work, so no
	// decode can reach it; with several streams (or weights that fit in
	// the last-level cache) it, not the memory roofline, is the wall.
	ComputeCeilingTokS float64 `json:"compute_ceiling_tok_s"`
	// ComputeFraction is DecodeTokS ÷ ComputeCeilingTokS.
	ComputeFraction float64 `json:"compute_fraction"`
	// CeilingOverOneStream, on a row of several streams when one stream
	// was measured in the same case, is ComputeCeilingTokS ÷ the one
	// stream's decode: the largest aggregate speed-up over one stream the
	// products alone allow (issue #8 asks ten streams for 3×).
	CeilingOverOneStream float64 `json:"ceiling_over_one_stream,omitempty"`
	AsmKernels           bool    `json:"asm_kernels"`
	// Kernels names the kernel family that ran (kernels.ISA: avx512-vnni,
	// avx2 or purego), which PARTNERAPI_KERNELS can force.
	Kernels string `json:"kernels"`
	// WeightPrefetch is where the Q8_0 packed kernels prefetch ("L1",
	// "L2", or "none" without them).
	WeightPrefetch string `json:"weight_prefetch"`
	// KVPrefetch is where the int8 KV cache's score kernels prefetch the
	// keys and values ("L1", "L2", or "none" without vector kernels).
	KVPrefetch string `json:"kv_prefetch"`
	// KVValues is the int8 value cache's layout ("blocks", "rows", or
	// "none" without vector kernels).
	KVValues string `json:"kv_values"`
	// Q4_0Unpack is how the packed Q4_0 kernels take a chunk's high nibbles:
	// "GFNI", "shift", or "none" without the AVX-512 VNNI kernels.
	Q4_0Unpack string `json:"q4_0_unpack"`
	// KVCache is the KV cache type (f16 or q8).
	KVCache string `json:"kv_cache"`
	// SplitThreshold is the work (multiply-adds) from which the worker pool
	// split a region in this run, and HandoffNs what splitting measured to
	// cost here (kernels.CalibrateSplit).
	SplitThreshold int     `json:"split_threshold"`
	HandoffNs      float64 `json:"handoff_ns"`
	// DeliveryLagP50Ms and DeliveryLagP99Ms are how long after the
	// scheduler drew a token its request's goroutine received it, over
	// every token of the case (the median of the repetitions): what a
	// streaming client waits on top of the decode itself.
	DeliveryLagP50Ms float64 `json:"delivery_lag_p50_ms"`
	DeliveryLagP99Ms float64 `json:"delivery_lag_p99_ms"`
	// JoinGapP99Ms and JoinGapMaxMs are the gaps between two tokens of a
	// running stream while the other streams' prompts were still being
	// prefilled in its steps (the 99th percentile and the longest, the
	// medians of the repetitions): what joining prompts cost the streams
	// already running (the scheduler's pacer bounds a busy step to 25 ms
	// or twice a decode-only one). Zero with one stream.
	JoinGapP99Ms float64 `json:"join_gap_p99_ms"`
	JoinGapMaxMs float64 `json:"join_gap_max_ms"`
	// DecodeFaultsStep is the process's minor page faults per decode step
	// of the window (the median of the repetitions): first touches of
	// memory the process had not used, each ~7–12 µs of kernel time on
	// the Zen 5 KVM guest, where they were 8–18 % of a ten-stream window
	// before the KV caches were pooled and reserved whole.
	DecodeFaultsStep float64 `json:"decode_page_faults_per_step"`
	// Temperature and TopP are the sampling of every stream (temperature
	// 0: greedy, as llama.cpp's anchors were measured).
	Temperature float64 `json:"temperature"`
	TopP        float64 `json:"top_p,omitempty"`
}

// samplingName describes the streams' sampling for bench engine's header.
func samplingName(p local.GenerateParams) string {
	if p.Temperature <= 0 {
		return "greedy"
	}
	return fmt.Sprintf("sampled at temperature %v, top_p %v", p.Temperature, p.TopP)
}

// runBenchEngine is `partnerapi bench engine`: prefill and decode tok/s of
// the embedded engine on random-weight GGUFs of real shapes, driven through
// the real scheduler (continuous batching) by token ids, for one and for
// several concurrent streams, with the machine's memory read bandwidth
// measured in the same run so decode can be judged against its roofline.
func runBenchEngine(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	fs := flag.NewFlagSet("bench engine", flag.ContinueOnError)
	shapes := fs.String("shape", "15m", "model shapes, comma-separated: 15m, 135m, 0.5b, 1b")
	quants := fs.String("quant", "q8_0", "weight types, comma-separated: q8_0, q4_0, f16, f32, q4_k_m (llama.cpp's mix: Q4_K/Q6_K, Q5_0/Q8_0 where rows are not multiples of 256), q3_k_m (Q3_K/Q4_K/Q5_K/Q6_K, IQ4_NL and the others' fallbacks), q2_k (every matrix, 1b only)")
	streamsFlag := fs.String("streams", "1,10", "concurrent streams per case, comma-separated")
	prompt := fs.Int("prompt", 256, "prompt tokens per stream for the prefill measurement")
	gen := fs.Int("gen", 128, "tokens per stream for the decode measurement")
	temperature := fs.Float64("temperature", 0, "sampling temperature of every stream (0: greedy, as llama.cpp's anchors)")
	topP := fs.Float64("top-p", 0.9, "top_p of every stream when --temperature > 0")
	repeat := fs.Int("repeat", 1, "measurements per case, interleaved across stream counts; the medians are reported")
	bwMB := fs.Int("bandwidth-mb", 512, "buffer size for the bandwidth probe (MB, > 256 to defeat caches)")
	asJSON := fs.Bool("json", false, "print one JSON object per case")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (for go tool pprof)")
	kvFlag := fs.String("kv-cache", "default", "KV cache type: f16, q8 (int8 rows with one scale each) or default (q8 where the CPU has its kernels)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	kvType, err := model.ParseKVType(*kvFlag)
	if err != nil {
		return fmt.Errorf("--kv-cache: %w", err)
	}
	if kvType == model.KVDefault {
		kvType = model.DefaultKVType()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *prompt < 1 || *gen < 2 || *repeat < 1 {
		return errors.New("--prompt and --repeat must be at least 1 and --gen at least 2")
	}
	var streams []int
	for _, s := range strings.Split(*streamsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 64 {
			return fmt.Errorf("--streams: %q is not a stream count from 1 to 64", s)
		}
		streams = append(streams, n)
	}
	var cases []engineShape
	for _, s := range strings.Split(*shapes, ",") {
		sh, ok := findShape(strings.TrimSpace(s))
		if !ok {
			return fmt.Errorf("--shape: unknown shape %q (have 15m, 135m, 0.5b, 1b)", s)
		}
		cases = append(cases, sh)
	}
	types, err := parseEngineQuants(*quants)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "partnerapi-engine-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *temperature < 0 || *topP <= 0 || *topP > 1 {
		return errors.New("--temperature must be ≥ 0 and --top-p in (0, 1]")
	}
	sampling := local.GenerateParams{Temperature: *temperature, TopP: *topP}
	split := kernels.CalibrateSplit()
	if !*asJSON {
		fmt.Fprintf(io.out, "kernels: %s (asm: %v; %s=avx2|avx512|purego forces a family), Q8_0 weights prefetched into %s (PARTNERAPI_WEIGHT_PREFETCH=l1|l2), KV cache %v (int8 scores prefetch into %s, PARTNERAPI_KV_PREFETCH=l1|l2; int8 values in %s, %s=blocks|rows), Q4_0 high nibbles by %s (%s=gfni|shift), %s\n", kernels.ISA(), kernels.AsmEnabled(), kernels.KernelsEnv, kernels.WeightPrefetch(), kvType, kernels.KVPrefetch(), kernels.KVValues(), kernels.KVValuesEnv, kernels.Q4_0Unpack(), kernels.Q4_0UnpackEnv, samplingName(sampling))
		fmt.Fprintf(io.out, "worker pool: a split region costs %v, one core %.0f multiply-adds/ns from cache: regions split from %d multiply-adds\n",
			split.Handoff.Round(10*time.Nanosecond), split.Rate, split.Threshold)
		fmt.Fprintf(io.out, "%-6s %-5s %7s %12s %12s %10s %8s %8s %9s %8s %12s %8s %9s %14s %17s %12s\n", "shape", "quant", "streams", "prefill t/s", "decode t/s", "MB/token", "KV MB", "GB/s", "roofline", "+KV", "ceiling t/s", "compute", "max÷one", "lag p50/p99 ms", "join gap p99/max", "faults/step")
	}
	probe := newBandwidthProbe(*bwMB << 20)
	probe.measure(8)
	for _, sh := range cases {
		for _, typ := range types {
			if err := ctx.Err(); err != nil {
				return err
			}
			err := benchEngineCase(ctx, tmp, sh, typ, kvType, sampling, *prompt, *gen, *repeat, streams, probe, func(res engineResult) error {
				if *asJSON {
					return json.NewEncoder(io.out).Encode(res)
				}
				maxOver := ""
				if res.CeilingOverOneStream > 0 {
					maxOver = fmt.Sprintf("%.2f", res.CeilingOverOneStream)
				}
				joinGap := ""
				if res.Streams > 1 {
					joinGap = fmt.Sprintf("%.1f/%.1f", res.JoinGapP99Ms, res.JoinGapMaxMs)
				}
				_, err := fmt.Fprintf(io.out, "%-6s %-5s %7d %12.1f %12.1f %10.1f %8.2f %8.1f %8.0f%% %7.0f%% %12.1f %7.0f%% %9s %14s %17s %12.1f\n", res.Shape, res.Quant, res.Streams,
					res.PrefillTokS, res.DecodeTokS, float64(res.WeightBytesToken)/1e6, float64(res.KVBytesToken)/1e6, res.BandwidthGBs, 100*res.RooflineFraction, 100*res.RooflineFractionKV,
					res.ComputeCeilingTokS, 100*res.ComputeFraction, maxOver, fmt.Sprintf("%.2f/%.1f", res.DeliveryLagP50Ms, res.DeliveryLagP99Ms), joinGap, res.DecodeFaultsStep)
				return err
			})
			if err != nil {
				return fmt.Errorf("%s %s: %w", sh.name, typ.name, err)
			}
		}
	}
	return nil
}

func findShape(name string) (engineShape, bool) {
	for _, s := range engineShapes {
		if s.name == name {
			return s, true
		}
	}
	return engineShape{}, false
}

// benchEngineCase writes one random-weight model, serves it with the local
// engine and reports a result per stream count.
func benchEngineCase(ctx context.Context, dir string, sh engineShape, typ engineQuant, kvType model.KVType, sampling local.GenerateParams, prompt, gen, repeat int, streams []int, probe *bandwidthProbe, report func(engineResult) error) error {
	name := sh.name + "-" + typ.name
	caseDir := filepath.Join(dir, name)
	if err := os.Mkdir(caseDir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(caseDir)
	maxStreams := 1
	for _, n := range streams {
		maxStreams = max(maxStreams, n)
	}
	// Room for the first stream to decode while the others' prompts are
	// prefilled (a few prompt tokens per step) and then gen more tokens.
	ctxLen := prompt + gen + maxStreams*prompt + 64
	if err := writeEngineGGUF(filepath.Join(caseDir, name+".gguf"), sh, typ, ctxLen); err != nil {
		return err
	}
	e, err := local.Open(caseDir, local.Options{Concurrency: maxStreams, QueueDepth: maxStreams, PrefixCache: -1, KVCache: kvType})
	if err != nil {
		return err
	}
	defer e.Close()
	m, _ := e.Model(name)
	split := kernels.CalibrateSplit()
	res := engineResult{Shape: sh.name, Quant: typ.name, AsmKernels: kernels.AsmEnabled(), Kernels: kernels.ISA(), WeightPrefetch: kernels.WeightPrefetch(), KVPrefetch: kernels.KVPrefetch(), KVValues: kernels.KVValues(), Q4_0Unpack: kernels.Q4_0Unpack(), KVCache: kvType.String(),
		SplitThreshold: split.Threshold, HandoffNs: float64(split.Handoff.Nanoseconds())}
	if sampling.Temperature > 0 {
		res.Temperature, res.TopP = sampling.Temperature, sampling.TopP
	}
	// Decode reads every layer matrix and the output projection once per
	// step (their packed copies where they have them); norms and the
	// embedding rows are noise. The compute ceiling probes the type that
	// carries most of those multiply-adds, as loaded (after any rewrite).
	matrices := []kernels.Matrix{m.Net.Output}
	for _, ly := range m.Net.Layers {
		matrices = append(matrices, ly.Wq, ly.Wk, ly.Wv, ly.Wo, ly.Wgate, ly.Wup, ly.Wdown)
	}
	macsByType := map[gguf.GGMLType]int64{}
	for _, w := range matrices {
		res.WeightBytesToken += int64(w.StreamedBytes())
		res.ProductMACsToken += int64(w.Rows) * int64(w.Cols)
		macsByType[w.Type] += int64(w.Rows) * int64(w.Cols)
	}
	probeType := gguf.GGMLType(0) // F32, replaced by any type with work
	for t, n := range macsByType {
		if n > macsByType[probeType] {
			probeType = t
		}
	}
	// A warm-up generation faults the mapped weights in, so the timed runs
	// measure compute and memory, not page faults on first touch.
	warm := []int{1, 300, 301, 302, 303, 304, 305, 306}
	if _, err := e.GenerateTokens(ctx, name, warm, local.GenerateParams{MaxTokens: 2, IgnoreEOS: true}, nil); err != nil {
		return err
	}
	// Repetitions interleave the stream counts, so that a burst of load
	// from elsewhere on a shared machine hits all of them alike.
	//
	// The bandwidth, and the products' rate for the compute ceiling, are
	// probed right before and right after every
	// measurement, and the higher of the two is that measurement's
	// roofline: the bandwidth a shared machine gives drifts with its
	// neighbours (the Zen 5 VM alternated between periods of ~45 and of
	// 60–76 GB/s, minutes apart, and decode followed), so a decode is held
	// to the bandwidth of its own minute, and never to less than was
	// available around it. The reported fractions are the medians of the
	// measurements' own.
	prefills := make([][]float64, len(streams))
	decodes := make([][]float64, len(streams))
	spans := make([][]float64, len(streams))
	bws := make([][]float64, len(streams))
	fracs, fracsKV := make([][]float64, len(streams)), make([][]float64, len(streams))
	ceilings, computeFracs := make([][]float64, len(streams)), make([][]float64, len(streams))
	lagP50, lagP99 := make([][]float64, len(streams)), make([][]float64, len(streams))
	gapP99, gapMax := make([][]float64, len(streams)), make([][]float64, len(streams))
	faults := make([][]float64, len(streams))
	products, err := kernels.NewProductProbe(probeType)
	if err != nil {
		return err
	}
	kvPerPos := float64(m.Net.KVBytesPerPosition(kvType))
	for range repeat {
		for i, n := range streams {
			before := probe.now(2)
			rateBefore := products.Rate(n, productRateTime)
			w, err := measureStreams(ctx, e, name, m.Net.NVocab, n, prompt, gen, sampling)
			if err != nil {
				return err
			}
			bw := max(before, probe.now(2))
			rateAfter := products.Rate(n, productRateTime)
			ceiling := max(rateBefore, rateAfter) / float64(res.ProductMACsToken)
			ceilings[i], computeFracs[i] = append(ceilings[i], ceiling), append(computeFracs[i], w.decode/ceiling)
			prefills[i], decodes[i], spans[i] = append(prefills[i], w.prefill), append(decodes[i], w.decode), append(spans[i], w.span)
			bws[i] = append(bws[i], bw)
			lagP50[i], lagP99[i] = append(lagP50[i], w.lagP50), append(lagP99[i], w.lagP99)
			gapP99[i], gapMax[i] = append(gapP99[i], w.joinGapP99), append(gapMax[i], w.joinGapMax)
			faults[i] = append(faults[i], w.faultsStep)
			perStream := w.decode / float64(n)
			fracs[i] = append(fracs[i], perStream*float64(res.WeightBytesToken)/bw)
			kvToken := int64(w.span * kvPerPos)
			fracsKV[i] = append(fracsKV[i], perStream*float64(res.WeightBytesToken+int64(n)*kvToken)/bw)
		}
	}
	oneStream := 0.0
	for i, n := range streams {
		if n == 1 {
			oneStream = median(decodes[i])
		}
	}
	for i, n := range streams {
		r := res
		r.Streams = n
		r.ComputeCeilingTokS = median(ceilings[i])
		r.ComputeFraction = median(computeFracs[i])
		if n > 1 && oneStream > 0 {
			r.CeilingOverOneStream = r.ComputeCeilingTokS / oneStream
		}
		r.PrefillTokS, r.DecodeTokS = median(prefills[i]), median(decodes[i])
		r.KVBytesToken = int64(median(spans[i]) * kvPerPos)
		r.BandwidthGBs = median(bws[i]) / 1e9
		r.DeliveryLagP50Ms, r.DeliveryLagP99Ms = 1e3*median(lagP50[i]), 1e3*median(lagP99[i])
		r.JoinGapP99Ms, r.JoinGapMaxMs = 1e3*median(gapP99[i]), 1e3*median(gapMax[i])
		r.DecodeFaultsStep = median(faults[i])
		r.RooflineFraction, r.RooflineFractionKV = median(fracs[i]), median(fracsKV[i])
		if err := report(r); err != nil {
			return err
		}
	}
	return nil
}

// productRateTime is how long each measurement of the products' rate
// (the compute ceiling) runs, before and after each decode measurement.
const productRateTime = 150 * time.Millisecond

// median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// bandwidthProbe sums one buffer of n bytes with the float kernel on the
// engine's worker pool (the same threads decode uses). The buffer is
// allocated and touched once, so page faults never land in a timed pass.
type bandwidthProbe struct {
	buf  []float32
	best float64 // bytes per second, the best pass so far
}

func newBandwidthProbe(n int) *bandwidthProbe {
	p := &bandwidthProbe{buf: make([]float32, n/4)}
	for i := range p.buf {
		p.buf[i] = 1
	}
	return p
}

// now runs passes timed passes and returns the best rate among them in
// bytes per second.
func (p *bandwidthProbe) now(passes int) float64 {
	p.best = 0
	return p.measure(passes)
}

// measure runs passes more timed passes and returns the best rate seen by
// this probe in bytes per second.
func (p *bandwidthProbe) measure(passes int) float64 {
	const parts = 64
	chunk := len(p.buf) / parts
	sums := make([]float32, parts)
	for range passes {
		start := time.Now()
		kernels.ParallelFor(parts, len(p.buf), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				sums[i] = kernels.SumF32(p.buf[i*chunk : (i+1)*chunk])
			}
		})
		if rate := float64(parts*chunk*4) / time.Since(start).Seconds(); rate > p.best {
			p.best = rate
		}
	}
	return p.best
}
