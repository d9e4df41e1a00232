// Package chatapi is the HTTP and SSE transport of the assistant API.
package chatapi

import "partnerapi/internal/web"

// Deps is what the assistant transport needs.
type Deps struct {
	Metrics *web.Metrics
}

// NewServer builds the assistant API's router.
func NewServer(d Deps) *web.Mux {
	mux := web.NewMux("assistant", platformError, d.Metrics)
	addRoutes(mux, d)
	return mux
}

// ErrorWriter is the assistant envelope for the platform.
func ErrorWriter() web.ErrorWriter { return platformError }
