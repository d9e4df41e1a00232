package web

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the peers whose forwarding headers the platform
// believes (serve's --trusted-proxies): the reverse proxies and load
// balancers in front of the listeners. Empty, the default, no forwarding
// header is read and a request's client is its connection's peer, since
// any client can write X-Forwarded-For and would otherwise choose the
// address it is throttled and logged by.
type TrustedProxies []netip.Prefix

// ParseTrustedProxies reads a comma-separated list of CIDR prefixes
// (10.0.0.0/8, fd00::/8) and bare addresses (one host each). An empty list
// trusts no one.
func ParseTrustedProxies(s string) (TrustedProxies, error) {
	var out TrustedProxies
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR prefix or an address", f)
			}
			// An IPv4 prefix written in its IPv6-mapped form covers the
			// IPv4 addresses it names, which is how peers are compared.
			if p.Addr().Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR prefix or an address", f)
		}
		a = a.Unmap().WithZone("")
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// String is the list as the flag takes it.
func (t TrustedProxies) String() string {
	s := make([]string, len(t))
	for i, p := range t {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func (t TrustedProxies) trusts(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientIP is the address of the client r came from, without a port: the
// connection's peer, or, when the peer is a trusted proxy, the right-most
// address of X-Forwarded-For that is not a trusted proxy's (each proxy
// appends the peer it saw, so the entries to the right of that one were
// written by proxies we trust, and the ones to its left by the client,
// which may have made them up). A request with no X-Forwarded-For from a
// trusted proxy takes its X-Real-IP, the single address proxies set
// there. An entry that is no address ends the walk at the proxy that
// reported it: a trusted proxy that writes garbage makes its own address
// the client's rather than an address the client chose. When every entry
// is a trusted proxy's the left-most one is the client.
func (t TrustedProxies) ClientIP(r *http.Request) string {
	ip, _ := t.clientIP(r)
	return ip
}

// clientIP is ClientIP, and whether the address came from a forwarding
// header (the peer is a trusted proxy) rather than from the connection.
func (t TrustedProxies) clientIP(r *http.Request) (string, bool) {
	host := peerHost(r.RemoteAddr)
	if len(t) == 0 {
		return host, false
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !t.trusts(peer) {
		return host, false
	}
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		// The nearest hop whose forwarding we believe: first the peer,
		// then each trusted entry in turn, right to left.
		nearest := peer
		for i := len(xff) - 1; i >= 0; i-- {
			line := xff[i]
			for line != "" {
				entry := line
				if j := strings.LastIndexByte(line, ','); j >= 0 {
					entry, line = line[j+1:], line[:j]
				} else {
					line = ""
				}
				entry = strings.TrimSpace(entry)
				if entry == "" {
					continue
				}
				a, ok := parseForwardedAddr(entry)
				if !ok {
					return nearest.Unmap().String(), true
				}
				if !t.trusts(a) {
					return a.Unmap().String(), true
				}
				nearest = a
			}
		}
		return nearest.Unmap().String(), true
	}
	if xr := strings.TrimSpace(r.Header.Get("X-Real-Ip")); xr != "" {
		if a, ok := parseForwardedAddr(xr); ok {
			return a.Unmap().String(), true
		}
	}
	return host, false
}

// parseForwardedAddr reads one forwarded address: a bare IPv4 or IPv6
// address, or one with a port (192.0.2.1:4711, [2001:db8::1]:4711), or a
// bracketed IPv6 address without one, as proxies variously write them.
func parseForwardedAddr(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().WithZone(""), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.WithZone(""), true
		}
	}
	return netip.Addr{}, false
}

// peerHost is a connection's remote address without its port: a client
// opens a new port for every connection, so the port tells nothing about
// who it is.
func peerHost(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

// ClientIP is the address of the client that sent r, without a port, as
// the listener serving it resolves it (TrustedProxies.ClientIP with its
// --trusted-proxies): what per-client limits such as the banking login
// throttle count by. A request served outside the platform's Build has
// only its connection's peer.
func ClientIP(r *http.Request) string {
	var t TrustedProxies
	if c, ok := r.Context().Value(idContextKey).(*idContext); ok {
		t = c.proxies
	}
	return t.ClientIP(r)
}
