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
