package upstream

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"partnerapi/internal/assistant"
)

// An upstream (or the proxy in front of it) that answers 413 refuses the
// request as too large, whatever its text says: the client gets the
// API's 413, not a 500 (inference reference §10: over-long prompts are
// an explicit 413), and the chat is not sent again.
func TestUpstream413IsContextWindow(t *testing.T) {
	chats := 0
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/chat/completions":
			chats++
			http.Error(w, "<html><body>413 Request Entity Too Large</body></html>", http.StatusRequestEntityTooLarge)
		case "/v1/models":
			w.Write([]byte(`{"data":[{"id":"m"}]}`))
		default:
			http.NotFound(w, r)
		}
	})
	_, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1, Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, nil)
	if !errors.Is(err, assistant.ErrContextWindow) {
		t.Fatalf("an upstream's 413: %v, want ErrContextWindow", err)
	}
	if faultOf(err) != nil {
		t.Fatalf("an upstream's 413 is the request's own, not a fault of the server: %v", err)
	}
	if chats != 1 {
		t.Fatalf("the chat was sent %d times", chats)
	}
}
