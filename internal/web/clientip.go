package web

import (
	"net/http"

	"partnerapi/internal/web/forwarded"
)

// TrustedProxies are the peers whose forwarding headers the platform
// believes (serve's --trusted-proxies); package forwarded reads them and
// walks the headers, apart from the platform so that its fuzz targets run
// in a small binary.
type TrustedProxies = forwarded.Proxies

// ParseTrustedProxies reads --trusted-proxies (forwarded.ParseProxies).
func ParseTrustedProxies(s string) (TrustedProxies, error) {
	return forwarded.ParseProxies(s)
}

// ClientIP is the address of the client that sent r, without a port, as
// the listener serving it resolves it (forwarded.Proxies.Client with its
// --trusted-proxies): what per-client limits such as the banking login
// throttle count by. A request served outside the platform's Build has
// only its connection's peer.
func ClientIP(r *http.Request) string {
	var t TrustedProxies
	if c, ok := r.Context().Value(idContextKey).(*idContext); ok {
		t = c.proxies
	}
	ip, _ := t.Client(r.RemoteAddr, r.Header)
	return ip
}
