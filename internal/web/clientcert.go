package web

import (
	"io"
	"net/http"
	"strconv"
)

// noClientCertPage is the answer of the provider's front (nginx with
// ssl_verify_client on) to a request sent without a client certificate,
// byte for byte: the reference gives the status and the reason, and a
// partner's client that logs or matches the page sees the same.
const noClientCertPage = "<html>\r\n<head><title>400 No required SSL certificate was sent</title></head>\r\n<body>\r\n" +
	"<center><h1>400 Bad Request</h1></center>\r\n<center>No required SSL certificate was sent</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

// gateClientCert is h refusing requests without a verified client
// certificate (requireClientCert). An API the platform built (BuildOn) gets
// the check among its layers, inside the access log and the request
// metrics, so the refusal has its access-log line and its count like every
// other answer; any other handler gets it in front, as nothing of the
// platform is there to log or count it.
func gateClientCert(h http.Handler, open []string) http.Handler {
	if b, ok := h.(*builtAPI); ok {
		return b.withClientCertGate(open)
	}
	return requireClientCert(h, open, "", nil)
}

// NoClientCertRoute is the route label of the requests refused for want of
// a client certificate in partnerapi_http_requests_total, with the method
// left empty as for unmatched requests: they never reach routing, and a
// method the client made up must not become a series of its own.
const NoClientCertRoute = "no_client_certificate"

// requireClientCert answers a request that came without a verified client
// certificate with noClientCertPage, except on the open paths (the browser
// paths) and the health check and contract, which a load balancer and a
// person's browser reach without one. A certificate that was sent and does
// not verify never gets here: the handshake refuses it. The refusals are
// counted in metrics (nil: not counted) under api.
func requireClientCert(next http.Handler, open []string, api string, metrics *Metrics) http.Handler {
	served := map[string]bool{"/healthz": true, "/openapi.yaml": true}
	for _, p := range open {
		served[p] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) > 0 || served[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		if r.Body != nil {
			// Whatever the client sent is not read; the connection
			// closes, as nginx closes it after this answer.
			_ = r.Body.Close()
		}
		h := w.Header()
		h.Set("Content-Type", "text/html")
		h.Set("Content-Length", strconv.Itoa(len(noClientCertPage)))
		h.Set("Connection", "close")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, noClientCertPage)
		if metrics != nil {
			metrics.requests.WithLabelValues(api, NoClientCertRoute, "", strconv.Itoa(http.StatusBadRequest)).Inc()
		}
	})
}
