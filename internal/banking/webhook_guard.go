package banking

import (
	"context"
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
	if a, err := netip.ParseAddr(host); err == nil {
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
// forward to: NAT64 (in the last 32 bits) and 6to4 (in bits 16..48).
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// PrivateWebhookAddr reports whether a is an address a webhook must not
// reach unless the operator allows private targets: loopback (127/8, ::1),
// private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16
// with the cloud metadata address 169.254.169.254, fe80::/10), unspecified
// (0.0.0.0, ::), multicast, and the reserved ranges above. IPv4 written in
// IPv6 (::ffff:a.b.c.d, NAT64, 6to4) is judged by its IPv4 address. An
// invalid address counts as private: the guard refuses what it cannot judge.
func PrivateWebhookAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64Prefix.Contains(a):
			return PrivateWebhookAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(a):
			return PrivateWebhookAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
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
