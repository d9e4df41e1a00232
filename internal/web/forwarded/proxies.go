// Package forwarded resolves the client of a request that came through
// reverse proxies: which peers' forwarding headers to believe
// (X-Forwarded-For, X-Real-IP, RFC 7239's Forwarded) and the walk over
// them. It is the platform's (internal/web), kept apart so that it can be
// fuzzed in a small binary: it takes a request's peer and headers rather
// than the request, and imports no net/http.
package forwarded

import (
	"fmt"
	"iter"
	"net"
	"net/netip"
	"strings"
)

// Proxies are the peers whose forwarding headers the platform believes
// (serve's --trusted-proxies): the reverse proxies and load balancers in
// front of the listeners. Empty, the default, no forwarding header is read
// and a request's client is its connection's peer, since any client can
// write X-Forwarded-For and would otherwise choose the address it is
// throttled and logged by.
type Proxies []netip.Prefix

// ParseProxies reads a comma-separated list of CIDR prefixes (10.0.0.0/8,
// fd00::/8) and bare addresses (one host each). An empty list trusts no
// one. An IPv4-mapped prefix (::ffff:10.0.0.0/104) is the IPv4 prefix it
// maps (10.0.0.0/8); one shorter than /96 is an error.
func ParseProxies(s string) (Proxies, error) {
	var out Proxies
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
			// IPv4 addresses it names, which is how peers are compared
			// (Trusts unmaps them). One shorter than /96 maps no IPv4
			// prefix: kept as an IPv6 prefix it would silently never
			// match the IPv4 peers it was written for, so it is refused.
			if p.Addr().Is4In6() {
				if p.Bits() < 96 {
					return nil, fmt.Errorf("%q: an IPv4-mapped prefix must be /96 or longer; write the IPv4 prefix it stands for", f)
				}
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
func (t Proxies) String() string {
	s := make([]string, len(t))
	for i, p := range t {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// Trusts reports whether a, IPv4-mapped or not and whatever its zone, is
// one of the proxies.
func (t Proxies) Trusts(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Client is the address of the client a request came from, without a
// port, given its connection's peer (http.Request.RemoteAddr) and its
// header (http.Request.Header, whose keys net/http has canonicalised),
// and whether the address came from a forwarding header (the peer is a
// trusted proxy) rather than from the connection. It is the connection's
// peer, or, when the peer is a trusted proxy, the right-most address of
// X-Forwarded-For that is not a trusted proxy's (each proxy appends the
// peer it saw, so the entries to the right of that one were written by
// proxies we trust, and the ones to its left by the client, which may have
// made them up). A request with no X-Forwarded-For from a trusted proxy
// takes its X-Real-IP, the single address proxies set there, and one with
// neither the for= nodes of its Forwarded header (RFC 7239), walked the
// same way. An entry that is no address (in Forwarded also unknown, an
// obfuscated _identifier or an element without one for=) ends the walk at
// the proxy that reported it: a trusted proxy that hides or garbles its
// client makes its own address the client's rather than an address the
// client chose. When every entry is a trusted proxy's the left-most one is
// the client.
//
// The de facto headers come first because they are what the proxies in
// front of most deployments write (nginx's $proxy_add_x_forwarded_for,
// X-Real-IP), and such a proxy passes a client's own Forwarded header on
// untouched: were Forwarded to win, any client behind it could name its
// address with one. A proxy that writes only Forwarded must in turn drop
// a client's own X-Forwarded-For and X-Real-IP, as one that sets only
// X-Real-IP must drop X-Forwarded-For.
func (t Proxies) Client(remoteAddr string, header map[string][]string) (string, bool) {
	host := peerHost(remoteAddr)
	if len(t) == 0 {
		return host, false
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !t.Trusts(peer) {
		return host, false
	}
	if xff := header["X-Forwarded-For"]; len(xff) > 0 {
		return t.walk(peer, forwardedForHops(xff)).Unmap().String(), true
	}
	var xr string
	if v := header["X-Real-Ip"]; len(v) > 0 {
		xr = strings.TrimSpace(v[0])
	}
	if xr != "" {
		if a, ok := parseAddr(xr); ok {
			return a.Unmap().String(), true
		}
		return host, false
	}
	if fwd := header["Forwarded"]; len(fwd) > 0 {
		return t.walk(peer, forwardedHeaderHops(fwd)).Unmap().String(), true
	}
	return host, false
}

// walk is the client a list of forwarded hops names, read right to left
// from the trusted peer: the first hop that is not a trusted proxy's, or
// the nearest trusted one when an unusable hop or the list's end comes
// first.
func (t Proxies) walk(peer netip.Addr, hops iter.Seq[hop]) netip.Addr {
	// The nearest hop whose forwarding we believe: first the peer, then
	// each trusted entry in turn.
	nearest := peer
	for h := range hops {
		if !h.ok {
			return nearest
		}
		if !t.Trusts(h.addr) {
			return h.addr
		}
		nearest = h.addr
	}
	return nearest
}

// forwardedForHops are the entries of X-Forwarded-For's lines, right to
// left; empty entries are skipped.
func forwardedForHops(lines []string) iter.Seq[hop] {
	return func(yield func(hop) bool) {
		for i := len(lines) - 1; i >= 0; i-- {
			line := lines[i]
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
				a, ok := parseAddr(entry)
				if !yield(hop{addr: a, ok: ok}) {
					return
				}
			}
		}
	}
}

// forwardedHeaderHops are the elements of Forwarded's lines, right to left.
func forwardedHeaderHops(lines []string) iter.Seq[hop] {
	return func(yield func(hop) bool) {
		var buf [8]hop
		for i := len(lines) - 1; i >= 0; i-- {
			hops := appendHops(buf[:0], lines[i])
			for j := len(hops) - 1; j >= 0; j-- {
				if !yield(hops[j]) {
					return
				}
			}
		}
	}
}

// parseAddr reads one forwarded address: a bare IPv4 or IPv6 address, or
// one with a port (192.0.2.1:4711, [2001:db8::1]:4711), or a bracketed
// IPv6 address without one, as proxies variously write them.
func parseAddr(s string) (netip.Addr, bool) {
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
