package sampler

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestGreedyTakesArgmax(t *testing.T) {
	for _, temp := range []float64{0, 0.0005, 0.000999} {
		s := New(Params{Temperature: temp, Seed: 1})
		if got := s.Sample([]float32{0.1, 3, -2, 2.9}, nil); got != 1 {
			t.Errorf("temperature %v: got %d", temp, got)
		}
	}
}

// TestGreedyBoundary pins the reference's rule, "0 (or < 0.001) = greedy":
// at 0.001 itself the draw is sampled, which two logits 0.0005 apart (a
// probability of e^-0.5 ≈ 0.61 against 1) make visible.
func TestGreedyBoundary(t *testing.T) {
	logits := func() []float32 { return []float32{3.0005, 3, -2} }
	picks := map[int]int{}
	for seed := range uint64(64) {
		picks[New(Params{Temperature: 0.001, Seed: seed}).Sample(logits(), nil)]++
		if got := New(Params{Temperature: 0.000999, Seed: seed}).Sample(logits(), nil); got != 0 {
			t.Fatalf("temperature 0.000999, seed %d: got %d, want the argmax", seed, got)
		}
	}
	if picks[1] == 0 || picks[0] == 0 {
		t.Errorf("temperature 0.001 picks %v, want both close tokens drawn", picks)
	}
}

// TestArgmax pins the greedy pick on the cases where a rewrite could change
// it: ties go to the first index, NaNs after the first logit are skipped, a
// NaN first logit wins, and -0 and +0 tie.
func TestArgmax(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		name   string
		logits []float32
		want   int
	}{
		{"empty", nil, 0},
		{"one", []float32{-5}, 0},
		{"last", []float32{1, 2, 3}, 2},
		{"first of ties", []float32{1, 7, 3, 7}, 1},
		{"NaN later is skipped", []float32{1, nan, 3, nan}, 2},
		{"NaN first wins", []float32{nan, 1, 3}, 0},
		{"all -Inf", []float32{-inf, -inf}, 0},
		{"+Inf", []float32{1, inf, 2, inf}, 1},
		{"-0 and +0 tie", []float32{-1, negZero, 0}, 1},
	} {
		if got := Argmax(c.logits); got != c.want {
			t.Errorf("%s: Argmax(%v) = %d, want %d", c.name, c.logits, got, c.want)
		}
	}
}

func TestSeededDeterminism(t *testing.T) {
	logits := func() []float32 { return []float32{1, 1.2, 0.8, 1.1, 0.9, 1.05} }
	draw := func(seed, stream uint64) []int {
		s := New(Params{Temperature: 1, TopP: 0.95, Seed: seed, Stream: stream})
		var out []int
		for range 50 {
			out = append(out, s.Sample(logits(), nil))
		}
		return out
	}
	if a, b := draw(42, 0), draw(42, 0); !slices.Equal(a, b) {
		t.Error("same seed gave different draws")
	}
	if a, b := draw(42, 0), draw(43, 0); slices.Equal(a, b) {
		t.Error("different seeds gave identical 50-token draws")
	}
	if a, b := draw(42, 0), draw(42, 1); slices.Equal(a, b) {
		t.Error("different streams gave identical 50-token draws")
	}
}

func TestTemperatureMatchesSoftmax(t *testing.T) {
	logits := []float32{0, float32(math.Log(3))} // probabilities 1/4, 3/4 at T=1
	s := New(Params{Temperature: 1, Seed: 7})
	const n = 20000
	ones := 0
	for range n {
		if s.Sample(slices.Clone(logits), nil) == 1 {
			ones++
		}
	}
	if f := float64(ones) / n; math.Abs(f-0.75) > 0.02 {
		t.Errorf("token 1 drawn %.3f of the time, want 0.75", f)
	}
	// A high temperature flattens the distribution towards 1/2.
	s = New(Params{Temperature: 100, Seed: 7})
	ones = 0
	for range n {
		if s.Sample(slices.Clone(logits), nil) == 1 {
			ones++
		}
	}
	if f := float64(ones) / n; math.Abs(f-0.5) > 0.03 {
		t.Errorf("at T=100 token 1 drawn %.3f of the time, want ≈0.5", f)
	}
}

func TestTopPKeepsSmallestNucleus(t *testing.T) {
	// Probabilities 0.5, 0.3, 0.15, 0.05. A top_p of exactly 0.5 would sit
	// on the first token's mass, where float32 rounding of the softmax
	// decides (as in llama.cpp); the cases stay off such edges.
	logits := []float32{float32(math.Log(0.5)), float32(math.Log(0.3)), float32(math.Log(0.15)), float32(math.Log(0.05))}
	for _, tc := range []struct {
		topP    float64
		allowed []int
	}{
		{0.4, []int{0}}, {0.49, []int{0}}, {0.51, []int{0, 1}}, {0.7, []int{0, 1}}, {0.79, []int{0, 1}},
		{0.81, []int{0, 1, 2}}, {0.9, []int{0, 1, 2}}, {0.96, []int{0, 1, 2, 3}}, {1, []int{0, 1, 2, 3}},
	} {
		s := New(Params{Temperature: 1, TopP: tc.topP, Seed: 3})
		seen := map[int]int{}
		for range 5000 {
			seen[s.Sample(slices.Clone(logits), nil)]++
		}
		for id := range seen {
			if !slices.Contains(tc.allowed, id) {
				t.Errorf("top_p %v drew token %d", tc.topP, id)
			}
		}
		if len(seen) != len(tc.allowed) {
			t.Errorf("top_p %v drew %v, want all of %v", tc.topP, seen, tc.allowed)
		}
	}
}

// TestExplicitTopPZero checks llama.cpp's top_p 0, which keeps only the
// most probable token (after the penalty), apart from the zero value's
// "no nucleus cut".
func TestExplicitTopPZero(t *testing.T) {
	// Probabilities about 0.5, 0.3, 0.15, 0.05 at temperature 1.
	logits := func() []float32 {
		return []float32{float32(math.Log(0.5)), float32(math.Log(0.3)), float32(math.Log(0.15)), float32(math.Log(0.05))}
	}
	tests := []struct {
		name    string
		p       Params
		history []int
		allowed []int
	}{
		{"explicit 0 keeps the top token", Params{Temperature: 1, TopP: 0, TopPSet: true}, nil, []int{0}},
		{"explicit 0 at a high temperature", Params{Temperature: 2, TopP: 0, TopPSet: true}, nil, []int{0}},
		{"explicit 0 after the penalty", Params{Temperature: 1, TopP: 0, TopPSet: true, RepetitionPenalty: 3}, []int{0}, []int{1}},
		{"unset 0 is no cut", Params{Temperature: 1}, nil, []int{0, 1, 2, 3}},
		{"explicit 1 is no cut", Params{Temperature: 1, TopP: 1, TopPSet: true}, nil, []int{0, 1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.Seed = 9
			s := New(tc.p)
			seen := map[int]int{}
			for range 2000 {
				seen[s.Sample(logits(), tc.history)]++
			}
			if got := slices.Sorted(maps.Keys(seen)); !slices.Equal(got, tc.allowed) {
				t.Errorf("drew %v, want exactly %v", seen, tc.allowed)
			}
		})
	}
}

func TestRepetitionPenalty(t *testing.T) {
	// Token 0 leads slightly; having just been generated, a penalty > 1 makes
	// a sampler whose nucleus holds only the most probable token choose
	// token 1 instead, and penalty 1 changes nothing. Greedy ignores the
	// penalty: temperature 0 is pure argmax (inference.md §6).
	logits := func() []float32 { return []float32{2.0, 1.9, -1, -1.1} }
	const narrow = 0.01 // a nucleus of the top token alone
	tests := []struct {
		name    string
		p       Params
		history []int
		want    int
	}{
		{"neutral penalty", Params{Temperature: 1, TopP: narrow, RepetitionPenalty: 1}, []int{0}, 0},
		{"penalty 1.1", Params{Temperature: 1, TopP: narrow, RepetitionPenalty: 1.1}, []int{0}, 1},
		{"only the recent window counts", Params{Temperature: 1, TopP: narrow, RepetitionPenalty: 2, RepeatWindow: 2}, []int{0, 3, 3}, 0},
		{"greedy ignores the penalty", Params{Temperature: 0, RepetitionPenalty: 1.1}, []int{0}, 0},
		{"greedy ignores a strong penalty", Params{Temperature: 0.000999, RepetitionPenalty: 2}, []int{0, 0, 1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := logits()
			if got := New(tc.p).Sample(l, tc.history); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
			if tc.p.Temperature < GreedyBelow && !slices.Equal(l, logits()) {
				t.Errorf("greedy changed the logits to %v", l)
			}
		})
	}
	// Negative logits are pushed further down: -1 * 1.5 < -1.1.
	l := logits()
	New(Params{RepetitionPenalty: 1.5}).penalise(l, []int{2, 2, 2})
	if l[2] != -1.5 {
		t.Errorf("negative logit penalised to %v, want -1.5 (once per distinct token)", l[2])
	}
}

func TestTopPOverLongTail(t *testing.T) {
	// One strong token and a long tail of tiny ones: with top_p 0.5 only the
	// strong token may be drawn; with top_p 0.999 the tail must be reachable.
	logits := make([]float32, 2000)
	logits[7] = 12
	for _, tc := range []struct {
		topP     float64
		wantTail bool
	}{{0.5, false}, {0.999, true}} {
		s := New(Params{Temperature: 1, TopP: tc.topP, Seed: 9})
		tail := 0
		for range 2000 {
			if s.Sample(slices.Clone(logits), nil) != 7 {
				tail++
			}
		}
		if (tail > 0) != tc.wantTail {
			t.Errorf("top_p %v: %d tail draws", tc.topP, tail)
		}
	}
}

// BenchmarkSampleTopP times a temperature and top-p draw over a
// 150 000-token vocabulary (Qwen2.5's) whose nucleus is large, side by side
// with the sorting nucleus it replaced (sampleSorted), alternating draws.
func BenchmarkSampleTopP(b *testing.B) {
	logits := make([]float32, 150000)
	for i := range logits {
		logits[i] = float32(i%997) / 100
	}
	s := New(Params{Temperature: 0.8, TopP: 0.9, Seed: 1})
	old := New(Params{Temperature: 0.8, TopP: 0.9, Seed: 1})
	buf := make([]float32, len(logits))
	var cur, prev time.Duration
	for b.Loop() {
		copy(buf, logits)
		t0 := time.Now()
		s.Sample(buf, nil)
		t1 := time.Now()
		copy(buf, logits)
		t2 := time.Now()
		sampleSorted(old, buf)
		cur, prev = cur+t1.Sub(t0), prev+time.Since(t2)
	}
	b.ReportMetric(float64(cur.Microseconds())/float64(b.N), "µs-select")
	b.ReportMetric(float64(prev.Microseconds())/float64(b.N), "µs-sort")
	b.ReportMetric(float64(prev)/float64(cur), "speedup")
}

// sampleSorted is Sample as it was before the selection-based nucleus: the
// candidates above a lowering threshold sorted most probable first, the
// nucleus their shortest prefix reaching top_p, the draw walking it in
// that order (no repetition penalty).
func sampleSorted(s *Sampler, logits []float32) int {
	maxLogit := float64(logits[Argmax(logits)])
	inv := 1 / s.p.Temperature
	var all []candidate
	var sum float64
	for id, l := range logits {
		if p := math.Exp((float64(l) - maxLogit) * inv); p > 0 {
			all = append(all, candidate{id, p})
			sum += p
		}
	}
	want := s.p.TopP * sum
	top := all
	for threshold := 1e-3; threshold >= 1e-30; threshold *= 1e-3 {
		top = top[:0:0]
		var mass float64
		for _, c := range all {
			if c.p >= threshold {
				top = append(top, c)
				mass += c.p
			}
		}
		if mass >= want {
			break
		}
	}
	slices.SortFunc(top, mostProbableFirst)
	var cum float64
	for i, c := range top {
		if cum += c.p; cum >= want {
			top = top[:i+1]
			break
		}
	}
	r := s.rng.Float64() * cum
	for _, c := range top {
		if r -= c.p; r < 0 {
			return c.id
		}
	}
	return top[len(top)-1].id
}

// TestNucleusMatchesSorted checks the selection-based nucleus against its
// definition: sort the candidates most probable first (ties in token
// order) and take the shortest prefix whose mass reaches want. The
// probabilities are multiples of 1/64, so every sum is exact and the two
// must agree token for token, ties and all.
func TestNucleusMatchesSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for trial := range 300 {
		n := 1 + r.IntN(500)
		levels := 1 + r.IntN(64) // few levels: many ties
		cands := make([]candidate, n)
		var sum float64
		for i := range cands {
			cands[i] = candidate{id: i, p: float64(1+r.IntN(levels)) / 64}
			sum += cands[i].p
		}
		topP := []float64{0.1, 0.5, 0.9, 0.95, 0.999}[trial%5]
		want := topP * sum
		sorted := slices.Clone(cands)
		slices.SortFunc(sorted, mostProbableFirst)
		wantSet := map[int]bool{}
		var cum float64
		for _, c := range sorted {
			wantSet[c.id] = true
			if cum += c.p; cum >= want {
				break
			}
		}
		s := New(Params{Temperature: 1, TopP: topP})
		probs := make([]float32, n)
		for _, c := range cands {
			probs[c.id] = float32(c.p)
		}
		cut, ties, mass := s.nucleus(probs, topP)
		got := map[int]bool{}
		var gotMass float64
		for id, p := range probs {
			if p > cut || (p == cut && ties > 0) {
				if p == cut {
					ties--
				}
				got[id] = true
				gotMass += float64(p)
			}
		}
		if !maps.Equal(got, wantSet) || gotMass != cum || mass != cum {
			t.Fatalf("trial %d (n %d, top_p %v): nucleus of %d tokens (mass %v, reported %v), want %d (mass %v)",
				trial, n, topP, len(got), gotMass, mass, len(wantSet), cum)
		}
	}
}

// TestTopPDrawFrequencies checks that draws inside the nucleus follow the
// renormalised probabilities.
func TestTopPDrawFrequencies(t *testing.T) {
	// Probabilities ∝ 8, 4, 2, 1, 1 (logits ln of those): top_p 0.8 keeps
	// the first three (14 of 16 ≥ 12.8), drawn 8:4:2.
	logits := []float32{float32(math.Log(8)), float32(math.Log(4)), float32(math.Log(2)), 0, 0}
	s := New(Params{Temperature: 1, TopP: 0.8, Seed: 11})
	counts := make([]int, len(logits))
	const draws = 70000
	for range draws {
		counts[s.Sample(slices.Clone(logits), nil)]++
	}
	if counts[3] != 0 || counts[4] != 0 {
		t.Fatalf("drew outside the nucleus: %v", counts)
	}
	for i, w := range []float64{8.0 / 14, 4.0 / 14, 2.0 / 14} {
		if got := float64(counts[i]) / draws; math.Abs(got-w) > 0.01 {
			t.Errorf("token %d drawn %.4f of the time, want %.4f", i, got, w)
		}
	}
}

// candidate is a token and its probability, as the sorting nucleus kept
// them.
type candidate struct {
	id int
	p  float64
}

// mostProbableFirst orders candidates by probability, highest first, ties
// in token order: the order the nucleus is defined by.
func mostProbableFirst(a, b candidate) int {
	switch {
	case a.p > b.p:
		return -1
	case a.p < b.p:
		return 1
	}
	return a.id - b.id
}

// TestNeverDrawsImpossibleTokens: a NaN logit, an infinitely negative one
// and one whose probability underflows are never drawn, with or without a
// nucleus.
func TestNeverDrawsImpossibleTokens(t *testing.T) {
	logits := []float32{0, float32(math.NaN()), float32(math.Inf(-1)), 0, -1e6}
	for _, topP := range []float64{0, 0.5, 0.99} {
		s := New(Params{Temperature: 1, TopP: topP, Seed: 5})
		for range 2000 {
			if got := s.Sample(slices.Clone(logits), nil); got != 0 && got != 3 {
				t.Fatalf("top_p %v drew token %d", topP, got)
			}
		}
	}
	// With every logit impossible the draw still names a token.
	for _, topP := range []float64{0, 0.9} {
		none := []float32{float32(math.Inf(-1)), float32(math.NaN()), float32(math.Inf(-1))}
		if got := New(Params{Temperature: 1, TopP: topP}).Sample(none, nil); got < 0 || got >= len(none) {
			t.Fatalf("top_p %v, no possible token: drew %d", topP, got)
		}
	}
	// A +Inf logit (beside a NaN) is the only one drawn, at any temperature.
	inf := []float32{0, float32(math.Inf(1)), float32(math.NaN()), 5}
	for _, temp := range []float64{0.01, 1, 50} {
		s := New(Params{Temperature: temp, TopP: 0.9, Seed: 6})
		for range 200 {
			if got := s.Sample(slices.Clone(inf), nil); got != 1 {
				t.Fatalf("temperature %v with a +Inf logit drew token %d", temp, got)
			}
		}
	}
}
