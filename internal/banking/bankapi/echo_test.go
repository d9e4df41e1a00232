package bankapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"partnerapi/internal/banking"
	"partnerapi/internal/web"
)

// TestErrorEchoIsBounded sends a value of about a MiB (as much as the body
// or the request's head takes), and one that is not valid UTF-8, in each
// place where an error answer quotes what the client sent, and holds the
// answer to at most 4 KiB of valid JSON in the banking envelope (reference
// §13): before, an unknown card status, a sandbox clock's advance, the
// member names around a JSON syntax error (twice: in fields and in the
// message), a limit json.Number could not read and a request's method were
// quoted whole, so one request made
// the server write back its own input, into every log that keeps answers.
func TestErrorEchoIsBounded(t *testing.T) {
	cards := newCardEnv(t, 2)
	mux := NewServer(Deps{Log: slog.New(slog.DiscardHandler), Auth: fakeAuth{"t": {OrgID: "o", Scopes: []string{banking.ScopeGetClientAccounts}}}})
	platform := httptest.NewServer(web.API{Name: "banking", Handler: mux, Errors: ErrorWriter()}.Build(slog.New(slog.DiscardHandler), nil))
	t.Cleanup(platform.Close)

	head := strings.Repeat("x", 900<<10)
	body := strings.Repeat("x", 1<<20-1024)
	const limits = "/fintech/api/v1/business-cards/limits"
	tests := []struct {
		name, method, path, body string
		status                   int
		cause                    string
	}{
		{"card status", "GET", "/fintech/api/v1/business-cards?statusCodes=%s", "", 400, "VALIDATION_FAULT"},
		{"clock advance", "POST", "/fintech/api/sandbox/clock", `{"advance":"%s"}`, 400, "VALIDATION_FAULT"},
		{"member around a syntax error", "POST", limits, `{"%s": tru}`, 400, "DESERIALIZATION_FAULT"},
		{"nested members around a syntax error", "POST", limits, `{"a":{"%s":{"b": tru}}}`, 400, "DESERIALIZATION_FAULT"},
		{"limit json.Number cannot read", "POST", limits, `{"limit":"%s"}`, 400, "DESERIALIZATION_FAULT"},
	}
	for _, tc := range tests {
		for _, v := range []struct{ name, value string }{{"long", ""}, {"invalid UTF-8", "ab\xff\xfecd"}} {
			t.Run(tc.name+"/"+v.name, func(t *testing.T) {
				path, reqBody := tc.path, tc.body
				if strings.Contains(reqBody, "%s") {
					value := v.value
					if value == "" {
						value = body
					}
					reqBody = strings.Replace(reqBody, "%s", value, 1)
				} else {
					value := v.value
					if value == "" {
						value = head
					}
					path = strings.Replace(path, "%s", url.QueryEscape(value), 1)
				}
				cause := tc.cause
				if v.name == "invalid UTF-8" && strings.Contains(tc.body, "%s") {
					cause = "DESERIALIZATION_FAULT" // a body must be UTF-8 (RFC 8259 §8.1)
				}
				status, answer := cards.do(tc.method, path, "application/json", reqBody)
				checkBoundedEnvelope(t, status, []byte(answer), tc.status, cause)
			})
		}
	}

	// A method the path does not take is named in the 405's message. A
	// method is an HTTP token, ASCII alone (net/http sends and takes no
	// other), so only its length is tried.
	t.Run("method/long", func(t *testing.T) {
		req, err := http.NewRequest("GET", platform.URL+"/fintech/api/v1/client-info", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Method = strings.Repeat("X", 900<<10)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		checkBoundedEnvelope(t, resp.StatusCode, answer, http.StatusMethodNotAllowed, "NOT_FOUND")
	})
}

// checkBoundedEnvelope holds an answer to status, at most 4 KiB of valid
// UTF-8, and the banking envelope with cause (any cause when empty).
func checkBoundedEnvelope(t *testing.T, status int, answer []byte, wantStatus int, cause string) {
	t.Helper()
	if status != wantStatus || len(answer) > 4<<10 || !utf8.Valid(answer) {
		t.Fatalf("status %d, %d bytes (valid UTF-8 %v): %.300q", status, len(answer), utf8.Valid(answer), answer)
	}
	var e errorBody
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Cause == "" || (cause != "" && e.Cause != cause) || e.ReferenceID == "" || e.Message == "" {
		t.Fatalf("not the banking envelope with cause %q (%v): %q", cause, err, answer)
	}
}
