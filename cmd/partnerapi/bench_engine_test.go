package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestBenchEngineQuick(t *testing.T) {
	var out bytes.Buffer
	args := []string{"--shape", "15m", "--quant", "q8_0,q4_0", "--streams", "1,3", "--repeat", "2", "--prompt", "8", "--gen", "4", "--bandwidth-mb", "16", "--json"}
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
		// The fraction is steps per second against the roofline.
		want := r.DecodeTokS / float64(r.Streams) * float64(r.WeightBytesToken) / (r.BandwidthGBs * 1e9)
		if diff := r.RooflineFraction - want; diff > 1e-9*want || diff < -1e-9*want {
			t.Errorf("roofline fraction %v, want %v", r.RooflineFraction, want)
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
	} {
		err := runBenchEngine(context.Background(), tc.args, func(string) string { return "" }, stdio{out: &bytes.Buffer{}, err: &bytes.Buffer{}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
