// Package homeapi is the HTTP transport of the smart-home device
// information API.
package homeapi

import (
	"log/slog"
	"net/http"
	"strings"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/web"
)

// Deps is what the smart-home transport needs.
type Deps struct {
	Metrics *web.Metrics
	Service *smarthome.Service
	Options Options
	// Commander sends the admin API's commands to agents over MQTT; nil
	// when serve runs no MQTT gate (commands then answer 404, a feature
	// this deployment does not offer).
	Commander smarthome.Commander
	// Log receives the API's error lines (a database outage, an internal
	// error); nil: slog.Default(). serve passes its own logger, so these
	// lines take --log-format and the log buffer like every other.
	Log *slog.Logger
}

// Options switch the documented ambiguities of the wire format (reference
// §9); the zero value is the recommended behaviour.
type Options struct {
	// OmitFalseRequired leaves "required" out of features that are not
	// required instead of emitting false (#2).
	OmitFalseRequired bool
	// HideAllowedValues drops allowed_values from models (§5).
	HideAllowedValues bool
	// Profile names the category profile (--smarthome-profile) for the
	// ETag; empty for the default. The Service applies the profile's
	// categories (smarthome.Service Restrict), to every route alike.
	Profile string
}

// variant names the wire-format switches in effect for the ETag, "" when
// none is: two servers on one catalog version that serve different bytes
// (another profile, required or allowed_values left out) must not tag
// them alike, or a client that moves between them, or a server restarted
// with other switches, would keep a copy that is no longer what it
// serves.
func (o Options) variant() string {
	var b strings.Builder
	if o.Profile != "" {
		b.WriteString("+profile-" + o.Profile)
	}
	if o.OmitFalseRequired {
		b.WriteString("+omit-false-required")
	}
	if o.HideAllowedValues {
		b.WriteString("+hide-allowed-values")
	}
	return b.String()
}

// NewServer builds the smart-home API's router.
func NewServer(d Deps) *web.Mux {
	mux := web.NewMux("smarthome", platformError, d.Metrics)
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	addRoutes(mux, &handlers{svc: d.Service, opt: d.Options, cmd: d.Commander, log: log})
	return mux
}

// ErrorWriter is the Common error for the platform.
func ErrorWriter() web.ErrorWriter { return platformError }

// FoldSlashes makes the path clean before routing (web.FoldPath): real
// agents build URLs by concatenation, so an endpoint configured with a
// trailing slash sends //v1/mqtt-gate/... (reference §8.1, §8.2).
func FoldSlashes(r *http.Request) { web.FoldPath(r) }
