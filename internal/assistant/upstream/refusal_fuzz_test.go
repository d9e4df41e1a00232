package upstream

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"partnerapi/internal/assistant"
)

// FuzzUpstreamError holds the reading of an upstream's refusal to what the
// client may be told (README: a 400 or 422 is answered with the same status
// and at most 300 characters of the server's words, a 422's after "Invalid
// params: "): whatever the body, a 400 or 422 that is not about the
// context window, n or a missing model is an InvalidParams of that status
// whose message is never empty and bounded (its bytes, valid UTF-8 or not,
// are made valid by the transports' encoders); a 413 is the
// context window's; and the max_tokens of the retry after an overflow is
// within (0, what was sent], or none at all.
func FuzzUpstreamError(f *testing.F) {
	for _, seed := range []struct {
		status int
		body   string
	}{
		{400, `{"error":{"message":"top_k must be positive","type":"invalid_request_error"}}`},
		{422, `{"message":"bad tool schema"}`},
		{400, `{"error":"model requires more system memory"}`},
		{400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (1000 in the messages, 4000 in the completion).","code":400}`},
		{400, `'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778).`},
		{400, `{"error":{"message":"Only one completion choice is allowed"}}`},
		{404, `{"error":"model \"x\" not found"}`},
		{413, `<html>413 Request Entity Too Large</html>`},
		{400, "\xff\xfe" + strings.Repeat("é", 400)},
		{422, ``},
	} {
		f.Add(seed.status, []byte(seed.body), 4000)
	}
	f.Fuzz(func(t *testing.T, status int, body []byte, sent int) {
		if status < 100 || status > 599 {
			return
		}
		resp := &http.Response{StatusCode: status, Body: io.NopCloser(bytes.NewReader(body))}
		err := upstreamError(resp)
		if err == nil {
			t.Fatalf("status %d: no error", status)
		}
		if m, ok := retryMaxTokens(err, sent); ok && (m < 0 || m > sent) {
			t.Fatalf("status %d %q: retry with max_tokens %d after sending %d", status, body, m, sent)
		}
		seen := strings.ToLower(string(body[:min(len(body), 4096)]))
		special := strings.Contains(seen, "context") || strings.Contains(seen, "only one completion choice")
		switch {
		case errors.Is(err, assistant.ErrContextWindow):
			if status != http.StatusRequestEntityTooLarge && !strings.Contains(seen, "context") {
				t.Fatalf("status %d %q: the context window's error", status, body)
			}
		case status == http.StatusRequestEntityTooLarge:
			t.Fatalf("413 %q: %v, not the context window's", body, err)
		case (status == 400 || status == 422) && !special:
			var inv *assistant.InvalidParams
			if !errors.As(err, &inv) || inv.Status != status {
				t.Fatalf("status %d %q: %v, not the request's own refusal", status, body, err)
			}
			msg := inv.Message
			if status == 422 {
				if !strings.HasPrefix(msg, "Invalid params: ") {
					t.Fatalf("422 message %q", msg)
				}
				msg = strings.TrimPrefix(msg, "Invalid params: ")
			}
			if msg == "" || utf8.RuneCountInString(msg) > maxRefusalText+1 {
				t.Fatalf("status %d %q: message %q", status, body, inv.Message)
			}
		}
	})
}
