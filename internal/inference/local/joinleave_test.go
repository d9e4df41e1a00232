package local

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestRequestJoinsAndLeavesRunningBatch runs the engine's own scheduler
// goroutine: while one stream decodes, a second request arrives, joins the
// batch at the next step (its first token is drawn in the step after the
// scheduler took it in, sharing that step with the running stream), reaches
// its max_tokens in the middle of the other's generation and leaves at
// once, taking its KV memory out of the batch, with the tokens it produces
// alone.
func TestRequestJoinsAndLeavesRunningBatch(t *testing.T) {
	e := openEngine(t, "", Options{})
	s := e.models["stories260K"]
	ctx, stopRunning := context.WithCancel(context.Background())
	defer stopRunning()

	type timed struct {
		tok int
		at  time.Time
	}
	var mu sync.Mutex
	var running []timed
	warm := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := e.GenerateTokensTimed(ctx, "stories260K", storiesPromptIDs, GenerateParams{MaxTokens: 1500, IgnoreEOS: true},
			func(_, tok int, at time.Time) {
				mu.Lock()
				running = append(running, timed{tok, at})
				if len(running) == 20 {
					close(warm)
				}
				mu.Unlock()
			})
		done <- err
	}()
	<-warm
	before := statsOf(t, e)

	joining := []int{1, 317, 269, 274, 287, 263, 377, 267, 265}
	const maxTokens = 6
	release, err := s.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.submit(ctx, joining, GenerateParams{MaxTokens: maxTokens, N: 1, MaxContext: s.info.ContextWindow})
	if err != nil {
		t.Fatal(err)
	}
	// The scheduler has taken the request in, between two steps.
	taken := time.Now()
	var got []timed
	err = r.follow(ctx, func(ev event) error {
		if ev.tok >= 0 {
			got = append(got, timed{ev.tok, ev.at})
		}
		return nil
	})
	release()
	if err != nil {
		t.Fatal(err)
	}
	after := statsOf(t, e)
	if len(got) != maxTokens {
		t.Fatalf("the joining request got %d tokens, want %d", len(got), maxTokens)
	}
	// The running stream's goroutine hands its tokens over when it gets to
	// run: wait until it has seen a step after the joining request's last.
	var stream []timed
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		stream = slices.Clone(running)
		mu.Unlock()
		if stream[len(stream)-1].at.After(got[len(got)-1].at) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running stream got no token after the joining request left")
		}
	}

	// Between the moment the scheduler took the request in and its first
	// token, the running stream may get the token of the step that
	// prefilled the request, no other.
	between := 0
	for _, x := range stream {
		if x.at.After(taken) && !x.at.After(got[0].at) {
			between++
		}
	}
	if between > 1 {
		t.Errorf("the running stream got %d tokens before the joining request's first: it did not join at the next step", between)
	}
	// Each of the request's tokens after the first came from a step that
	// also gave the running stream one.
	for i, x := range got[1:] {
		// (The running stream is first in the batch, so its token of a
		// step is taken just before the joining request's.)
		if !slices.ContainsFunc(stream, func(y timed) bool { return y.at.After(got[i].at) && !y.at.After(x.at) }) {
			t.Errorf("token %d of the joining request was drawn in a step without the running stream", i+1)
		}
	}
	if after.MaxBatch < 2 {
		t.Errorf("the two requests never shared a step: %+v", after)
	}
	// It left as soon as it finished, while the other still runs: the batch
	// holds the running stream's sequence and KV memory only.
	if after.ActiveRequests != 1 || after.ActiveSequences != 1 || after.PrefillingRequests != 0 || after.KVBytes != before.KVBytes {
		t.Errorf("after the joining request finished: %+v (before it joined: %+v)", after, before)
	}
	select {
	case err := <-done:
		t.Fatalf("the running stream ended before the joining request left: %v", err)
	default:
	}
	stopRunning()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("running stream: %v", err)
	}

	alone, err := openEngine(t, "", Options{}).GenerateTokens(context.Background(), "stories260K", joining, GenerateParams{MaxTokens: maxTokens}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range got {
		if x.tok != alone[0][i] {
			t.Fatalf("batched tokens differ from alone at %d: %v vs %v", i, got, alone[0])
		}
	}
}
