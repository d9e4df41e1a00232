// Package bankapi is the HTTP transport of the banking API: routes, the
// banking error envelope, auth and scope checks. Domain rules live in
// internal/banking.
package bankapi

import (
	"partnerapi/internal/web"
)

// Deps is what the banking transport needs.
type Deps struct {
	Metrics *web.Metrics
}

// NewServer builds the banking API's router.
func NewServer(d Deps) *web.Mux {
	mux := web.NewMux("banking", platformError, d.Metrics)
	addRoutes(mux, d)
	return mux
}

// ErrorWriter is the banking envelope for the platform.
func ErrorWriter() web.ErrorWriter { return platformError }
