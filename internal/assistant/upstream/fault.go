package upstream

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// Why a request failed for a replica's sake, as the pool counts it
// (ReplicaStats.FailuresBy, the reason label of
// partnerapi_upstream_failures_total). The set is closed, so every reason
// is one series per replica and a dashboard can rely on all of them being
// there.
const (
	// ReasonUnreachable: the connection was refused, reset or not
	// resolved.
	ReasonUnreachable = "unreachable"
	// ReasonTimeout: no connection within the dial timeout, no headers
	// within the header timeout, or no model list within ModelsTimeout.
	ReasonTimeout = "timeout"
	// ReasonBusy: the replica answered 429, or 503 while it loads its
	// model or its queue is full.
	ReasonBusy = "busy"
	// ReasonBadGateway: a proxy in front of the replica answered 502 or
	// 504.
	ReasonBadGateway = "bad_gateway"
	// ReasonStream: the answer's stream broke off before its end.
	ReasonStream = "stream"
	// ReasonNoModel: the replica answered 404 for the model (it serves
	// another one).
	ReasonNoModel = "no_model"
)

// FailureReasons lists every reason a failure is counted under.
var FailureReasons = []string{ReasonUnreachable, ReasonTimeout, ReasonBusy, ReasonBadGateway, ReasonStream, ReasonNoModel}

// serverFault is a failure of the server rather than of the request, so
// another replica of the model may well answer it (pool.go). down is set
// when the server should be left alone until it answers a probe: it could
// not be reached, or said it is overloaded or unwell (429, 502, 503, 504).
// A stream cut short is a fault too, but not down: a connection broken
// mid-answer (a proxy's idle timeout, say) says little about the next one,
// and a server that really died refuses the next request's connection.
// noModel is set when the server said it does not serve the model: it is
// up, so it stays in rotation for the model list, but gets no requests for
// the model until its list shows it again. reason is one of
// FailureReasons.
type serverFault struct {
	err     error
	down    bool
	noModel bool
	reason  string
}

func (f *serverFault) Error() string { return f.err.Error() }
func (f *serverFault) Unwrap() error { return f.err }

// faultOf is err's serverFault, nil when err is the request's own (a 400,
// a prompt over the window) or no error.
func faultOf(err error) *serverFault {
	var f *serverFault
	if errors.As(err, &f) {
		return f
	}
	return nil
}

// transportReason is why a request that got no answer at all failed: a
// timeout (dial or headers) or an unreachable server.
func transportReason(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ReasonTimeout
	}
	return ReasonUnreachable
}

// redactedBase is how errors name a base URL: its scheme, host and path.
// The user name and password of its userinfo, and its query string, which
// may carry an API key (?api_key=, ?token=), are credentials; net/http's
// own url.Error hides only the password, and these errors reach logs,
// metrics and, in-band, the clients of the API.
func redactedBase(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "invalid"
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/")
}

// redactURL returns err with the URL of its url.Error replaced by safe,
// so nothing built on the error can show the credentials the request's
// URL carried.
func redactURL(err error, safe string) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return &url.Error{Op: ue.Op, URL: safe, Err: ue.Err}
}
