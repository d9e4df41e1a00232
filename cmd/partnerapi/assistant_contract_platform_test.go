package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/assistant/chatapi"
	"partnerapi/internal/web"
)

// platformCase is a request the platform answers for the assistant API
// before any operation: a path it does not know, or a method the path
// does not serve.
type platformCase struct {
	name, method, path string
	// status is 404 (held to components.responses.NotFound) or 405 (held
	// to MethodNotAllowed, with allow as its Allow).
	status int
	allow  string
	// token says the answer is in the token endpoint's {code, message}.
	token bool
}

// TestAssistantContractPlatform sends a live server the requests no
// operation of api/assistant.yaml can declare an answer for, and holds
// each answer to the component response the contract gives it: 404 for an
// unknown path, under /api/v1 or elsewhere, and 405 with Allow for a known
// path with a wrong method, platform routes included. A generated client
// reads these too, and their envelope must be the one the contract says.
func TestAssistantContractPlatform(t *testing.T) {
	c := loadAssistantContract(t)
	base := startServer(t, "--only", "assistant").urls["assistant"]
	cases := []platformCase{
		{name: "unknown path under /api/v1", method: "GET", path: "/api/v1/nope", status: 404},
		{name: "unknown path under /api/v1 by POST", method: "POST", path: "/api/v1/chat", status: 404},
		{name: "path below an operation's", method: "GET", path: "/api/v1/files/f1/content/more", status: 404},
		{name: "unknown path under /api/v2", method: "GET", path: "/api/v2/nope", status: 404},
		{name: "unknown path outside /api", method: "DELETE", path: "/nope", status: 404},

		{name: "models by POST", method: "POST", path: "/api/v1/models", status: 405, allow: "GET"},
		{name: "model by DELETE", method: "DELETE", path: "/api/v1/models/stories260K", status: 405, allow: "GET"},
		{name: "chat by GET", method: "GET", path: "/api/v1/chat/completions", status: 405, allow: "POST"},
		{name: "files by DELETE", method: "DELETE", path: "/api/v1/files", status: 405, allow: "GET, POST"},
		{name: "file content by POST", method: "POST", path: "/api/v1/files/f1/content", status: 405, allow: "GET"},
		{name: "file delete by GET", method: "GET", path: "/api/v1/files/f1/delete", status: 405, allow: "POST"},
		{name: "legacy token by GET", method: "GET", path: "/api/v1/token", status: 405, allow: "POST"},
		{name: "oauth by GET", method: "GET", path: "/api/v2/oauth", status: 405, allow: "POST", token: true},
		{name: "health by POST", method: "POST", path: "/healthz", status: 405, allow: "GET"},
		{name: "metrics by PUT", method: "PUT", path: "/metrics", status: 405, allow: "GET"},
		{name: "contract by DELETE", method: "DELETE", path: "/openapi.yaml", status: 405, allow: "GET"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(context.Background(), tc.method, base+tc.path, nil)
			req.Header.Set("Accept", "application/json")
			req.Header.Set("X-Request-Id", "rid-"+strings.ReplaceAll(tc.name, " ", "-"))
			req.Header.Set("X-Session-Id", "sid-"+strings.ReplaceAll(tc.name, " ", "-"))
			resp, raw := sendRecorded(t, http.DefaultClient, req)
			c.checkPlatformAnswer(t, tc, resp, raw)
			for _, h := range []string{"X-Request-Id", "X-Session-Id"} {
				if got := resp.Header.Get(h); got != req.Header.Get(h) {
					t.Errorf("%s %q, want the one sent, %q", h, got, req.Header.Get(h))
				}
			}
		})
	}
}

// checkPlatformAnswer holds a 404 or 405 to the contract's component
// response for it: its status, its required headers, its JSON body under
// the component's schema, and the envelope the path answers in.
func (c *assistantContract) checkPlatformAnswer(t *testing.T, tc platformCase, resp *http.Response, raw []byte) {
	t.Helper()
	name, message := "NotFound", "Not Found"
	if tc.status == http.StatusMethodNotAllowed {
		name, message = "MethodNotAllowed", "Method Not Allowed"
	}
	r := c.componentAnswer(t, name, tc.status, tc.allow, resp, raw)
	mt := r.Content.GetOrZero("application/json")
	if mt == nil || mt.Schema == nil {
		t.Fatalf("%s has no JSON schema", name)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if ok, errs := c.schema.ValidateSchemaBytes(mt.Schema.Schema(), raw); !ok {
		t.Errorf("%s\nbreaks %s:%s", raw, name, describe(errs))
	}
	// The schema takes either envelope; the path decides which one the
	// server must send.
	if tc.token {
		var e tokenErrorEnvelope
		if err := strictJSON(raw, &e); err != nil || e.Code != tc.status || e.Message != message {
			t.Errorf("body %s, want the token endpoint's {code %d, message %q} (%v)", raw, tc.status, message, err)
		}
		return
	}
	var e apiErrorEnvelope
	if err := strictJSON(raw, &e); err != nil || e.Status != tc.status || e.Message != message {
		t.Errorf("body %s, want {status %d, message %q} (%v)", raw, tc.status, message, err)
	}
}

// apiErrorEnvelope and tokenErrorEnvelope are the two envelopes, decoded
// strictly: a member the other one has is an error.
type apiErrorEnvelope struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

type tokenErrorEnvelope struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// failingCollector fails every scrape, as a collector whose source cannot
// be read does, so the registry cannot be gathered.
type failingCollector struct{ desc *prometheus.Desc }

func (f failingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }

func (f failingCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.NewInvalidMetric(f.desc, errors.New("the source cannot be read"))
}

// TestAssistantContractPlatformFailures provokes the 500s the contract
// documents for /healthz, /metrics and /openapi.yaml, which no live server
// of the test models gives: the assistant's router and envelope under the
// platform, with a health check that panics, a metrics collector that
// fails and, for a request marked so, a panic in front of the routes (the
// platform's Prepare hook, inside its recovery as every route is). Each
// answer is validated against its operation in the contract, strictly.
func TestAssistantContractPlatformFailures(t *testing.T) {
	c := loadAssistantContract(t)
	build := func(m *web.Metrics) web.API {
		return web.API{Name: "assistant", Handler: chatapi.WithSessionID(chatapi.NewServer(chatapi.Deps{Metrics: m})), Errors: chatapi.ErrorWriter()}
	}
	checkPlatformFailures(t, c.contractSpec, build, func(t *testing.T, resp *http.Response, raw []byte, envelope bool) {
		if !envelope {
			return
		}
		var e apiErrorEnvelope
		if err := strictJSON(raw, &e); err != nil || e.Status != 500 || e.Message != "Internal Server Error" {
			t.Errorf("body %s, want {status 500, Internal Server Error} (%v)", raw, err)
		}
		if resp.Header.Get("X-Session-Id") == "" {
			t.Error("an error in the envelope without X-Session-Id")
		}
	})
}
