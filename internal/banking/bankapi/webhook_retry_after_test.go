package bankapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// TestWebhookHonoursRetryAfter: a receiver that answers 429 or 503 with a
// Retry-After (RFC 9110 §10.2.3, in seconds or as an HTTP date) is not
// called again before that time, within the dispatcher's longest wait
// (MaxBackoff, PauseMax); one without it, or with a value that is neither
// form, gets the retry at the backoff. Reference §12 publishes no retry
// schedule, so this is what a partner shedding load expects of any sender.
// Before, the header was ignored and the retry came at the backoff, a
// second later here, into the overload the receiver had announced.
func TestWebhookHonoursRetryAfter(t *testing.T) {
	for i, tc := range []struct {
		name       string
		status     int
		retryAfter func(now time.Time) string
		early      time.Duration // no second call at now+early
		late       time.Duration // the second call, delivered, by now+late
	}{
		{"503, seconds", 503, func(time.Time) string { return "120" }, 119 * time.Second, 121 * time.Second},
		{"429, seconds", 429, func(time.Time) string { return "30" }, 29 * time.Second, 31 * time.Second},
		{"503, HTTP date", 503, func(now time.Time) string { return now.Add(90 * time.Second).UTC().Format(http.TimeFormat) }, 89 * time.Second, 91 * time.Second},
		{"503, capped at the longest wait", 503, func(time.Time) string { return "99999999999" }, 9 * time.Minute, 10*time.Minute + time.Second},
		{"503, no header", 503, func(time.Time) string { return "" }, 0, time.Second},
		{"503, not a Retry-After", 503, func(time.Time) string { return "soon" }, 0, time.Second},
		{"503, a date past", 503, func(now time.Time) string { return now.Add(-time.Hour).UTC().Format(http.TimeFormat) }, 0, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := payNow
			var mu sync.Mutex
			calls := 0
			partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls == 1 {
					if v := tc.retryAfter(now); v != "" {
						w.Header().Set("Retry-After", v)
					}
					w.WriteHeader(tc.status)
					return
				}
				w.WriteHeader(204)
			}))
			defer partner.Close()
			store := implementedPayments(t, newUUID(2100+i))
			disp := &banking.WebhookDispatcher{Outbox: store, Sender: &WebhookSender{Targets: &banking.Webhooks{Store: store,
				Default: banking.WebhookTarget{URL: partner.URL, Secret: []byte("s3cret")}}, URLs: loopbackURLs},
				BaseBackoff: time.Second, MaxBackoff: 10 * time.Minute, PauseBase: time.Second, PauseMax: 10 * time.Minute,
				Now: func() time.Time { return now }}
			run := func(at time.Duration) int {
				t.Helper()
				now = payNow.Add(at)
				if _, err := disp.RunOnce(context.Background()); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				return calls
			}
			if n := run(0); n != 1 {
				t.Fatalf("first pass: %d calls", n)
			}
			if tc.early > 0 {
				if n := run(tc.early); n != 1 {
					t.Fatalf("called again %v after a Retry-After of %q", tc.early, tc.retryAfter(payNow))
				}
			}
			if n := run(tc.late); n != 2 {
				t.Fatalf("%d calls by %v, want the retry", n, tc.late)
			}
			ds, err := store.PartnerDeliveries(context.Background(), "", 10)
			if err != nil || len(ds) != 1 || ds[0].State != "DELIVERED" {
				t.Fatalf("deliveries %+v %v", ds, err)
			}
		})
	}
}
