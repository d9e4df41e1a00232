package bankapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"partnerapi/internal/banking"
)

// NewWebhookClient is the HTTP client of webhook deliveries under policy.
// The URL check when a partner sets its URL is not enough on its own: the
// partner's DNS can answer a public address then and a private one at
// delivery time (DNS rebinding). So the client resolves each host itself,
// refuses the connection when any address is private, and checks again
// the address the socket actually connects to. It does not follow
// redirects (a 3xx is the delivery's answer), uses no proxy from the
// environment (a proxy would dial for us, past the check), and refuses
// http:// unless the policy allows it. A receiver's certificate is checked
// against policy.RootCAs when set, else the system's roots.
func NewWebhookClient(policy banking.WebhookURLPolicy) *http.Client {
	g := &webhookDialGuard{allowPrivate: policy.AllowPrivate, resolver: policy.Resolver}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	g.dialer = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if policy.RootCAs != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: policy.RootCAs, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{
		Transport:     schemeGuard{next: tr, allowHTTP: policy.AllowHTTP},
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// webhookDialGuard dials only public addresses unless allowPrivate.
type webhookDialGuard struct {
	allowPrivate bool
	resolver     banking.WebhookResolver
	dialer       *net.Dialer
}

func (g *webhookDialGuard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = g.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("webhook host %s has no address", host)
	}
	if !g.allowPrivate {
		// Any private answer refuses the host: a name that mixes public
		// and private addresses is not one to trust with the first pick.
		for _, a := range addrs {
			if banking.PrivateWebhookAddr(a) {
				return nil, fmt.Errorf("webhook host %s: %w", host, banking.ErrPrivateWebhookAddress)
			}
		}
	}
	var errs []error
	for _, a := range addrs {
		c, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// control is the last check, on the address the socket connects to,
// whatever led to it.
func (g *webhookDialGuard) control(network, address string, _ syscall.RawConn) error {
	if g.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || banking.PrivateWebhookAddr(ap.Addr()) {
		return banking.ErrPrivateWebhookAddress
	}
	return nil
}

// schemeGuard refuses plain http where the policy wants https, for the
// URLs stored before the contour changed as much as for new ones.
type schemeGuard struct {
	next      http.RoundTripper
	allowHTTP bool
}

// errPlainHTTPWebhook is the refusal of an http:// webhook URL.
var errPlainHTTPWebhook = errors.New("banking: webhook URL must be https in this contour")

func (s schemeGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" && !s.allowHTTP {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, errPlainHTTPWebhook
	}
	return s.next.RoundTrip(r)
}
