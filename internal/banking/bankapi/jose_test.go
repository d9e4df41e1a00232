package bankapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
	"partnerapi/internal/web"
)

func TestPrefersJose(t *testing.T) {
	for _, tc := range []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"application/json"}, false},
		{[]string{"*/*"}, false},
		{[]string{"application/jose"}, true},
		{[]string{"APPLICATION/JOSE"}, true},
		{[]string{"application/jose;q=0"}, false},
		{[]string{"application/jose; q=0.0"}, false},
		{[]string{"application/jose, application/json"}, true},
		{[]string{"application/json, application/jose"}, true},
		{[]string{"application/json, application/jose;q=0.5"}, false},
		{[]string{"application/json;q=0.5, application/jose"}, true},
		{[]string{"application/jose;q=0.5, */*"}, false},
		{[]string{"application/jose, */*;q=0.1"}, true},
		{[]string{"application/jose;q=0.4, application/*;q=0.3, */*"}, true},
		{[]string{"application/json;q=0.2", "application/jose;q=0.3"}, true},
		{[]string{"application/jose+json"}, false},
		{[]string{"application/jose;q=junk"}, true},
	} {
		if got := mentionsJose(tc.accept) && prefersJose(tc.accept); got != tc.want {
			t.Errorf("Accept %q: jose %v, want %v", tc.accept, got, tc.want)
		}
	}
}

// panicAuth panics on every token, so any authenticated route panics.
type panicAuth struct{}

func (panicAuth) Authenticate(context.Context, string) (banking.Principal, error) {
	panic("authenticator exploded")
}

// The two answers the platform writes itself, the 413 of a body declared
// over the limit and the 500 of a recovered panic, are compact JWS under
// the bank's key for a client that asked for application/jose (with
// Server.ErrorWriter installed as the platform's envelope), and stay plain
// JSON for a client that did not.
func TestPlatformErrorsAsJose(t *testing.T) {
	key, err := banking.NewBankKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := NewServer(Deps{Log: log, Auth: panicAuth{}, JWS: key})
	ts := httptest.NewServer(web.API{Name: "banking", Handler: srv, Errors: srv.ErrorWriter(), MaxBody: 64}.Build(log, nil))
	defer ts.Close()
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		cause                    string
	}{
		{"413", "POST", "/fintech/api/v1/payments", `{"purpose":"` + strings.Repeat("x", 100) + `"}`, http.StatusRequestEntityTooLarge, "VALIDATION_FAULT"},
		{"panic 500", "GET", "/fintech/api/v1/client-info", "", http.StatusInternalServerError, ""},
	} {
		for _, jose := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s jose=%v", tc.name, jose), func(t *testing.T) {
				req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
				req.Header.Set("Authorization", "Bearer any")
				req.Header.Set("Content-Type", "application/json")
				if jose {
					req.Header.Set("Accept", "application/jose")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d %s", resp.StatusCode, raw)
				}
				payload := raw
				if jose {
					if ct := resp.Header.Get("Content-Type"); ct != joseContentType {
						t.Fatalf("content type %q, body %s", ct, raw)
					}
					jws, err := gost.ParseJWS(string(raw))
					if err != nil {
						t.Fatalf("not a JWS: %v: %s", err, raw)
					}
					if err := jws.Verify(key.Cert); err != nil || jws.Header.Kid != key.Kid {
						t.Fatalf("JWS %+v does not verify with the bank's key: %v", jws.Header, err)
					}
					// Typed as an answer, so it cannot pass for a webhook.
					if jws.Header.Typ != banking.JWSTypeAnswer {
						t.Fatalf("typ %q, want %q", jws.Header.Typ, banking.JWSTypeAnswer)
					}
					payload = jws.Payload
				} else if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Fatalf("content type %q without jose", ct)
				}
				var eb errorBody
				if err := json.Unmarshal(payload, &eb); err != nil || eb.ReferenceID == "" || (tc.cause != "" && eb.Cause != tc.cause) {
					t.Fatalf("envelope %s: %+v %v", payload, eb, err)
				}
			})
		}
	}
}
