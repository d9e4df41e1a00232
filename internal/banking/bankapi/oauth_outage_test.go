package bankapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/storetest"
)

// failingApps is an identity store whose client lookup fails with err: the
// first thing the form endpoints under /ic/sso read.
type failingApps struct {
	banking.IdentityStore
	err error
}

func (f failingApps) GetApp(context.Context, string) (banking.PartnerApp, error) {
	return banking.PartnerApp{}, f.err
}

// TestOAuthEndpointFailureIsReadableByOAuthClients: while the database is
// unavailable the token, revoke and change-client-secret endpoints answer
// 503 with Retry-After, and an internal error 500, with RFC 6749 §5.2's
// error and an ASCII error_description in the body (temporarily_unavailable,
// server_error), which OAuth clients read from a failed token request, and
// with the banking envelope's cause, message and referenceId beside them,
// which the provider's SDKs read; never cached. Before, the body had the
// envelope alone: a generic OAuth client found no error code in it.
func TestOAuthEndpointFailureIsReadableByOAuthClients(t *testing.T) {
	for _, tc := range []struct {
		name, code, cause string
		err               error
		status            int
	}{
		{"database unavailable", "temporarily_unavailable", "UNAVAILABLE_RESOURCE_EXCEPTION", storetest.UnavailableError(t), 503},
		{"internal error", "server_error", "UNKNOWN_EXCEPTION", errors.New("something broke"), 500},
	} {
		id := banking.NewIdentity(failingApps{err: tc.err})
		srv := httptest.NewServer(NewServer(Deps{Auth: id, Identity: id}))
		t.Cleanup(srv.Close)
		form := url.Values{"grant_type": {"authorization_code"}, "code": {"c"}, "client_id": {"app"}, "client_secret": {"s"},
			"token": {"t"}, "access_token": {"t"}, "new_client_secret": {strings.Repeat("n", 40)}}.Encode()
		for _, path := range []string{"/ic/sso/api/v2/oauth/token", "/ic/sso/api/oauth/token", "/ic/sso/api/v1/oauth/revoke",
			"/ic/sso/api/v1/change-client-secret"} {
			t.Run(tc.name+path, func(t *testing.T) {
				resp, err := http.Post(srv.URL+path, "application/x-www-form-urlencoded", strings.NewReader(form))
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var body map[string]any
				if err := json.Unmarshal(raw, &body); err != nil || resp.StatusCode != tc.status {
					t.Fatalf("%d %s, want %d with a JSON body", resp.StatusCode, raw, tc.status)
				}
				desc, _ := body["error_description"].(string)
				if body["error"] != tc.code || desc == "" || strings.ContainsFunc(desc, func(r rune) bool { return r < 0x20 || r > 0x7e || r == '"' || r == '\\' }) {
					t.Errorf("body %s: want error %q and an ASCII error_description (RFC 6749 §5.2)", raw, tc.code)
				}
				if ref, _ := body["referenceId"].(string); body["cause"] != tc.cause || body["message"] == "" || ref == "" {
					t.Errorf("body %s: want the envelope's cause %s, message and referenceId beside", raw, tc.cause)
				}
				if resp.Header.Get("Cache-Control") != "no-store" || (tc.status == 503) != (resp.Header.Get("Retry-After") != "") {
					t.Errorf("Cache-Control %q, Retry-After %q", resp.Header.Get("Cache-Control"), resp.Header.Get("Retry-After"))
				}
			})
		}
	}
}
