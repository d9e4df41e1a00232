package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWriteDeadline checks that an ordinary response that takes longer
// than the API's WriteTimeout is cut, and that a streaming handler that
// lifts the deadline is not.
func TestWriteDeadline(t *testing.T) {
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) {
		http.Error(w, err.Error(), status)
	}
	mux := NewMux("test", errs, nil)
	slow := func(lift bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if lift {
				LiftWriteDeadline(w)
			}
			time.Sleep(300 * time.Millisecond)
			// Large enough to overflow the buffers, so the write itself
			// meets the deadline.
			_, _ = io.WriteString(w, strings.Repeat("x", 1<<20))
		}
	}
	mux.HandleFunc("GET", "/slow", slow(false))
	mux.HandleFunc("GET", "/stream", slow(true))
	srv := httptest.NewServer(API{Name: "test", Handler: mux, Errors: errs, WriteTimeout: 100 * time.Millisecond}.Build(quietLog(), nil))
	defer srv.Close()
	get := func(path string) (int, error) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return len(b), err
	}
	if n, err := get("/slow"); err == nil && n == 1<<20 {
		t.Error("a response past the write deadline was delivered whole")
	}
	if n, err := get("/stream"); err != nil || n != 1<<20 {
		t.Errorf("a stream that lifted the deadline: %d bytes, %v", n, err)
	}
}

// TestDeferWriteDeadline checks that a handler that computes past the
// API's WriteTimeout before answering still delivers its answer once it
// defers the deadline, and that the deadline starts again with the answer:
// a client that does not read a large answer is cut off.
func TestDeferWriteDeadline(t *testing.T) {
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) {
		http.Error(w, err.Error(), status)
	}
	mux := NewMux("test", errs, nil)
	// The answer's write gets a whole second from its start: its 1 MiB
	// must be out within it, which a WriteTimeout of 100 ms made a bet on
	// the scheduler (a server goroutine stalled between the deadline and
	// the write, or a client slow to read, cut a correct answer). The
	// computation outlasts the deadline of the request's start all the
	// same, by sleeping past it.
	const wt = time.Second
	// The large answer overflows the socket buffers, so its write meets
	// whatever deadline is set.
	mux.HandleFunc("GET", "/slow", func(w http.ResponseWriter, r *http.Request) {
		DeferWriteDeadline(w)
		time.Sleep(wt + 200*time.Millisecond)
		_, _ = io.WriteString(w, strings.Repeat("x", 1<<20))
	})
	huge := make(chan error, 1)
	mux.HandleFunc("GET", "/huge", func(w http.ResponseWriter, r *http.Request) {
		DeferWriteDeadline(w)
		_, err := io.WriteString(w, strings.Repeat("x", 64<<20))
		huge <- err
	})
	srv := httptest.NewServer(API{Name: "test", Handler: mux, Errors: errs, WriteTimeout: wt}.Build(quietLog(), nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(b) != 1<<20 {
		t.Fatalf("an answer made past the write deadline: %d bytes, %v", len(b), err)
	}
	// Read nothing of /huge: the server's write must meet the deadline
	// rather than wait for the client for ever.
	resp, err = http.Get(srv.URL + "/huge")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	select {
	case err := <-huge:
		if err == nil {
			t.Error("a 64 MiB answer to a client that reads nothing was written whole")
		}
	case <-time.After(30 * time.Second):
		t.Error("a deferred deadline never started again: the write to a client that reads nothing still waits")
	}
}

// deadlineRecorder is a ResponseWriter that records the write deadline
// the platform sets, as net/http's own writer would take it.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (w *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	w.deadlines = append(w.deadlines, t)
	return nil
}

// TestWriteDeadlineFromRequestStart checks that the write deadline runs
// from the instant the request-id layer read once for the whole request,
// the one the handler's context carries, rather than from a reading of
// its own.
func TestWriteDeadlineFromRequestStart(t *testing.T) {
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) {
		http.Error(w, err.Error(), status)
	}
	var start time.Time
	metrics := NewMetrics("test")
	mux := NewMux("test", errs, metrics)
	mux.HandleFunc("GET", "/x", func(w http.ResponseWriter, r *http.Request) {
		start = requestStart(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
	const wt = 7 * time.Second
	h := API{Name: "test", Handler: mux, Errors: errs, WriteTimeout: wt}.Build(quietLog(), metrics)
	before := time.Now()
	w := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, httptest.NewRequest("GET", "/x", nil))
	after := time.Now()
	if w.Code != http.StatusNoContent {
		t.Fatalf("status %d", w.Code)
	}
	if start.Before(before) || start.After(after) {
		t.Fatalf("request start %v is not within the call (%v to %v)", start, before, after)
	}
	if len(w.deadlines) != 1 || !w.deadlines[0].Equal(start.Add(wt)) {
		t.Fatalf("write deadlines %v, want the one instant start+%v = %v", w.deadlines, wt, start.Add(wt))
	}
}
