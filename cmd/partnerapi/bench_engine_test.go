package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"partnerapi/internal/inference/kernels"
)

func TestBenchEngineQuick(t *testing.T) {
	var out bytes.Buffer
	// One repetition, so that each reported figure is one measurement's and
	// the fractions can be recomputed from them (with more, each is the
	// median of its own).
	args := []string{"--shape", "15m", "--quant", "q8_0,q4_0", "--streams", "1,3", "--repeat", "1", "--prompt", "8", "--gen", "4", "--bandwidth-mb", "16", "--json"}
	if err := runBenchEngine(context.Background(), args, func(string) string { return "" }, stdio{out: &out, err: &out}); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	var got []engineResult
	for dec.More() {
		var r engineResult
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%v in %q", err, out.String())
		}
		got = append(got, r)
	}
	// One result per quantisation and stream count, in that order.
	if len(got) != 4 || got[0].Quant != "q8_0" || got[2].Quant != "q4_0" || got[0].Streams != 1 || got[1].Streams != 3 || got[3].Streams != 3 {
		t.Fatalf("cases %+v", got)
	}
	for _, r := range got {
		if r.Shape != "15m" || r.PrefillTokS <= 0 || r.DecodeTokS <= 0 || r.BandwidthGBs <= 0 || r.RooflineFraction <= 0 {
			t.Errorf("implausible result %+v", r)
		}
		// Delivery lags are measured (a token cannot arrive before it was
		// drawn), the 99th percentile no lower than the median.
		if r.DeliveryLagP50Ms <= 0 || r.DeliveryLagP99Ms < r.DeliveryLagP50Ms {
			t.Errorf("delivery lag p50 %v ms, p99 %v ms", r.DeliveryLagP50Ms, r.DeliveryLagP99Ms)
		}
		// Gaps between a running stream's tokens while others join: none
		// for a lone stream, and the 99th percentile never above the longest.
		if (r.Streams == 1 && (r.JoinGapP99Ms != 0 || r.JoinGapMaxMs != 0)) || r.JoinGapP99Ms < 0 || r.JoinGapP99Ms > r.JoinGapMaxMs {
			t.Errorf("%d streams: join gap p99 %v ms, max %v ms", r.Streams, r.JoinGapP99Ms, r.JoinGapMaxMs)
		}
		// The kernels that ran are named, down to where the Q8_0 ones
		// prefetch (a per-CPU choice the figures depend on).
		if r.Kernels != kernels.ISA() || r.WeightPrefetch != kernels.WeightPrefetch() || r.WeightPrefetch == "" {
			t.Errorf("kernels %q prefetching into %q, the process runs %q into %q", r.Kernels, r.WeightPrefetch, kernels.ISA(), kernels.WeightPrefetch())
		}
		if r.Q4_0Unpack != kernels.Q4_0Unpack() || r.Q4_0Unpack == "" {
			t.Errorf("Q4_0 nibbles by %q, the process by %q", r.Q4_0Unpack, kernels.Q4_0Unpack())
		}
		if r.KVPrefetch != kernels.KVPrefetch() || r.KVPrefetch == "" {
			t.Errorf("KV cache prefetched into %q, the process into %q", r.KVPrefetch, kernels.KVPrefetch())
		}
		if r.KVValues != kernels.KVValues() || r.KVValues == "" {
			t.Errorf("int8 values in %q, the process keeps them in %q", r.KVValues, kernels.KVValues())
		}
		if r.SplitThreshold < 1<<15 {
			t.Errorf("split threshold %d below the fixed one", r.SplitThreshold)
		}
		// The fraction is steps per second against the roofline, of a step
		// that reads the weights once (the definition); the one
		// with KV adds every stream's KV cache.
		want := r.DecodeTokS / float64(r.Streams) * float64(r.WeightBytesToken) / (r.BandwidthGBs * 1e9)
		if diff := r.RooflineFraction - want; diff > 1e-9*want || diff < -1e-9*want {
			t.Errorf("roofline fraction %v, want %v", r.RooflineFraction, want)
		}
		wantKV := r.DecodeTokS / float64(r.Streams) * float64(r.WeightBytesToken+int64(r.Streams)*r.KVBytesToken) / (r.BandwidthGBs * 1e9)
		if diff := r.RooflineFractionKV - wantKV; diff > 1e-9*wantKV || diff < -1e-9*wantKV || r.RooflineFractionKV <= r.RooflineFraction {
			t.Errorf("roofline fraction with KV %v, want %v (above %v)", r.RooflineFractionKV, wantKV, r.RooflineFraction)
		}
	}
	// The KV cache of a 15M stream (6 layers of 288-wide keys and values
	// in the default int8 cache: 288 values and 6 scales each, or 288 half
	// floats) per position attended to. A lone stream's measured tokens,
	// its 2nd to 4th, attend to 9, 10 and 11 positions; with several, a
	// stream that joined first may have decoded for a while, but no token
	// attends to more than the context (8 + 4 + 3·8 + 64 positions).
	perPos := int64(6 * 2 * (288 + 4*6))
	if got[0].KVCache == "f16" {
		perPos = 6 * 2 * 288 * 2
	}
	for _, r := range got {
		lo, hi := 10*perPos, 10*perPos
		if r.Streams > 1 {
			lo, hi = 9*perPos, 100*perPos
		}
		if r.KVBytesToken < lo || r.KVBytesToken > hi {
			t.Errorf("%s %d streams: KV bytes per token %d, want %d to %d", r.Quant, r.Streams, r.KVBytesToken, lo, hi)
		}
	}
	// The products of a 15M token: six layers of q, k, v, o (288×288) and
	// gate, up, down (768×288), and the 32 000-row output projection. The
	// compute fraction is decode against the ceiling, and a row of several
	// streams carries the ceiling over its case's one-stream decode.
	const macs = 6*(4*288*288+3*768*288) + 32000*288
	for i, r := range got {
		if r.ProductMACsToken != macs {
			t.Errorf("%s %d streams: product multiply-adds a token %d, want %d", r.Quant, r.Streams, r.ProductMACsToken, macs)
		}
		if r.ComputeCeilingTokS <= 0 {
			t.Errorf("%s %d streams: compute ceiling %v", r.Quant, r.Streams, r.ComputeCeilingTokS)
		}
		if want := r.DecodeTokS / r.ComputeCeilingTokS; math.Abs(r.ComputeFraction-want) > 1e-9*want {
			t.Errorf("%s %d streams: compute fraction %v, want %v", r.Quant, r.Streams, r.ComputeFraction, want)
		}
		var want float64
		if r.Streams > 1 {
			want = r.ComputeCeilingTokS / got[i-1].DecodeTokS
		}
		if math.Abs(r.CeilingOverOneStream-want) > 1e-9*want {
			t.Errorf("%s %d streams: ceiling over one stream %v, want %v", r.Quant, r.Streams, r.CeilingOverOneStream, want)
		}
	}
	// Q4_0 packs 32 weights in 18 bytes against Q8_0's 34.
	if q8, q4 := got[0].WeightBytesToken, got[2].WeightBytesToken; q4*34 != q8*18 {
		t.Errorf("weight bytes per token q8_0 %d, q4_0 %d", q8, q4)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestBenchEngineFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shape", "7b"}, "unknown shape"},
		{[]string{"--quant", "q5_k"}, "unknown type"},
		{[]string{"--streams", "0"}, "stream count"},
		{[]string{"--streams", "1,x"}, "stream count"},
		{[]string{"--gen", "1"}, "at least 2"},
		{[]string{"--prompt", "0"}, "at least 1"},
		{[]string{"--repeat", "0"}, "at least 1"},
		{[]string{"--temperature", "-1"}, "--temperature must be"},
		{[]string{"--temperature", "0.8", "--top-p", "0"}, "--top-p in (0, 1]"},
	} {
		err := runBenchEngine(context.Background(), tc.args, func(string) string { return "" }, stdio{out: &bytes.Buffer{}, err: &bytes.Buffer{}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestBenchEngineSampled runs one small case with sampled streams: the
// JSON says how they sampled, and they decode.
func TestBenchEngineSampled(t *testing.T) {
	var out bytes.Buffer
	args := []string{"--shape", "15m", "--quant", "q4_0", "--streams", "2", "--prompt", "8", "--gen", "4", "--bandwidth-mb", "16", "--temperature", "0.8", "--top-p", "0.95", "--json"}
	if err := runBenchEngine(context.Background(), args, func(string) string { return "" }, stdio{out: &out, err: &out}); err != nil {
		t.Fatal(err)
	}
	var r engineResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	if r.Temperature != 0.8 || r.TopP != 0.95 || r.DecodeTokS <= 0 || r.Streams != 2 {
		t.Errorf("sampled case %+v", r)
	}
}
