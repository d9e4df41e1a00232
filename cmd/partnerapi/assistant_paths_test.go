package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAssistantUncleanPaths: a client that builds its URLs by
// concatenation (a base URL ending in a slash, then "/chat/completions")
// sends a path that is not clean. The assistant routes it as its clean
// path, as the nginx in front of the provider's service does (its default
// merge_slashes), so the answer is the operation's own, JSON in the API's
// envelope with X-Session-Id (reference §2, §4). Before, the platform's
// ServeMux answered it 307 with a redirect page in HTML, which a client
// that does not follow redirects (httpx, the Python SDK's) read as an
// error it could not parse.
func TestAssistantUncleanPaths(t *testing.T) {
	ts := startServer(t, "--only", "assistant", "--models-dir", assistantModelsDir(t))
	base := ts.urls["assistant"]
	creds, err := createAssistantClient(t, ts.dataDir, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	tok := assistantToken(t, base, "ASSISTANT_API_CORP", creds["authorization_key"])
	form := url.Values{"scope": {"ASSISTANT_API_CORP"}}.Encode()
	for _, tc := range []struct {
		name, method, path, auth, ctype, body string
		status                                int
		want                                  string // in the body
	}{
		{"doubled slash", "GET", "/api/v1//models", "Bearer " + tok, "", "", 200, `"object":"list"`},
		{"leading doubled slash", "GET", "//api/v1/models", "Bearer " + tok, "", "", 200, `"object":"list"`},
		{"dot segment", "GET", "/api/v1/./models/stories260K", "Bearer " + tok, "", "", 200, `"id":"stories260K:1.0"`},
		{"trailing slash", "GET", "/api/v1/models/", "Bearer " + tok, "", "", 200, `"object":"list"`},
		{"chat after a base URL with a slash", "POST", "/api/v1//chat/completions", "Bearer " + tok, "application/json",
			`{"model":"stories260K","messages":[{"role":"user","content":"Once"}],"max_tokens":2}`, 200, `"object":"chat.completion"`},
		{"token endpoint", "POST", "/api/v2//oauth", "Basic " + creds["authorization_key"], "application/x-www-form-urlencoded", form, 200, `"access_token"`},
		{"no token", "GET", "/api/v1//models", "", "", "", 401, `{"status":401,"message":"Unauthorized"}`},
		{"unknown path", "GET", "/api/v1//nope", "Bearer " + tok, "", "", 404, `{"status":404,"message":"Not Found"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.EscapedPath() != tc.path {
				t.Fatalf("the client would send %q", req.URL.EscapedPath())
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			req.Header.Set("RqUID", "72384bd5-0ca0-4cfd-9ac7-65d75258284c")
			resp, body := doUnredirected(t, req)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%s %s: %d %s, want %d with %s", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" || !json.Valid(body) {
				t.Errorf("Content-Type %q, body %s", ct, body)
			}
			if resp.Header.Get("X-Session-Id") == "" {
				t.Error("no X-Session-Id")
			}
		})
	}
}
