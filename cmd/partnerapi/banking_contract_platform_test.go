package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// bankPlatformCase is a request the platform answers for the banking API
// before any operation: a path it does not know, or a method the path does
// not serve.
type bankPlatformCase struct {
	name, method, path string
	// status is 404 (held to components.responses.NotFound) or 405 (held
	// to MethodNotAllowed, with allow as its Allow).
	status int
	allow  string
	// jose asks for application/jose, which under /fintech/api makes the
	// answer a compact JWS of the envelope.
	jose bool
}

// TestBankingContractPlatform sends a live server the requests no
// operation of api/banking.yaml can declare an answer for, and holds each
// answer to the component response the contract gives it: 405 with Allow
// for a known path with a wrong method, OAuth endpoints and platform
// routes included, and 404 NOT_FOUND for an unknown path. Partners'
// clients, some generated from the contract, read these too, and the
// envelope must be the one the contract says.
func TestBankingContractPlatform(t *testing.T) {
	c := loadContract(t, "banking")
	ts := startServer(t, "--only", "banking")
	base := ts.urls["banking"]
	cert := bankingJWSCertificate(t, "--data-dir", ts.dataDir)
	const payment = "/fintech/api/v1/payments/c0000000-0000-4000-8000-000000000001"
	cases := []bankPlatformCase{
		{name: "payments by DELETE", method: "DELETE", path: "/fintech/api/v1/payments", status: 405, allow: "POST"},
		{name: "payments by GET under jose", method: "GET", path: "/fintech/api/v1/payments", status: 405, allow: "POST", jose: true},
		{name: "payment by PUT", method: "PUT", path: payment, status: 405, allow: "GET"},
		{name: "payment state by POST", method: "POST", path: payment + "/state", status: 405, allow: "GET"},
		{name: "payment sign by GET", method: "GET", path: payment + "/sign", status: 405, allow: "POST"},
		{name: "webhook by PATCH", method: "PATCH", path: "/fintech/api/v1/webhook", status: 405, allow: "DELETE, GET, PUT"},
		{name: "business cards by DELETE", method: "DELETE", path: "/fintech/api/v1/business-cards", status: 405, allow: "GET, POST"},
		{name: "cert requests by GET", method: "GET", path: "/fintech/api/v1/crypto/cert-requests", status: 405, allow: "POST"},
		{name: "client info by TRACE", method: "TRACE", path: "/fintech/api/v1/client-info", status: 405, allow: "GET"},
		{name: "sandbox clock by GET", method: "GET", path: "/fintech/api/sandbox/clock", status: 405, allow: "POST"},
		{name: "token by GET", method: "GET", path: "/ic/sso/api/v2/oauth/token", status: 405, allow: "POST"},
		{name: "token without version by PUT", method: "PUT", path: "/ic/sso/api/oauth/token", status: 405, allow: "POST"},
		{name: "token v1 by DELETE under jose", method: "DELETE", path: "/ic/sso/api/v1/oauth/token", status: 405, allow: "POST", jose: true},
		{name: "authorize by PUT", method: "PUT", path: "/ic/sso/api/v2/oauth/authorize", status: 405, allow: "GET, POST"},
		{name: "revoke by GET", method: "GET", path: "/ic/sso/api/v1/oauth/revoke", status: 405, allow: "POST"},
		{name: "user info by DELETE", method: "DELETE", path: "/ic/sso/api/v1/oauth/user-info", status: 405, allow: "GET"},
		{name: "change client secret by GET", method: "GET", path: "/ic/sso/api/v1/change-client-secret", status: 405, allow: "POST"},
		{name: "health by POST", method: "POST", path: "/healthz", status: 405, allow: "GET"},
		{name: "metrics by PUT", method: "PUT", path: "/metrics", status: 405, allow: "GET"},
		{name: "contract by DELETE", method: "DELETE", path: "/openapi.yaml", status: 405, allow: "GET"},

		{name: "unknown path under /fintech/api", method: "GET", path: "/fintech/api/v1/nope", status: 404},
		{name: "unknown path under /fintech/api under jose", method: "POST", path: "/fintech/api/v1/nope", status: 404, jose: true},
		{name: "path below an operation's", method: "GET", path: payment + "/state/more", status: 404},
		{name: "unknown path under /ic", method: "POST", path: "/ic/sso/api/v3/oauth/token", status: 404},
		{name: "unknown path outside the prefixes", method: "DELETE", path: "/nope", status: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(context.Background(), tc.method, base+tc.path, nil)
			accept := "application/json"
			if tc.jose {
				accept = "application/jose"
			}
			req.Header.Set("Accept", accept)
			resp, raw := sendRecorded(t, http.DefaultClient, req)
			// Under /fintech/api an Accept that prefers jose wraps the
			// envelope; elsewhere, OAuth and the platform routes, it
			// does not.
			ctype := "application/json"
			if tc.jose && strings.HasPrefix(tc.path, "/fintech/api/") {
				ctype = "application/jose"
			}
			if got := resp.Header.Get("Content-Type"); got != ctype {
				t.Errorf("Content-Type %q, want %s", got, ctype)
			}
			envelope := raw
			if ctype == "application/jose" {
				envelope = openBankJWS(t, raw, cert).Payload
			}
			checkBankPlatformAnswer(t, c, tc, ctype, resp, raw, envelope)
		})
	}
}

// checkBankPlatformAnswer holds a 404 or 405 to the contract's component
// response for it: its status, its headers, the body under the media
// type's schema, and the envelope's cause, message and referenceId.
func checkBankPlatformAnswer(t *testing.T, c *contractSpec, tc bankPlatformCase, ctype string, resp *http.Response, raw, envelope []byte) {
	t.Helper()
	name, message := "NotFound", "Ресурс не найден"
	if tc.status == http.StatusMethodNotAllowed {
		name, message = "MethodNotAllowed", "Метод "+tc.method+" не поддерживается для этого ресурса"
	}
	r := c.componentAnswer(t, name, tc.status, tc.allow, resp, raw)
	mt := r.Content.GetOrZero(ctype)
	if mt == nil || mt.Schema == nil {
		t.Fatalf("%s has no %s schema", name, ctype)
	}
	if ctype == "application/jose" {
		// The JWS itself is a string; its payload is the JSON answer,
		// held to the JSON schema.
		mt = r.Content.GetOrZero("application/json")
		if mt == nil || mt.Schema == nil {
			t.Fatalf("%s has no JSON schema for the JWS payload", name)
		}
	}
	if ok, errs := c.schema.ValidateSchemaBytes(mt.Schema.Schema(), envelope); !ok {
		t.Errorf("%s\nbreaks %s:%s", envelope, name, describe(errs))
	}
	var e struct {
		Cause       string `json:"cause"`
		ReferenceID string `json:"referenceId"`
		Message     string `json:"message"`
	}
	if err := strictJSON(envelope, &e); err != nil || e.Cause != "NOT_FOUND" || e.Message != message {
		t.Errorf("body %s, want {cause NOT_FOUND, message %q} (%v)", envelope, message, err)
	}
	// The request sent no X-Request-Id, so the referenceId is the one the
	// platform made, which leads to the access log line.
	if rid := resp.Header.Get("X-Request-Id"); rid == "" || e.ReferenceID != rid {
		t.Errorf("referenceId %q, want the X-Request-Id %q", e.ReferenceID, rid)
	}
}
