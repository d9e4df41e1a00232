package assistant_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// TestAuthThrottleConfig checks the throttle's settings and its wait on a
// fixed clock: AuthFailures wrong secrets within AuthFailureWindow refuse
// the next attempt with a ThrottledError whose RetryAfter is exactly the
// time until the oldest of them leaves the window (never under a second),
// and a negative AuthFailures turns the throttle off.
func TestAuthThrottleConfig(t *testing.T) {
	const addr = "192.0.2.1"
	type attempt struct {
		after time.Duration // since the previous attempt
		right bool
		want  error         // nil, ErrCredentials or ErrAuthThrottled
		wait  time.Duration // RetryAfter of a refusal
	}
	tests := []struct {
		name     string
		failures int
		window   time.Duration
		attempts []attempt
	}{
		{"two in a minute", 2, time.Minute, []attempt{
			{0, false, assistant.ErrCredentials, 0},
			{10 * time.Second, false, assistant.ErrCredentials, 0},
			{5 * time.Second, true, assistant.ErrAuthThrottled, 45 * time.Second},
			{44 * time.Second, false, assistant.ErrAuthThrottled, time.Second},
			{500 * time.Millisecond, false, assistant.ErrAuthThrottled, time.Second}, // half a second left: at least a second
			{500 * time.Millisecond, false, assistant.ErrCredentials, 0},             // the first left the window
			{0, false, assistant.ErrAuthThrottled, 10 * time.Second},
			{time.Minute, true, nil, 0},
		}},
		{"defaults: five in fifteen minutes", 0, 0, []attempt{
			{0, false, assistant.ErrCredentials, 0},
			{0, false, assistant.ErrCredentials, 0},
			{0, false, assistant.ErrCredentials, 0},
			{0, false, assistant.ErrCredentials, 0},
			{time.Minute, false, assistant.ErrCredentials, 0},
			{time.Minute, true, assistant.ErrAuthThrottled, 13 * time.Minute},
		}},
		{"off", -1, 0, []attempt{
			{0, false, assistant.ErrCredentials, 0},
			{0, false, assistant.ErrCredentials, 0},
			{0, false, assistant.ErrCredentials, 0},
			{0, false, assistant.ErrCredentials, 0},
			{0, false, assistant.ErrCredentials, 0},
			{0, false, assistant.ErrCredentials, 0},
			{0, true, nil, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0)
			s := newService(t, assistant.Config{AuthFailures: tt.failures, AuthFailureWindow: tt.window, Now: func() time.Time { return now }})
			ctx := context.Background()
			c, err := s.CreateClient(ctx, assistant.ScopeB2B, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range tt.attempts {
				now = now.Add(a.after)
				secret := "wrong"
				if a.right {
					secret = c.ClientSecret
				}
				_, _, err := s.IssueLegacyToken(ctx, basic(c.ClientID, secret), addr)
				if a.want == nil && err != nil || a.want != nil && !errors.Is(err, a.want) {
					t.Fatalf("attempt %d: %v, want %v", i+1, err, a.want)
				}
				var te *assistant.ThrottledError
				if errors.As(err, &te) != (a.wait > 0) || te != nil && te.RetryAfter != a.wait {
					t.Fatalf("attempt %d: %#v, want a wait of %v", i+1, te, a.wait)
				}
			}
		})
	}
}

// TestAuthThrottleLog checks the one warning an address reaching the limit
// for an id leaves: it names the client id and the address, and never a
// secret, even when a caller swapped its id and secret.
func TestAuthThrottleLog(t *testing.T) {
	tests := []struct {
		name    string
		swapped bool // the secret sent as the id
	}{
		{"wrong secret", false},
		{"id and secret swapped", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			s := newService(t, assistant.Config{AuthFailures: 2, Log: slog.New(slog.NewTextHandler(&buf, nil))})
			ctx := context.Background()
			c, err := s.CreateClient(ctx, assistant.ScopeB2B, nil)
			if err != nil {
				t.Fatal(err)
			}
			auth, secret := basic(c.ClientID, "wrong-"+c.ClientSecret), "wrong-"+c.ClientSecret
			if tt.swapped {
				auth, secret = basic(c.ClientSecret, c.ClientID), c.ClientSecret
			}
			for range 4 {
				_, _, _ = s.IssueLegacyToken(ctx, auth, "192.0.2.7")
			}
			out := buf.String()
			if n := strings.Count(out, "throttled after failed secret checks"); n != 1 {
				t.Fatalf("%d warnings after 4 failures under a limit of 2, want 1:\n%s", n, out)
			}
			if !strings.Contains(out, "addr=192.0.2.7") || strings.Contains(out, secret) {
				t.Fatalf("the warning lacks the address or shows the secret:\n%s", out)
			}
			// Swapped, the client id went as the secret: it is not logged.
			if got := strings.Contains(out, "client_id="+c.ClientID); got == tt.swapped {
				t.Fatalf("client id logged: %v, want %v:\n%s", got, !tt.swapped, out)
			}
		})
	}
}

// TestAuthThrottleBurst sends concurrent wrong secrets for one key: the
// checks of a key run one at a time, so exactly AuthFailures of them are
// checked and counted and the rest refused, where an unserialised count
// let the whole burst through before the first failure was written. A
// burst at another address is counted apart, and no lock outlives it.
func TestAuthThrottleBurst(t *testing.T) {
	s := newService(t, assistant.Config{AuthFailures: 3})
	ctx := context.Background()
	c, err := s.CreateClient(ctx, assistant.ScopeB2B, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr     string
		requests int
	}{
		{"192.0.2.1", 12},
		{"192.0.2.2", 8},
	}
	type outcome struct {
		addr string
		err  error
	}
	results := make(chan outcome)
	total := 0
	for _, tt := range tests {
		total += tt.requests
		for range tt.requests {
			go func() {
				_, _, err := s.IssueLegacyToken(ctx, basic(c.ClientID, "wrong"), tt.addr)
				results <- outcome{tt.addr, err}
			}()
		}
	}
	checked, refused := map[string]int{}, map[string]int{}
	for range total {
		o := <-results
		switch {
		case errors.Is(o.err, assistant.ErrCredentials):
			checked[o.addr]++
		case errors.Is(o.err, assistant.ErrAuthThrottled):
			refused[o.addr]++
		default:
			t.Fatalf("%s: %v", o.addr, o.err)
		}
	}
	for _, tt := range tests {
		if checked[tt.addr] != 3 || refused[tt.addr] != tt.requests-3 {
			t.Errorf("%s: %d checked and %d refused of %d, want 3 checked", tt.addr, checked[tt.addr], refused[tt.addr], tt.requests)
		}
	}
	if n := s.AuthLocksHeld(); n != 0 {
		t.Errorf("%d keys still locked after the burst", n)
	}
}
