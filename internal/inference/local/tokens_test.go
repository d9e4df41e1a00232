package local

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/inference/sampler"
	"partnerapi/internal/testenv"
)

// storiesPromptIDs is "Once upon a time" with BOS (inference.md §1).
var storiesPromptIDs = []int{1, 403, 407, 261, 378}

// TestGenerateTokensMatchesReference runs the reference greedy prompt
// through the scheduler by token ids, alone and with other streams in the
// batch, and checks the ids against inference.md's reference continuation.
func TestGenerateTokensMatchesReference(t *testing.T) {
	want := []int{432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292}
	e := openEngine(t, "", Options{Concurrency: 4, PrefixCache: -1})
	var streamed []int
	got, err := e.GenerateTokens(context.Background(), "stories260K", storiesPromptIDs, GenerateParams{MaxTokens: len(want)},
		func(choice, tok int) { streamed = append(streamed, tok) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !slices.Equal(got[0], want) || !slices.Equal(streamed, want) {
		t.Fatalf("got %v, streamed %v, want %v", got, streamed, want)
	}
	// Four streams at once, two of them with other prompts, share steps and
	// still return the reference. On a tiny model a stream can finish before
	// the next one is submitted, so the round is repeated until the scheduler
	// reports a shared step; every round's results are checked.
	for round := 0; ; round++ {
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make([][][]int, 4)
		errs := make([]error, 4)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				prompt := storiesPromptIDs
				if i%2 == 1 {
					prompt = []int{1, 317, 269, 274, 287, 263, 377, 267, 265}
				}
				<-start
				results[i], errs[i] = e.GenerateTokens(context.Background(), "stories260K", prompt, GenerateParams{MaxTokens: len(want)}, nil)
			}()
		}
		close(start)
		wg.Wait()
		for i, r := range results {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if i%2 == 0 && !slices.Equal(r[0], want) {
				t.Errorf("round %d stream %d: %v", round, i, r[0])
			}
		}
		st := statsOf(t, e)
		if st.MaxBatch >= 2 {
			break
		}
		if round == 49 {
			t.Fatalf("streams never shared a step in 50 rounds: %+v", st)
		}
	}
}

// TestGenerateTokensTimed checks that the timed variant streams the same
// tokens as GenerateTokens with the times the scheduler took them: within
// the call and in order.
func TestGenerateTokensTimed(t *testing.T) {
	want := []int{432, 383, 286, 261, 376, 298, 315, 421}
	e := openEngine(t, "", Options{Concurrency: 1, PrefixCache: -1})
	var streamed []int
	var times []time.Time
	before := time.Now()
	got, err := e.GenerateTokensTimed(context.Background(), "stories260K", storiesPromptIDs, GenerateParams{MaxTokens: len(want)},
		func(choice int, tok int, at time.Time) {
			streamed = append(streamed, tok)
			times = append(times, at)
		})
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !slices.Equal(got[0], want) || !slices.Equal(streamed, want) {
		t.Fatalf("got %v, streamed %v, want %v", got, streamed, want)
	}
	for i, at := range times {
		if at.Before(before) || at.After(after) || (i > 0 && at.Before(times[i-1])) {
			t.Errorf("token %d taken at %v: want in order within [%v, %v] (%v)", i, at, before, after, times)
		}
	}
}

// TestGenerateTokensIgnoreEOS checks that IgnoreEOS runs a generation to
// MaxTokens past end-of-generation tokens, which a benchmark needs for
// equal-length runs; without it the same generation stops early.
// TestIgnoreEOS checks the scheduler's sampling decision on logits whose
// argmax is the end-of-generation token: by default the choice finishes
// with "stop"; with IgnoreEOS (which benchmarks use for equal-length runs)
// the token is handed over and the choice goes on until MaxTokens.
func TestIgnoreEOS(t *testing.T) {
	m, err := LoadModel(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	eos := m.Tokenizer.EOS()
	logits := make([]float32, m.Net.NVocab)
	logits[eos] = 10
	s := newSchedulerState(m, -1)
	for _, ignore := range []bool{false, true} {
		r := &request{params: GenerateParams{IgnoreEOS: ignore}, maxTokens: 2, notify: make(chan struct{}, 1), left: make(chan struct{})}
		c := &choiceState{req: r, sampler: sampler.New(sampler.Params{})}
		s.sample(c, slices.Clone(logits))
		evs := r.drain(nil)
		switch {
		case !ignore && (!c.done || len(evs) != 1 || evs[0].tok != -1 || evs[0].finish != FinishStop):
			t.Errorf("default: done %v, events %+v", c.done, evs)
		case ignore && (c.done || len(evs) != 1 || evs[0].tok != eos || evs[0].finish != ""):
			t.Errorf("IgnoreEOS: done %v, events %+v", c.done, evs)
		}
		if ignore {
			s.sample(c, slices.Clone(logits))
			if evs := r.drain(nil); !c.done || len(evs) != 1 || evs[0].tok != eos || evs[0].finish != FinishLength {
				t.Errorf("IgnoreEOS at MaxTokens: done %v, events %+v", c.done, evs)
			}
		}
	}
}

func TestGenerateTokensRefusesBadInput(t *testing.T) {
	e := openEngine(t, "", Options{})
	long := make([]int, 2048)
	for i := range long {
		long[i] = 300
	}
	for name, tc := range map[string]struct {
		model  string
		prompt []int
		want   error
	}{
		"unknown model": {"nope", storiesPromptIDs, assistant.ErrNoSuchModel},
		"empty":         {"stories260K", nil, nil},
		"out of range":  {"stories260K", []int{1, 512}, nil},
		"negative":      {"stories260K", []int{-1}, nil},
		"no room":       {"stories260K", long, assistant.ErrContextWindow},
	} {
		_, err := e.GenerateTokens(context.Background(), tc.model, tc.prompt, GenerateParams{MaxTokens: 3}, nil)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: error %v, want %v", name, err, tc.want)
		}
	}
	if st := statsOf(t, e); st.ActiveSequences != 0 || st.KVBytes != 0 {
		t.Errorf("refused requests left state behind: %+v", st)
	}
}
