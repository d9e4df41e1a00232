package assistant

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestAuthLocksCancel checks that a request waiting for a key another
// holds leaves when its context ends, without taking the key or leaving
// its entry behind, and that the key is free once the holder unlocks.
func TestAuthLocksCancel(t *testing.T) {
	var l authLocks
	k := authKey{"id", "192.0.2.1"}
	unlock, err := l.lock(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		timeout time.Duration
	}{
		{"cancelled before", 0},
		{"cancelled while waiting", 20 * time.Millisecond},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
		_, err := l.lock(ctx, k)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: %v, want the context's error while the key is held", tt.name, err)
		}
		if n := l.len(); n != 1 {
			t.Fatalf("%s: %d entries, want the holder's alone", tt.name, n)
		}
	}
	unlock()
	if n := l.len(); n != 0 {
		t.Fatalf("%d entries after the holder unlocked, want 0", n)
	}
	unlock, err = l.lock(context.Background(), k)
	if err != nil {
		t.Fatalf("the key after its holder left: %v", err)
	}
	unlock()
}
