package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestBankingUncleanPaths: the banking API routes an unclean path as its
// clean form (web.FoldPath), as the assistant and the smart home do. A
// client whose base URL ends in a slash (`…/fintech/api/`) sends
// `/fintech/api//v1/payments`, which the provider's nginx front merges;
// before, the platform's ServeMux answered it 307 with an HTML page, which a
// client that does not re-send a POST on a redirect (OkHttp, say) read as
// the answer, and which is no banking envelope either way.
func TestBankingUncleanPaths(t *testing.T) {
	ts := startServer(t, "--only", "banking")
	base := ts.urls["banking"]
	tok := "Bearer " + bankingToken(t, ts, banking.ScopePayDocRU+" "+banking.ScopeGetClientAccounts)
	for _, tc := range []struct {
		name, method, path, auth, body string
		status                         int
		want                           string // in the body
	}{
		{"doubled slash after the prefix", "GET", "/fintech/api//v1/client-info", tok, "", 200, `"inn":"7707083893"`},
		{"dot segment", "GET", "/fintech/api/v1/./client-info", tok, "", 200, `"inn":"7707083893"`},
		{"trailing slash", "GET", "/fintech/api/v1/client-info/", tok, "", 200, `"inn":"7707083893"`},
		{"payment after a base URL with a slash", "POST", "/fintech/api//v1/payments", tok,
			`{"externalId":"0b5a3e8c-3f6d-4b8e-9a51-7c2d4e6f8a9f"}`, 400, `"cause":"VALIDATION_FAULT"`},
		{"token endpoint", "POST", "/ic/sso/api/v2//oauth/token", "", "grant_type=refresh_token", 401, `"error":"invalid_client"`},
		{"no token", "GET", "/fintech/api//v1/client-info", "", "", 401, `"cause":"UNAUTHORIZED"`},
		{"unknown path", "GET", "/fintech/api//v1/nope", tok, "", 404, `"cause":"NOT_FOUND"`},
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
			if strings.HasPrefix(tc.path, "/ic/") {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			} else if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, body := doUnredirected(t, req)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%s %s: %d %s, want %d with %s", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.want)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || !json.Valid(body) {
				t.Errorf("Content-Type %q, body %s", ct, body)
			}
		})
	}
}

// TestBankingUncleanPathsUnderPrefix: with --banking-prefix the path is
// made clean first and the prefix cut from the clean path, so a base URL
// ending in a slash works behind the proxy's path too.
func TestBankingUncleanPathsUnderPrefix(t *testing.T) {
	ts := startServer(t, "--only", "banking", "--banking-prefix", "/bank/fintech/api")
	req, _ := http.NewRequest("GET", ts.urls["banking"]+"/bank/fintech/api//v1/client-info", nil)
	req.Header.Set("Authorization", "Bearer "+bankingToken(t, ts, banking.ScopeGetClientAccounts))
	resp, body := doUnredirected(t, req)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"inn":"7707083893"`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// doUnredirected sends req as a client that follows no redirect, so that a
// redirect the server answers instead of routing shows as itself, and
// returns the answer with its body read.
func doUnredirected(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	return send(t, &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, req)
}
