package assistant_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// madeUpID is a fresh client id no client has, as a sprayer makes them.
func madeUpID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// TestAuthThrottleAddrCap checks the cap of one address's failures across
// client ids on a fixed clock: made-up ids, each failing once, refuse
// the address for every id once AuthAddrFailures of them are in the
// window, a known client's right secret too, with the wait until the
// oldest leaves it; another address is not held back; a known client's
// own count still refuses it at AuthFailures; a negative cap turns it off.
func TestAuthThrottleAddrCap(t *testing.T) {
	type attempt struct {
		after  time.Duration // since the previous attempt
		client string        // "made-up" (a fresh id each time), "known" or "known wrong"
		addr   string
		times  int   // repeated this many times (0: once)
		want   error // nil, ErrCredentials or ErrAuthThrottled
		wait   time.Duration
	}
	const a, b = "192.0.2.1", "192.0.2.2"
	tests := []struct {
		name     string
		addrCap  int
		attempts []attempt
	}{
		{"a spray of made-up ids", 4, []attempt{
			{0, "made-up", a, 2, assistant.ErrCredentials, 0},
			{10 * time.Second, "made-up", a, 2, assistant.ErrCredentials, 0},
			{0, "made-up", a, 3, assistant.ErrAuthThrottled, 15*time.Minute - 10*time.Second},
			{0, "known", a, 0, assistant.ErrAuthThrottled, 15*time.Minute - 10*time.Second},
			{0, "made-up", b, 0, assistant.ErrCredentials, 0},
			{0, "known", b, 0, nil, 0},
			{15*time.Minute - 11*time.Second, "made-up", a, 0, assistant.ErrAuthThrottled, time.Second},
			{time.Second, "made-up", a, 2, assistant.ErrCredentials, 0}, // the first two left the window
			{0, "known", a, 0, assistant.ErrAuthThrottled, 10 * time.Second},
			{10 * time.Second, "known", a, 0, nil, 0},
		}},
		{"a known id's own count comes first", 4, []attempt{
			{0, "known wrong", a, 2, assistant.ErrCredentials, 0},
			{0, "known", a, 0, assistant.ErrAuthThrottled, 15 * time.Minute},
			{0, "made-up", a, 2, assistant.ErrCredentials, 0},
			{0, "made-up", a, 0, assistant.ErrAuthThrottled, 15 * time.Minute},
		}},
		{"defaults: fifty", 0, []attempt{
			{0, "made-up", a, 49, assistant.ErrCredentials, 0},
			{0, "known", a, 0, nil, 0},
			{0, "made-up", a, 0, assistant.ErrCredentials, 0},
			{0, "made-up", a, 0, assistant.ErrAuthThrottled, 15 * time.Minute},
			{0, "known", a, 0, assistant.ErrAuthThrottled, 15 * time.Minute},
		}},
		// An IPv6 caller is counted by its /64; IPv4 addresses one by
		// one, mapped into IPv6 or not.
		{"an IPv6 /64 is one address", 4, []attempt{
			{0, "made-up", "2001:db8:1:2::a", 2, assistant.ErrCredentials, 0},
			{0, "made-up", "2001:db8:1:2:ffff:ffff:ffff:fffe", 2, assistant.ErrCredentials, 0},
			{0, "made-up", "2001:db8:1:2::b", 0, assistant.ErrAuthThrottled, 15 * time.Minute},
			{0, "known", "2001:db8:1:2:8000::1", 0, assistant.ErrAuthThrottled, 15 * time.Minute},
			{0, "known", "2001:db8:1:3::a", 0, nil, 0},
			{0, "made-up", "2001:db8:1:3::a", 0, assistant.ErrCredentials, 0},
			{0, "made-up", "192.0.2.9", 2, assistant.ErrCredentials, 0},
			{0, "made-up", "::ffff:192.0.2.9", 2, assistant.ErrCredentials, 0},
			{0, "made-up", "192.0.2.9", 0, assistant.ErrAuthThrottled, 15 * time.Minute},
			{0, "made-up", "192.0.2.10", 0, assistant.ErrCredentials, 0},
		}},
		{"off", -1, []attempt{
			{0, "made-up", a, 60, assistant.ErrCredentials, 0},
			{0, "known", a, 0, nil, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0)
			s := newService(t, assistant.Config{AuthFailures: 2, AuthAddrFailures: tt.addrCap, Now: func() time.Time { return now }})
			ctx := context.Background()
			c, err := s.CreateClient(ctx, assistant.ScopeB2B, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, at := range tt.attempts {
				now = now.Add(at.after)
				for j := range max(at.times, 1) {
					id, secret := madeUpID(), "wrong"
					switch at.client {
					case "known":
						id, secret = c.ClientID, c.ClientSecret
					case "known wrong":
						id = c.ClientID
					}
					_, _, err := s.IssueLegacyToken(ctx, basic(id, secret), at.addr)
					if at.want == nil && err != nil || at.want != nil && !errors.Is(err, at.want) {
						t.Fatalf("attempt %d (#%d): %v, want %v", i+1, j+1, err, at.want)
					}
					var te *assistant.ThrottledError
					if errors.As(err, &te) != (at.wait > 0) || te != nil && te.RetryAfter != at.wait {
						t.Fatalf("attempt %d (#%d): %#v, want a wait of %v", i+1, j+1, te, at.wait)
					}
				}
			}
		})
	}
}

// TestAuthThrottleAddrCapLog checks the one warning an address reaching
// its cap across ids leaves: it names the address and the cap, and no
// made-up id, however many refusals follow.
func TestAuthThrottleAddrCapLog(t *testing.T) {
	var buf bytes.Buffer
	s := newService(t, assistant.Config{AuthAddrFailures: 3, Log: slog.New(slog.NewTextHandler(&buf, nil))})
	ctx := context.Background()
	for range 8 {
		_, _, _ = s.IssueLegacyToken(ctx, basic(madeUpID(), "wrong"), "192.0.2.8")
	}
	out := buf.String()
	if n := strings.Count(out, "throttled after failed secret checks across client ids"); n != 1 {
		t.Fatalf("%d warnings after 8 made-up ids under a cap of 3, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "addr=192.0.2.8") || !strings.Contains(out, "failures=3") || strings.Contains(out, "client_id=") {
		t.Fatalf("the warning lacks the address or the cap, or names an id:\n%s", out)
	}
	// An IPv6 sprayer is named by the /64 it was counted by.
	buf.Reset()
	for i := range 4 {
		_, _, _ = s.IssueLegacyToken(ctx, basic(madeUpID(), "wrong"), fmt.Sprintf("2001:db8:9:9::%x", i+1))
	}
	if out := buf.String(); !strings.Contains(out, "addr=2001:db8:9:9::/64") {
		t.Fatalf("the warning of an IPv6 /64 does not name it:\n%s", out)
	}
}

// TestAuthThrottleAddrCapBurst sends concurrent wrong secrets of made-up
// ids from one address. Their keys differ, so nothing in the process
// serialises them; the store's count and write of one address do, so
// exactly AuthAddrFailures of them are checked and recorded and the rest
// refused, where the count read before the check alone let the whole
// burst through. Another address's burst is counted apart.
func TestAuthThrottleAddrCapBurst(t *testing.T) {
	const addrCap = 4
	s := newService(t, assistant.Config{AuthAddrFailures: addrCap})
	ctx := context.Background()
	tests := []struct {
		addr     string
		requests int
	}{
		{"192.0.2.1", 20},
		{"192.0.2.2", 10},
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
				_, _, err := s.IssueLegacyToken(ctx, basic(madeUpID(), "wrong"), tt.addr)
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
		if checked[tt.addr] != addrCap || refused[tt.addr] != tt.requests-addrCap {
			t.Errorf("%s: %d answered 401 and %d refused of %d, want %d answered 401", tt.addr, checked[tt.addr], refused[tt.addr], tt.requests, addrCap)
		}
	}
}
