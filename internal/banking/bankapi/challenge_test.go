package bankapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBearerChallenges: every 401 of a bearer-protected route carries the
// challenge RFC 6750 §3 asks for (the reference pins the body alone,
// UNAUTHORIZED, §13): bare when the request sent no bearer credentials
// (none, or another scheme's), error="invalid_request" when it sent a
// malformed one (§3.1: not a b64token), error="invalid_token" when the
// token is unknown, revoked or expired. The body stays the envelope.
func TestBearerChallenges(t *testing.T) {
	e := newPayEnv(t)
	for _, tc := range []struct {
		name, auth string
		status     int
		challenge  string // "" for none
	}{
		{"no Authorization", "", 401, bearerChallenge},
		{"another scheme", "Basic dXNlcjpwYXNz", 401, bearerChallenge},
		{"malformed token", "Bearer a b", 401, bearerChallenge + `, error="invalid_request", error_description="malformed bearer token"`},
		{"malformed bare token", "pay\u00a0", 401, bearerChallenge + `, error="invalid_request", error_description="malformed bearer token"`},
		{"scheme then HTAB", "Bearer\tpay", 401, bearerChallenge + `, error="invalid_request", error_description="malformed bearer token"`},
		{"scheme without a token", "Bearer", 401, bearerChallenge + `, error="invalid_request", error_description="malformed bearer token"`},
		{"scheme and a space, no token", "Bearer ", 401, bearerChallenge + `, error="invalid_request", error_description="malformed bearer token"`},
		{"unknown token", "Bearer nope", 401, bearerChallenge + `, error="invalid_token"`},
		{"unknown bare token", "nope", 401, bearerChallenge + `, error="invalid_token"`},
		{"good token", "Bearer pay", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.srv.URL+paymentsBase+"/"+newUUID(900)+"/state", nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.status == 200 {
				// A known token passes authentication: whatever the route
				// answers then is no 401 and has no challenge.
				if resp.StatusCode == 401 || resp.Header.Get("WWW-Authenticate") != "" {
					t.Fatalf("%d %s, WWW-Authenticate %q", resp.StatusCode, raw, resp.Header.Values("WWW-Authenticate"))
				}
				return
			}
			var body errorBody
			if resp.StatusCode != tc.status || json.Unmarshal(raw, &body) != nil || body.Cause != "UNAUTHORIZED" || body.ReferenceID == "" {
				t.Fatalf("%d %s, want %d UNAUTHORIZED", resp.StatusCode, raw, tc.status)
			}
			if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != tc.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.challenge)
			}
			if strings.Contains(string(raw), "invalid_") {
				t.Errorf("body %s carries the challenge's error code", raw)
			}
		})
	}
}

// TestScopeChallenges: a known token without the operation's scope is 403
// ACTION_ACCESS_EXCEPTION with RFC 6750 §3.1's insufficient_scope challenge,
// naming the scope when the operation takes one and leaving it out when it
// takes any of several (the attribute would read as all of them needed).
func TestScopeChallenges(t *testing.T) {
	e := newPayEnv(t)
	for _, tc := range []struct {
		name, method, path, body, challenge string
	}{
		{"create takes PAY_DOC_RU", "POST", paymentsBase, payDoc(newUUID(901), nil),
			bearerChallenge + `, error="insufficient_scope", scope="PAY_DOC_RU"`},
		{"state takes any payment scope", "GET", paymentsBase + "/" + newUUID(902) + "/state", "",
			bearerChallenge + `, error="insufficient_scope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, e.srv.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer cards")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var body errorBody
			if resp.StatusCode != 403 || json.Unmarshal(raw, &body) != nil || body.Cause != "ACTION_ACCESS_EXCEPTION" {
				t.Fatalf("%d %s, want 403 ACTION_ACCESS_EXCEPTION", resp.StatusCode, raw)
			}
			if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != tc.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.challenge)
			}
		})
	}
}
