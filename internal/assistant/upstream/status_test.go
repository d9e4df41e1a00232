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

// An upstream that answers 400 or 422 refuses the request itself (a
// parameter its model does not take, a malformed tool schema): the client
// gets that status with the upstream's own words in the API's body, as the
// README promises, not a 500; the chat is not sent again and the replica
// is not faulted.
func TestUpstreamRefusalIsTheClients(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		body        string
		wantStatus  int
		wantMessage string
	}{
		{"vLLM 400", 400, `{"object":"error","message":"best_of must be 1 when using greedy sampling.","type":"BadRequestError","param":null,"code":400}`,
			400, "best_of must be 1 when using greedy sampling."},
		{"OpenAI-style 422", 422, `{"error":{"message":"tools[0].function.name is required","type":"invalid_request_error"}}`,
			422, "Invalid params: tools[0].function.name is required"},
		{"Ollama 400", 400, `{"error":"invalid message format"}`, 400, "invalid message format"},
		{"plain text", 400, "bad request\n", 400, "bad request"},
		{"empty", 422, "", 422, "Invalid params: refused by the upstream server"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chats := 0
			e := fake(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/v1/chat/completions":
					chats++
					w.WriteHeader(tc.status)
					w.Write([]byte(tc.body))
				case "/v1/models":
					w.Write([]byte(`{"data":[{"id":"m"}]}`))
				default:
					http.NotFound(w, r)
				}
			})
			_, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1, Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, nil)
			var inv *assistant.InvalidParams
			if !errors.As(err, &inv) {
				t.Fatalf("an upstream's %d: %v, want InvalidParams", tc.status, err)
			}
			if inv.Status != tc.wantStatus || inv.Message != tc.wantMessage {
				t.Errorf("got %d %q, want %d %q", inv.Status, inv.Message, tc.wantStatus, tc.wantMessage)
			}
			if faultOf(err) != nil {
				t.Errorf("an upstream's %d is the request's own, not a fault of the server: %v", tc.status, err)
			}
			if chats != 1 {
				t.Errorf("the chat was sent %d times", chats)
			}
		})
	}
}
