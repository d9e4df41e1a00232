package banking

import (
	"context"
	"crypto/x509"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// WebhookResolver turns a host name into addresses; *net.Resolver has this
// method, and tests inject a table so that no test needs the network.
type WebhookResolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// WebhookURLPolicy decides which partner webhook URLs are acceptable. A
// partner chooses the URL and our process calls it, so without this check a
// partner could make us POST into our own network (server-side request
// forgery): the loopback, the private ranges, the cloud metadata address.
// The zero value is the production rule: https only, public addresses only.
type WebhookURLPolicy struct {
	// AllowHTTP admits http:// (the sandbox and test contours).
	AllowHTTP bool
	// AllowPrivate admits private and local targets: the operator's
	// --banking-webhook-allow-private, for a receiver inside its network.
	AllowPrivate bool
	// Resolver resolves host names when a URL is set; nil leaves names to
	// the dial-time guard, which checks every address it connects to.
	Resolver WebhookResolver
	// RootCAs are the authorities a receiver's certificate is checked
	// against: the operator's --banking-webhook-ca added to the system's,
	// for receivers whose certificate an own or corporate CA issued; nil:
	// the system's alone.
	RootCAs *x509.CertPool
}

// ErrPrivateWebhookAddress is the dial-time refusal of a webhook target
// that resolved into a private or local network.
var ErrPrivateWebhookAddress = errors.New("banking: webhook target resolves to a private or local address")

// webhookLookupTimeout bounds the name lookup of a URL being set, so a slow
// DNS server cannot hold the partner's request.
const webhookLookupTimeout = 3 * time.Second

const webhookURLCheck = "адрес: абсолютный URL http(s) до 2048 символов"

// Check validates a partner's webhook URL: absolute, at most 2048
// characters, with a host and no credentials, https unless AllowHTTP, and
// unless AllowPrivate a host that is not, and does not resolve to, a
// private or local address. A name that does not resolve now is accepted:
// the dial-time guard checks whatever it resolves to when it is called.
func (p WebhookURLPolicy) Check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || len(raw) > 2048:
		return webhookFault("url", webhookURLCheck)
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "" || u.Hostname() == "":
		return webhookFault("url", webhookURLCheck)
	case u.User != nil:
		return webhookFault("url", "адрес не должен содержать учётные данные")
	case u.Scheme == "http" && !p.AllowHTTP:
		return webhookFault("url", "адрес: в этом контуре только https")
	}
	if p.AllowPrivate {
		return nil
	}
	const private = "адрес не должен указывать во внутреннюю сеть (loopback, частные, link-local, multicast адреса)"
	host := strings.TrimSuffix(u.Hostname(), ".")
	a, err := netip.ParseAddr(host)
	if err != nil && endsInNumber(u.Hostname()) {
		// A host whose last label is a number is an IPv4 address to a
		// browser and to the C library's resolver (WHATWG URL §3.5,
		// inet_aton), whatever Go's parser makes of it: 2130706433,
		// 0x7f.1 and 0177.0.0.1 are all 127.0.0.1. Such a host is judged
		// as that address, and refused when it is none.
		var ok bool
		if a, ok = parseIPv4Number(u.Hostname()); !ok {
			return webhookFault("url", webhookURLCheck)
		}
		err = nil
	}
	if err == nil {
		if PrivateWebhookAddr(a) {
			return webhookFault("url", private)
		}
		return nil
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return webhookFault("url", private)
	}
	if p.Resolver == nil {
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, webhookLookupTimeout)
	defer cancel()
	addrs, err := p.Resolver.LookupNetIP(lctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if PrivateWebhookAddr(a) {
			return webhookFault("url", private)
		}
	}
	return nil
}

// privateWebhookPrefixes are the ranges a webhook may not reach besides
// those netip classifies (loopback, RFC 1918, fc00::/7, link-local,
// multicast, unspecified): addresses that are not on the public Internet
// or that reach a host's own stack.
var privateWebhookPrefixes = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // carrier-grade NAT, often the cloud's internal network
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"240.0.0.0/4",     // reserved, and the broadcast address
		"100::/64",        // discard
		"2001:db8::/32",   // documentation
		"fec0::/10",       // deprecated site-local
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// embeddedV4 are IPv6 ranges that carry an IPv4 address a gateway may
// forward to: NAT64 (in the last 32 bits) and 6to4 (in bits 16..48), and
// the deprecated IPv4-compatible addresses (::a.b.c.d, RFC 4291
// §2.5.5.1, in the last 32 bits), which older stacks and tunnels still
// route to the IPv4 address and which netip classifies as none of
// loopback, private or link-local, so that [::127.0.0.1] and
// [::169.254.169.254] passed as public.
//
// NAT64 local-use (64:ff9b:1::/48, RFC 8215) embeds the IPv4 address as
// RFC 6052 does, but at a prefix length (/48 up to /96) the operator
// chooses, so which bits hold it cannot be told from the address: the
// whole range is judged non-public. Teredo (2001::/32, RFC 4380) carries
// two IPv4 addresses, the server's in bits 32..63 and the client's,
// inverted (XOR 0xffffffff), in the last 32 bits; a relay forwards to
// the client and the server is on the path, so the address is judged
// non-public when either of them is.
var (
	nat64Prefix   = netip.MustParsePrefix("64:ff9b::/96")
	nat64LocalUse = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour     = netip.MustParsePrefix("2002::/16")
	teredo        = netip.MustParsePrefix("2001::/32")
	v4Compatible  = netip.MustParsePrefix("::/96")
)

// PrivateWebhookAddr reports whether a is an address a webhook must not
// reach unless the operator allows private targets: loopback (127/8, ::1),
// private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16
// with the cloud metadata address 169.254.169.254, fe80::/10), unspecified
// (0.0.0.0, ::), multicast, and the reserved ranges above. IPv4 written in
// IPv6 (::ffff:a.b.c.d, ::a.b.c.d, NAT64, 6to4, Teredo) is judged by its
// IPv4 addresses, and NAT64 local-use is refused whole. An invalid
// address counts as private: the guard refuses what it cannot judge.
func PrivateWebhookAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64Prefix.Contains(a), v4Compatible.Contains(a):
			// :: and ::1 are in ::/96 too; their IPv4 reading, 0.0.0.0
			// and 0.0.0.1, is "this network", so they stay refused.
			return PrivateWebhookAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(a):
			return PrivateWebhookAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		case nat64LocalUse.Contains(a):
			return true
		case teredo.Contains(a):
			server := netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]})
			client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
			return PrivateWebhookAddr(server) || PrivateWebhookAddr(client)
		}
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range privateWebhookPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// endsInNumber is the WHATWG URL standard's "ends in a number checker"
// (§3.5): whether host's last label, after one trailing dot, is decimal
// digits or a number the IPv4 parser reads (0x hexadecimal included).
func endsInNumber(host string) bool {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Part(last)
	return ok
}

// parseIPv4Number is the WHATWG URL standard's IPv4 parser, which is also
// inet_aton's: one to four dot-separated numbers, each decimal, octal
// after a leading 0 or hexadecimal after 0x, the last filling the bytes
// the others leave; one trailing dot is allowed.
func parseIPv4Number(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Part reads one number of an IPv4 host (WHATWG URL §3.5, "IPv4
// number parser"); a value past 2^32 is refused, as no part may exceed it.
func parseIPv4Part(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		if n = n*base + d; n > 1<<32 {
			return 0, false
		}
	}
	return n, true
}
