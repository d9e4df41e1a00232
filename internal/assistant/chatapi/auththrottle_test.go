package chatapi

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/web"
)

// throttleStep is one token request of a throttle test: through the OAuth
// endpoint or the legacy one, for a client with its secret or a wrong
// one, from an address (X-Forwarded-For, which only a trusted proxy's
// requests are believed for).
type throttleStep struct {
	name    string
	legacy  bool   // POST /api/v1/token instead of /api/v2/oauth
	client  string // "a", "b", "unknown" (a client id no client has) or "made-up" (a fresh such id each request)
	right   bool   // the client's own secret, else a wrong one
	from    string // X-Forwarded-For, "" for none
	advance time.Duration
	times   int // repeated this many times (0: once)
	status  int
	body    string // the whole body of a refusal, "" to skip
}

// runThrottle plays steps against f with two clients of scope CORP.
func runThrottle(t *testing.T, f *fixture, steps []throttleStep) {
	t.Helper()
	clients := map[string]assistant.Credentials{"a": f.client(assistant.ScopeCorp), "b": f.client(assistant.ScopeCorp)}
	clients["unknown"] = assistant.Credentials{ClientID: "c757a9c5-de04-498f-baa3-efcc54de7853", ClientSecret: "x"}
	for _, st := range steps {
		f.advance(st.advance)
		c := clients[st.client]
		secret := "wrong-" + c.ClientSecret
		if st.right {
			secret = c.ClientSecret
		}
		for i := range max(st.times, 1) {
			if st.client == "made-up" {
				var b [16]byte
				_, _ = rand.Read(b[:])
				c = assistant.Credentials{ClientID: fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), ClientSecret: "x"}
				secret = "wrong-x"
			}
			path, body := "/api/v2/oauth", url.Values{"scope": {"ASSISTANT_API_CORP"}}.Encode()
			if st.legacy {
				path, body = "/api/v1/token", ""
			}
			req, _ := http.NewRequest("POST", f.url+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("RqUID", rqUID)
			req.Header.Set("Authorization", basicAuth(c.ClientID, secret))
			if st.from != "" {
				req.Header.Set("X-Forwarded-For", st.from)
			}
			resp, got := f.do(req)
			if resp.StatusCode != st.status {
				t.Fatalf("%s (#%d): got %d %s, want %d", st.name, i+1, resp.StatusCode, got, st.status)
			}
			if st.body != "" && strings.TrimSpace(string(got)) != st.body {
				t.Fatalf("%s (#%d): got %s, want %s", st.name, i+1, got, st.body)
			}
			switch st.status {
			case http.StatusTooManyRequests:
				// The wait is until the oldest of the five failures
				// leaves the 15-minute window, a few seconds ago at most.
				ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
				if err != nil || ra < 890 || ra > 900 {
					t.Fatalf("%s (#%d): Retry-After %q, want the window's rest, 890-900 s", st.name, i+1, resp.Header.Get("Retry-After"))
				}
			case http.StatusUnauthorized:
				if h := resp.Header.Get("WWW-Authenticate"); h != basicChallenge {
					t.Fatalf("%s (#%d): WWW-Authenticate %q, want %q", st.name, i+1, h, basicChallenge)
				}
			}
		}
	}
}

const (
	oauthCredentials = `{"code":6,"message":"credentials doesn't match db data"}`
	oauthThrottled   = `{"code":8,"message":"Too Many Requests"}`
	apiUnauthorized  = `{"status":401,"message":"Unauthorized"}`
	apiThrottled     = `{"status":429,"message":"Too Many Requests"}`
)

// TestAuthThrottle drives the failed-login throttle of the two token
// endpoints over HTTP behind a trusted proxy, which names each request's
// address in X-Forwarded-For: five wrong secrets of one client id from one
// address, through either endpoint, refuse that address for that id, its
// right secret included, until the window passes, in each endpoint's own
// envelope with the wait in Retry-After; other addresses and other ids
// are not held back, and a success forgets its own key's failures only.
// Fifty failures from one address across made-up ids refuse that address
// for every id, known clients' right secrets too, and no other address.
func TestAuthThrottle(t *testing.T) {
	loopback := web.TrustedProxies{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	tests := []struct {
		name  string
		steps []throttleStep
	}{
		{"five failures across both endpoints", []throttleStep{
			{name: "oauth wrong", client: "a", from: "192.0.2.1", times: 3, status: 401, body: oauthCredentials},
			{name: "legacy wrong", legacy: true, client: "a", from: "192.0.2.1", times: 2, status: 401, body: apiUnauthorized},
			{name: "oauth sixth", client: "a", from: "192.0.2.1", status: 429, body: oauthThrottled},
			{name: "legacy sixth", legacy: true, client: "a", from: "192.0.2.1", status: 429, body: apiThrottled},
			{name: "right secret, same key", client: "a", right: true, from: "192.0.2.1", status: 429, body: oauthThrottled},
			{name: "right secret, other address", client: "a", right: true, from: "192.0.2.2", status: 200},
			{name: "other client, same address", client: "b", right: true, from: "192.0.2.1", status: 200},
			{name: "other client's wrong, same address", client: "b", from: "192.0.2.1", status: 401, body: oauthCredentials},
			{name: "a success elsewhere resets nothing here", client: "a", right: true, from: "192.0.2.1", status: 429},
			{name: "window passed", advance: 15 * time.Minute, client: "a", right: true, from: "192.0.2.1", status: 200},
		}},
		{"a success forgets its own key", []throttleStep{
			{name: "four wrong", client: "a", from: "192.0.2.3", times: 4, status: 401},
			{name: "four wrong elsewhere", client: "a", from: "192.0.2.4", times: 4, status: 401},
			{name: "success", legacy: true, client: "a", right: true, from: "192.0.2.3", status: 200},
			{name: "four wrong again", client: "a", from: "192.0.2.3", times: 4, status: 401},
			{name: "the other address kept its four", client: "a", from: "192.0.2.4", status: 401},
			{name: "and is refused at the sixth", client: "a", from: "192.0.2.4", status: 429},
		}},
		{"a spray of made-up ids is capped per address", []throttleStep{
			{name: "oauth, thirty ids", client: "made-up", from: "192.0.2.6", times: 30, status: 401, body: oauthCredentials},
			{name: "legacy, twenty ids", legacy: true, client: "made-up", from: "192.0.2.6", times: 20, status: 401, body: apiUnauthorized},
			{name: "oauth, the fifty-first id", client: "made-up", from: "192.0.2.6", status: 429, body: oauthThrottled},
			{name: "legacy, the fifty-second id", legacy: true, client: "made-up", from: "192.0.2.6", status: 429, body: apiThrottled},
			{name: "a known client's right secret there", client: "a", right: true, from: "192.0.2.6", status: 429, body: oauthThrottled},
			{name: "and through the legacy endpoint", legacy: true, client: "b", right: true, from: "192.0.2.6", status: 429, body: apiThrottled},
			{name: "another address's made-up id", client: "made-up", from: "192.0.2.7", status: 401, body: oauthCredentials},
			{name: "another address's known client", client: "a", right: true, from: "192.0.2.7", status: 200},
			{name: "window passed", advance: 15 * time.Minute, client: "a", right: true, from: "192.0.2.6", status: 200},
			{name: "room for a made-up id again", client: "made-up", from: "192.0.2.6", status: 401, body: oauthCredentials},
		}},
		{"unknown client ids count like known ones", []throttleStep{
			{name: "five wrong", client: "unknown", from: "192.0.2.5", times: 5, status: 401, body: oauthCredentials},
			{name: "sixth", client: "unknown", from: "192.0.2.5", status: 429, body: oauthThrottled},
			{name: "legacy sixth", legacy: true, client: "unknown", from: "192.0.2.5", status: 429, body: apiThrottled},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runThrottle(t, newFixtureOn(t, toolEngine{}, web.Platform{TrustedProxies: loopback}), tt.steps)
		})
	}
}

// TestAuthThrottleForgedForwarding checks that without --trusted-proxies a
// client cannot leave its count by naming another address in
// X-Forwarded-For: each request is counted at its connection's peer.
func TestAuthThrottleForgedForwarding(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	steps := []throttleStep{{name: "five wrong, no header", client: "a", times: 5, status: 401}}
	for i := range 3 {
		from := "198.51.100." + strconv.Itoa(i)
		steps = append(steps, throttleStep{name: "forged " + from, client: "a", right: true, from: from, status: 429})
	}
	runThrottle(t, f, steps)
}
