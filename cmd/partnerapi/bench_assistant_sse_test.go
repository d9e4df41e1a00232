package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBenchStreamLineEnds: the benchmark's stream reader takes every line
// end the event-stream format allows (WHATWG HTML §9.2.6: CRLF, LF or a
// bare CR) and "data:" with or without its one space, as the upstream
// reader does, and counts an event when its blank line ends it: a server
// (or a proxy in front of ours) that ends lines otherwise is measured
// rather than refused as sending bad JSON.
func TestBenchStreamLineEnds(t *testing.T) {
	events := []string{
		`data: {"choices":[{"delta":{"content":"Hel","role":"assistant"},"index":0}],"object":"chat.completion"}`,
		`data:{"choices":[{"delta":{"content":"lo."},"index":0}],"object":"chat.completion"}`,
		`: keepalive`,
		`data: {"choices":[{"delta":{"content":""},"index":0,"finish_reason":"stop"}],` + "\n" +
			`data: "usage":{"prompt_tokens":17,"completion_tokens":42,"total_tokens":59}}`,
		`data: [DONE]`,
	}
	tests := []struct{ name, eol string }{
		{"LF", "\n"},
		{"CRLF", "\r\n"},
		{"CR", "\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, ev := range events {
					// Each event in a write of its own, its line
					// ends cut from it by the next write where
					// the CR of a CRLF is the last byte sent.
					body := strings.ReplaceAll(ev, "\n", tt.eol) + tt.eol + tt.eol
					_, _ = w.Write([]byte(body[:len(body)-1]))
					w.(http.Flusher).Flush()
					_, _ = w.Write([]byte(body[len(body)-1:]))
				}
			}))
			defer srv.Close()
			ttft, tokens, gaps, err := benchStream(context.Background(), srv.URL, "t", []byte(`{}`))
			if err != nil || ttft <= 0 || tokens != 42 || len(gaps) != 2 {
				t.Errorf("benchStream = ttft %v, %d tokens, %d gaps, %v; want a time, 42 tokens, 2 gaps (3 events), no error",
					ttft, tokens, len(gaps), err)
			}
		})
	}
}
