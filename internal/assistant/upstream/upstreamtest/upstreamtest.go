// Package upstreamtest is a fake llama-server for tests of chats the client
// cuts short while an upstream generates them. A test needs to cut a chat
// after the engine has read a known part of the upstream's stream, and the
// engine reads it in a goroutine of its own with nothing to show for it;
// the server's HTTP client therefore tells the test when the engine's read
// of a chat's stream has passed a marker the server sends, and every event
// before the marker is then in the engine's hands, whatever the cut does.
package upstreamtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Marker is the SSE comment the server sends after a chat's first events;
// the engine skips it as it skips every comment.
const Marker = ": upstreamtest read up to here"

// Chat scripts the server's answer to one chat request.
type Chat struct {
	// Events are the data of the events sent first, then the Marker.
	Events []string
	// Pause is the wait after the Marker; a negative one lasts until the
	// client leaves, and nothing is sent after it.
	Pause time.Duration
	// Then are the data of the events sent after the pause ("[DONE]"
	// among them when the stream is to end).
	Then []string
	// Refuse, when set, is the status the chat is refused with instead,
	// Body its body.
	Refuse int
	Body   string
}

// Server is a fake llama-server serving the model "m": its /tokenize
// counts one token a word of the text, it has no /props (so max_tokens is
// passed on as asked) and it answers chats as script says.
type Server struct {
	URL string
	// Client is the HTTP client for the engine: Read receives once for
	// every chat whose stream the engine has read up to the Marker (64
	// such signals wait for the test before a read blocks).
	Client *http.Client
	Read   chan struct{}

	script func(i int) Chat
	mu     sync.Mutex
	chats  int
}

// New starts a server whose i-th chat request (from 0) is answered with
// script(i); it is closed when the test ends.
func New(t testing.TB, script func(i int) Chat) *Server {
	s := &Server{Read: make(chan struct{}, 64), script: script}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	s.Client = &http.Client{Transport: &markTransport{base: srv.Client().Transport, read: s.Read}}
	return s
}

// Chats is the number of chat requests the server received.
func (s *Server) Chats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chats
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp"}]}`)
	case "/tokenize":
		var req struct{ Content string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		_ = json.NewEncoder(w).Encode(map[string]any{"tokens": make([]int, len(strings.Fields(req.Content)))})
	case "/v1/chat/completions":
		s.mu.Lock()
		i := s.chats
		s.chats++
		s.mu.Unlock()
		s.chat(w, r, s.script(i))
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, c Chat) {
	if c.Refuse != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(c.Refuse)
		fmt.Fprint(w, c.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(events []string) {
		for _, e := range events {
			fmt.Fprintf(w, "data: %s\n\n", e)
		}
	}
	send(c.Events)
	fmt.Fprintf(w, "%s\n\n", Marker)
	w.(http.Flusher).Flush()
	if c.Pause < 0 {
		<-r.Context().Done()
		return
	}
	select {
	case <-time.After(c.Pause):
	case <-r.Context().Done():
		return
	}
	send(c.Then)
	w.(http.Flusher).Flush()
}

// markTransport signals read when a chat's response body has been read
// up to the Marker.
type markTransport struct {
	base http.RoundTripper
	read chan<- struct{}
}

func (m *markTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := m.base.RoundTrip(r)
	if err != nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		return resp, err
	}
	resp.Body = &markBody{ReadCloser: resp.Body, read: m.read}
	return resp, nil
}

type markBody struct {
	io.ReadCloser
	read  chan<- struct{}
	seen  strings.Builder
	found bool // the Marker was among the bytes handed on
	sent  bool
}

// Read passes the bytes on and, once they have included the Marker,
// signals at the engine's next read (or its Close): the engine's scanner
// handles every whole line it was given before it reads again, so by then
// what came before the Marker has been handled, not only received. A
// signal sent as the bytes were handed on let a test cancel while the
// engine still held the last events unparsed, and their tokens went
// uncounted (TestUpstreamCutUsage failed so under load).
func (b *markBody) Read(p []byte) (int, error) {
	b.signal()
	n, err := b.ReadCloser.Read(p)
	if !b.found {
		b.seen.Write(p[:n])
		b.found = strings.Contains(b.seen.String(), Marker+"\n")
	}
	return n, err
}

// Close signals as a next read would: an engine done with the stream
// after the Marker has handled what came before it.
func (b *markBody) Close() error {
	b.signal()
	return b.ReadCloser.Close()
}

func (b *markBody) signal() {
	if b.found && !b.sent {
		b.sent = true
		b.read <- struct{}{}
	}
}
