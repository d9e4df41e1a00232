package assistant

import (
	"reflect"
	"testing"
)

// scored makes n tokens of the given surprisal, each one character long,
// after a first token of one character.
func scored(nlls ...float64) []TokenSurprisal {
	out := make([]TokenSurprisal, len(nlls))
	for i, v := range nlls {
		out[i] = TokenSurprisal{End: i + 2, NLL: v}
	}
	return out
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestJudgeSurprisal(t *testing.T) {
	cat := func(parts ...[]float64) []float64 {
		var out []float64
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		nlls      []float64
		category  string
		intervals [][2]int
	}{
		{"all likely", repeat(0.5, 16), "ai", [][2]int{{1, 17}}},
		{"all surprising", repeat(5, 16), "human", [][2]int{}},
		// Windows of 8: tokens 1–8 (characters 1–9 with the first token),
		// 9–16 (10–17), 17–24 (18–25).
		{"human then generated", cat(repeat(5, 8), repeat(0.5, 16)), "mixed", [][2]int{{10, 25}}},
		{"generated, human, generated", cat(repeat(0.5, 8), repeat(5, 8), repeat(0.5, 8)), "mixed", [][2]int{{1, 9}, {18, 25}}},
		// A tail under half a window joins the window before it: 8 + 3
		// tokens are one window whose mean decides.
		{"short tail joins", cat(repeat(0.5, 8), repeat(9, 3)), "human", [][2]int{}},
		{"short tail joins a likely window", cat(repeat(0.5, 8), repeat(1, 3)), "ai", [][2]int{{1, 12}}},
		{"at the threshold is human", repeat(AICheckThreshold, 8), "human", [][2]int{}},
		{"one token", []float64{0.1}, "ai", [][2]int{{1, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			toks := scored(tc.nlls...)
			res := judgeSurprisal(toks, len(tc.nlls)+1, AICheckThreshold)
			if res.Category != tc.category || !reflect.DeepEqual(res.AIIntervals, tc.intervals) || res.Tokens != len(tc.nlls)+1 {
				t.Fatalf("%+v, want %s %v", res, tc.category, tc.intervals)
			}
		})
	}
}

// FuzzJudgeSurprisal holds the judgement's invariants for any scores:
// intervals in order, apart, within the text and ending at a token's end
// or the text's; the category says whether they cover nothing, all, or
// some of it.
//
// The scores are at most 64 tokens, eight windows. The judgement's
// coverage grows with the number of windows, so every longer input was new
// coverage for the minimizer, which tried its ~n²/2 substrings while the
// only worker fuzzed nothing; eight windows reach every branch that a
// thousand do (first, middle, last and a short last one merged).
func FuzzJudgeSurprisal(f *testing.F) {
	f.Add([]byte{1, 200, 3, 4, 5, 250, 7, 8, 9, 10, 11, 12}, uint16(40))
	f.Add([]byte{255, 255, 0, 0}, uint16(3))
	f.Fuzz(func(t *testing.T, raw []byte, chars uint16) {
		if len(raw) > 8*AICheckWindow {
			return
		}
		// Each byte is a token: its surprisal in tenths of a nat and a
		// step of 0–3 characters.
		var toks []TokenSurprisal
		end := 0
		for _, b := range raw {
			end += int(b & 3)
			toks = append(toks, TokenSurprisal{End: min(end, int(chars)), NLL: float64(b>>2) / 10})
		}
		res := judgeSurprisal(toks, int(chars), AICheckThreshold)
		covered, last := 0, 0
		for _, iv := range res.AIIntervals {
			if iv[0] < 1 || iv[1] > int(chars) || iv[0] > iv[1] || iv[0] <= last+1 && last > 0 {
				t.Fatalf("interval %v after %d in %d characters: %+v", iv, last, chars, res)
			}
			covered += iv[1] - iv[0] + 1
			last = iv[1]
		}
		want := "mixed"
		switch {
		case covered == 0:
			want = "human"
		case covered == int(chars):
			want = "ai"
		}
		if res.Category != want || res.Tokens != len(toks)+1 || res.Characters != int(chars) {
			t.Fatalf("%+v, want category %s", res, want)
		}
	})
}
