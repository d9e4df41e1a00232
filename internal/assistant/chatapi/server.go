// Package chatapi is the HTTP and SSE transport of the assistant API.
package chatapi

import (
	"log/slog"
	"net/http"

	"partnerapi/internal/assistant"
	"partnerapi/internal/web"
)

// Deps is what the assistant transport needs.
type Deps struct {
	Metrics *web.Metrics
	Log     *slog.Logger
	Service *assistant.Service
}

type server struct {
	svc *assistant.Service
	log *slog.Logger
}

// NewServer builds the assistant API's router.
func NewServer(d Deps) *web.Mux {
	mux := web.NewMux("assistant", platformError, d.Metrics)
	addRoutes(mux, d)
	return mux
}

// Handler is the assistant router that also gives every response an
// X-Session-Id, echoing the client's (reference §2: real clients log both
// ids). It embeds the Mux so the contract test still sees its routes.
type Handler struct{ *web.Mux }

// WithSessionID wraps mux.
func WithSessionID(mux *web.Mux) Handler { return Handler{mux} }

func (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSessionID(w, r)
	h.Mux.ServeHTTP(w, r)
}

// setSessionID gives the response the client's X-Session-Id, or a new one,
// unless it already has one.
func setSessionID(w http.ResponseWriter, r *http.Request) {
	if w.Header().Get("X-Session-Id") != "" {
		return
	}
	id := r.Header.Get("X-Session-Id")
	if !validID(id) {
		id = web.NewUUID()
	}
	w.Header().Set("X-Session-Id", id)
}

// validID refuses ids that could break headers or logs.
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// ErrorWriter is the assistant envelope for the platform.
func ErrorWriter() web.ErrorWriter { return platformError }
