package model

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"partnerapi/internal/inference/gguf"
	"partnerapi/internal/inference/quanttest"
	"partnerapi/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestStories260KQuantised(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	// The first tokens of the reference continuation survive quantisation;
	// later ones may drift as small logit differences compound.
	for _, tc := range []struct {
		typ      gguf.GGMLType
		minMatch int
	}{
		{gguf.F16, 40}, {gguf.BF16, 10}, {gguf.Q8_0, 30}, {gguf.Q4_0, 10}, {gguf.Q5_0, 30}, {gguf.Q5_1, 10},
		{gguf.IQ4_NL, 10}, {gguf.Q4_1, 10},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			f, err := gguf.Open(quanttest.File(t, src, tc.typ))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			m.KVCache = testKVType // the tolerances are those of the half-precision cache
			wantDown := gguf.F32   // ffn_down rows are 172 long: no 32-blocks
			if tc.typ.BlockSize() == 1 {
				wantDown = tc.typ
			}
			wantQ := tc.typ
			if wq := m.Layers[0].Wq; tc.typ == gguf.Q5_0 && !(wq.Type == gguf.Q5_0 && wq.Packed()) {
				wantQ = gguf.Q8_0 // rewritten at load where not packed as Q5_0 (kernels.AsQ8_0)
			}
			switch wq := m.Layers[0].Wq; tc.typ { // rewritten at load where not packed (kernels.Rewrite)
			case gguf.IQ4_NL:
				if !(wq.Type == gguf.IQ4_NL && wq.Packed()) {
					wantQ = gguf.Q8_0
				}
			case gguf.Q4_1:
				wantQ = gguf.Q5_1
			}
			if m.Layers[0].Wq.Type != wantQ || m.Layers[0].Wdown.Type != wantDown {
				t.Fatalf("weights are %v / %v", m.Layers[0].Wq.Type, m.Layers[0].Wdown.Type)
			}
			got := greedy(t, m.NewSequence(0), storiesPrompt, len(storiesGreedy), true)
			match := 0
			for match < len(got) && got[match] == storiesGreedy[match] {
				match++
			}
			t.Logf("%v: first %d of %d greedy tokens match the F32 reference", tc.typ, match, len(got))
			if match < tc.minMatch {
				t.Errorf("only %d leading tokens match, want ≥ %d: %v", match, tc.minMatch, got)
			}
		})
	}
}

// TestTinyRandomF16Golden runs llama-2-tiny-random (F16 weights, 32 000-token
// vocabulary) greedily. Its weights are random, so the output is gibberish:
// the golden file pins it to catch any change in the F16 path, and the
// logits must stay finite. Regenerate with -update after reviewing a change.
func TestTinyRandomF16Golden(t *testing.T) {
	m := openModel(t, "llama-2-tiny-random.gguf")
	if m.TokenEmbd.Type != gguf.F16 || m.Output.Type != gguf.F16 || m.NVocab != 32000 {
		t.Fatalf("unexpected model: %v %v %d", m.TokenEmbd.Type, m.Output.Type, m.NVocab)
	}
	seq := m.NewSequence(0)
	prompt := []int{1, 15043, 3186} // <s> Hello world
	logits, err := seq.Forward(prompt)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 24 {
		for _, v := range logits {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("non-finite logit after %d tokens", seq.Pos())
			}
		}
		tok := argmax(logits)
		ids = append(ids, fmt.Sprint(tok))
		if logits, err = seq.Forward([]int{tok}); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(ids, " ") + "\n"
	golden := filepath.Join("testdata", "tiny-random-greedy.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("greedy ids changed:\n got %s\nwant %s", got, want)
	}
}
