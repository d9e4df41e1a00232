package local

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// TestKVPoolTrimmedWhenIdle checks that a finished request's KV memory
// stays in the model's pool while the engine is busy or briefly idle, and
// goes back to the system once the engine has been idle for KVPoolIdle
// (and never with a negative KVPoolIdle).
func TestKVPoolTrimmedWhenIdle(t *testing.T) {
	for _, tc := range []struct {
		idle    time.Duration
		trimmed bool
	}{{80 * time.Millisecond, true}, {-1, false}} {
		e := openEngine(t, "", Options{PrefixCache: -1, KVPoolIdle: tc.idle})
		req := assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time"), MaxTokens: 8}
		start := time.Now()
		if _, err := e.Generate(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		// The engine went idle after start, so a pool found empty counts
		// against it only while less than idle has passed since start: on
		// a loaded machine the trim may have come before the look, which
		// is what it is for.
		st := statsOf(t, e)
		early := tc.idle < 0 || time.Since(start) < tc.idle
		if st.KVBytes != 0 || (st.PooledKVBytes == 0 && early) {
			t.Fatalf("idle %v, right after the request: %+v", tc.idle, st)
		}
		if !early {
			t.Logf("idle %v: the look came %v after the request began; whether the pool was kept is not asked", tc.idle, time.Since(start))
		}
		wait := 300 * time.Millisecond
		if tc.trimmed {
			wait = 3 * time.Second
		}
		deadline := time.Now().Add(wait)
		for time.Now().Before(deadline) && statsOf(t, e).PooledKVBytes != 0 {
			time.Sleep(20 * time.Millisecond)
		}
		if got := statsOf(t, e).PooledKVBytes == 0; got != tc.trimmed {
			t.Errorf("idle %v: pool trimmed %v, want %v", tc.idle, got, tc.trimmed)
		}
		// A trimmed pool serves the next request from fresh memory.
		if _, err := e.Generate(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
}
