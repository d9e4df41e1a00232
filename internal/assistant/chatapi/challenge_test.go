package chatapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// TestChallenges checks the WWW-Authenticate of every 401 the API answers,
// and that the bodies are the reference's, unchanged: Bearer on /api/v1
// (RFC 6750 §3: bare when no bearer token was sent, error="invalid_request"
// when one was but is not a b64token, error="invalid_token" when one was
// and is unknown or expired), Basic on the two token
// endpoints (RFC 6749 §5.2). Answers that are no 401 carry none.
func TestChallenges(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	c := f.client(assistant.ScopeCorp)
	tok := f.token(c, "ASSISTANT_API_CORP")
	expiring := f.token(c, "ASSISTANT_API_CORP")
	invalid := bearerChallenge + `, error="invalid_token", error_description="Unauthorized"`
	expired := bearerChallenge + `, error="invalid_token", error_description="Token has expired"`
	malformed := bearerChallenge + `, error="invalid_request", error_description="malformed bearer token"`
	oauth := func(auth, scope string) *http.Request {
		req, _ := http.NewRequest("POST", f.url+"/api/v2/oauth", strings.NewReader(url.Values{"scope": {scope}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("RqUID", rqUID)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		return req
	}
	api := func(method, path, auth string) *http.Request {
		req, _ := http.NewRequest(method, f.url+path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		return req
	}
	tests := []struct {
		name      string
		req       *http.Request
		advance   time.Duration // before the request
		status    int
		body      string // "" to skip
		challenge string // "" for none
	}{
		{"no token", api("GET", "/api/v1/models", ""), 0, 401, `{"status":401,"message":"Unauthorized"}`, bearerChallenge},
		{"no token, JSON route", api("POST", "/api/v1/chat/completions", ""), 0, 401, `{"status":401,"message":"Unauthorized"}`, bearerChallenge},
		{"another scheme", api("GET", "/api/v1/balance", "Basic "+c.AuthorizationKey), 0, 401, `{"status":401,"message":"Unauthorized"}`, bearerChallenge},
		{"bare token, no scheme", api("GET", "/api/v1/balance", tok), 0, 401, `{"status":401,"message":"Unauthorized"}`, bearerChallenge},
		{"malformed token", api("GET", "/api/v1/models", "Bearer a b"), 0, 401, `{"status":401,"message":"Unauthorized"}`, malformed},
		{"token with a Unicode space", api("GET", "/api/v1/models", "Bearer "+tok+"\u00a0"), 0, 401, `{"status":401,"message":"Unauthorized"}`, malformed},
		{"scheme alone", api("GET", "/api/v1/models", "Bearer"), 0, 401, `{"status":401,"message":"Unauthorized"}`, malformed},
		{"malformed token, JSON route", api("POST", "/api/v1/chat/completions", "Bearer a,b"), 0, 401, `{"status":401,"message":"Unauthorized"}`, malformed},
		{"unknown token", api("GET", "/api/v1/models", "Bearer nope"), 0, 401, `{"status":401,"message":"Unauthorized"}`, invalid},
		{"good token", api("GET", "/api/v1/models", "Bearer "+tok), 0, 200, "", ""},
		{"oauth without Authorization", oauth("", "ASSISTANT_API_CORP"), 0, 401, `{"code":4,"message":"Can't decode 'Authorization' header"}`, basicChallenge},
		{"oauth wrong secret", oauth(basicAuth(c.ClientID, "nope"), "ASSISTANT_API_CORP"), 0, 401, `{"code":6,"message":"credentials doesn't match db data"}`, basicChallenge},
		{"oauth bad scope", oauth("Basic "+c.AuthorizationKey, "NOPE"), 0, 400, `{"code":1,"message":"scope data format invalid"}`, ""},
		{"oauth success", oauth("Basic "+c.AuthorizationKey, "ASSISTANT_API_CORP"), 0, 200, "", ""},
		{"legacy wrong secret", api("POST", "/api/v1/token", basicAuth(c.ClientID, "nope")), 0, 401, `{"status":401,"message":"Unauthorized"}`, basicChallenge},
		{"legacy bearer", api("POST", "/api/v1/token", "Bearer "+tok), 0, 401, `{"status":401,"message":"Unauthorized"}`, basicChallenge},
		{"expired token", api("GET", "/api/v1/models", "Bearer "+expiring), 31 * time.Minute, 401, `{"status":401,"message":"Token has expired"}`, expired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.advance(tt.advance)
			resp, body := f.do(tt.req)
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, body, tt.status)
			}
			if tt.body != "" && strings.TrimSpace(string(body)) != tt.body {
				t.Errorf("body %s, want %s", body, tt.body)
			}
			if got := resp.Header.Values("WWW-Authenticate"); tt.challenge == "" && len(got) != 0 || tt.challenge != "" && (len(got) != 1 || got[0] != tt.challenge) {
				t.Errorf("WWW-Authenticate %q, want %q", got, tt.challenge)
			}
		})
	}
}
