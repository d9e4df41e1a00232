package bankapi

import (
	"net/http"
	"strconv"
	"testing"

	"partnerapi/internal/banking"
)

// TestRateLimitRetryAfter: a 429 of the rate limit says in Retry-After when
// its budget lets a call through again, in whole seconds rounded up: with
// one call every 4 s and the burst spent, 4 s at most and at least 1, so a
// client that honours it neither hammers the API nor waits blind.
func TestRateLimitRetryAfter(t *testing.T) {
	e := newPayEnv(t)
	e.svc.Gate = &banking.Gate{Limits: &banking.OpLimiter{Rate: 0.25, Burst: 1}, Maintenance: &banking.Maintenance{}}
	path := paymentsBase + "/" + newUUID(72) + "/state"
	for i, want := range []int{404, 429} {
		req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer pay")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("call %d: %d, want %d", i, resp.StatusCode, want)
		}
		ra := resp.Header.Get("Retry-After")
		if want != 429 {
			if ra != "" {
				t.Fatalf("call %d: Retry-After %q on a %d", i, ra, want)
			}
			continue
		}
		if n, err := strconv.Atoi(ra); err != nil || n < 1 || n > 4 {
			t.Fatalf("Retry-After %q, want whole seconds in 1..4", ra)
		}
	}
}
