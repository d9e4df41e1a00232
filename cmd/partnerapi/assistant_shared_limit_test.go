package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"partnerapi/internal/storetest"
)

// heldUpstream is an OpenAI-compatible server whose generations each
// send their first delta and then wait until the test lets that one go
// (by the prompt, which names it), so a test can keep requests running on
// the servers under test for as long as it needs.
type heldUpstream struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
}

func (h *heldUpstream) gate(name string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gates[name] == nil {
		h.gates[name] = make(chan struct{})
	}
	return h.gates[name]
}

// finish lets the generation of that prompt end.
func (h *heldUpstream) finish(name string) { close(h.gate(name)) }

func (h *heldUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Content  string `json:"content"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if r.Method == http.MethodPost {
		_ = json.NewDecoder(r.Body).Decode(&body)
	}
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"slow","object":"model","owned_by":"fake"}]}`)
	case "/tokenize":
		_ = json.NewEncoder(w).Encode(map[string]any{"tokens": make([]int, len(strings.Fields(body.Content)))})
	case "/v1/chat/completions":
		event := func(s string) {
			fmt.Fprintf(w, "data: %s\n\n", s)
			w.(http.Flusher).Flush()
		}
		w.Header().Set("Content-Type", "text/event-stream")
		event(`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Once"}}]}`)
		select {
		case <-h.gate(body.Messages[len(body.Messages)-1].Content):
		case <-r.Context().Done():
			return
		}
		event(`{"choices":[{"index":0,"delta":{"content":" upon."},"finish_reason":"stop"}]}`)
		event(`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
		event("[DONE]")
	default:
		http.NotFound(w, r)
	}
}

// TestAssistantLimitAcrossServers runs two serve processes' worth of
// servers on one PostgreSQL, as behind a load balancer, for a client whose
// limit is 2. With one generation running on each, a third request is
// refused on either server with the API's 429, though each server alone
// holds only one of the client's requests; once one generation ends, the
// next request is taken, on the other server.
func TestAssistantLimitAcrossServers(t *testing.T) {
	if os.Getenv(storetest.EnvPostgres) == "" {
		t.Skip("SKIPPED: the concurrency limit across processes needs a shared PostgreSQL; set " + storetest.EnvPostgres +
			" (CI does) to run TestAssistantLimitAcrossServers")
	}
	dbURL, _ := scratchPostgres(t, "limits")
	up := &heldUpstream{gates: map[string]chan struct{}{}}
	upSrv := httptest.NewServer(up)
	t.Cleanup(upSrv.Close)
	flags := []string{"--only", "assistant", "--database-url", dbURL, "--assistant-upstream", "slow=" + upSrv.URL,
		"--assistant-limit-corp", "2", "--assistant-grpc-addr", "off"}
	servers := []string{startServer(t, flags...).urls["assistant"], startServer(t, flags...).urls["assistant"]}
	// Generations still held when the test ends are let go before the
	// servers shut down (cleanups run last registered first).
	var heldNames []string
	t.Cleanup(func() {
		for _, n := range heldNames {
			up.finish(n)
		}
	})

	creds, err := createAssistantClient(t, t.TempDir(), "--database-url", dbURL, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	token := assistantToken(t, servers[0], "GIGACHAT_API_CORP", creds["authorization_key"])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chat := func(server int, prompt string) (*http.Response, *bufio.Reader) {
		t.Helper()
		body := fmt.Sprintf(`{"model":"slow","stream":true,"messages":[{"role":"user","content":%q}]}`, prompt)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, servers[server]+"/api/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp, bufio.NewReader(resp.Body)
	}
	// running starts a generation that holds its slot until finished.
	running := func(server int, prompt string) *bufio.Reader {
		t.Helper()
		heldNames = append(heldNames, prompt)
		resp, rd := chat(server, prompt)
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(rd)
			t.Fatalf("%s on server %d: %d %s", prompt, server, resp.StatusCode, b)
		}
		line, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "data: ") {
			t.Fatalf("%s on server %d: first line %q, %v", prompt, server, line, err)
		}
		return rd
	}
	first := running(0, "first")
	running(1, "second")

	for server := range servers {
		resp, rd := chat(server, fmt.Sprintf("third on %d", server))
		if resp.StatusCode == http.StatusOK {
			// Its generation is held: reading it to the end would wait
			// for ever.
			t.Fatalf("a third request of a client with a limit of 2, one running on each server, was taken on server %d; want 429", server)
		}
		b, _ := io.ReadAll(rd)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
			strings.TrimSpace(string(b)) != `{"status":429,"message":"Too Many Requests"}` {
			t.Fatalf("a third request of a client with a limit of 2, one running on each server, on server %d: %d (Retry-After %q) %s; want 429 in the API's error format",
				server, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}

	up.finish("first")
	heldNames = heldNames[1:]
	rest, err := io.ReadAll(first)
	if err != nil || !strings.Contains(string(rest), "[DONE]") {
		t.Fatalf("the first generation's end: %q, %v", rest, err)
	}
	// The slot the first server freed is the second server's to give.
	running(1, "fourth")
	if resp, _ := chat(0, "fifth"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a request over the limit again, after the freed slot was taken elsewhere: %d, want 429", resp.StatusCode)
	}
}
