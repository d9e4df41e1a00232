// Package homeapi is the HTTP transport of the smart-home device
// information API.
package homeapi

import (
	"log/slog"
	"net/http"
	"net/url"
	"path"
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

// FoldSlashes makes the path clean before routing: real agents build URLs
// by string concatenation, so an endpoint configured with a trailing slash
// sends //v1/mqtt-gate/..., and the platform's ServeMux would answer that,
// or a dot segment (/./, /..), with a redirect page in HTML that they
// neither follow nor can read as JSON (reference §8.1, §8.2). Repeated
// slashes are collapsed, dot segments resolved as path.Clean does and a
// trailing slash is dropped.
//
// The folding works on the path as sent (EscapedPath), which is also what
// ServeMux cleans and routes: an encoded slash (%2F) is a character inside
// its segment, and folding the decoded Path would have made /a%2Fb//c the
// three segments /a/b/c. Encoded dots are decoded first, since "." is
// unreserved and %2E is the same character (RFC 3986 §2.3), so %2E%2E is
// a dot segment as ".." is. Path and RawPath are then derived from the
// folded form together, as url.URL keeps them.
func FoldSlashes(r *http.Request) {
	if r.URL.RawPath == "" {
		// Path escapes to the path as sent, with the same slashes and
		// dots, so it can be folded as it is.
		p := r.URL.Path
		if !unclean(p) {
			return
		}
		if c := path.Clean(p); c != p {
			r.URL.Path = c
		}
		return
	}
	sent := r.URL.EscapedPath()
	p := decodeDots(sent)
	if !unclean(p) {
		return
	}
	c := path.Clean(p)
	if c == p {
		return
	}
	decoded, err := url.PathUnescape(c)
	if err != nil {
		return // cannot happen: c is made of a valid escaped path's pieces
	}
	r.URL.Path, r.URL.RawPath = decoded, c
	if (&url.URL{Path: decoded}).EscapedPath() == c {
		r.URL.RawPath = "" // the default escaping: url.URL leaves RawPath empty then
	}
}

// unclean reports whether p has what FoldSlashes folds: "//", a dot
// segment or a trailing slash ("/." is a cheap superset of dot segments).
func unclean(p string) bool {
	return strings.Contains(p, "//") || strings.Contains(p, "/.") || len(p) > 1 && strings.HasSuffix(p, "/")
}

// decodeDots replaces %2E and %2e in an escaped path with ".".
func decodeDots(p string) string {
	if !strings.Contains(p, "%2") {
		return p
	}
	return strings.NewReplacer("%2E", ".", "%2e", ".").Replace(p)
}
