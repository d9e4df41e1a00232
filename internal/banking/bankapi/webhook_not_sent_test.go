package bankapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// joseOnDefault gives partner-1 the deployment default's receiver in jose
// and every other partner its target from next. The default's format is
// the deployment's, so no real setting mixes formats on it: this stands
// for any failure of ours in one partner's event on a receiver that other
// partners share.
type joseOnDefault struct{ next WebhookTargets }

func (j joseOnDefault) Target(ctx context.Context, clientID string) (banking.WebhookTarget, error) {
	t, err := j.next.Target(ctx, clientID)
	if err == nil && clientID == "partner-1" {
		t.Format = banking.WebhookFormatJOSE
	}
	return t, err
}

// A jose event with no bank key to sign it fails on our side before
// anything is sent: it pauses no receiver, so another partner's event to
// the same receiver goes in the same pass, and it is logged for its
// partner as an attempt with no HTTP status, the missing key its error,
// and a next try by the backoff. Before, its status 0 read as a receiver
// that did not answer and paused the receiver, the deployment default
// shared by every partner without a webhook of their own included.
func TestWebhookNotSentPausesNoReceiver(t *testing.T) {
	for _, tc := range []struct {
		name string
		// own: partner-1 sets a jose webhook of its own; else it is on
		// the default (joseOnDefault).
		own      bool
		endpoint string // partner-1's receiver as pauses know it
	}{
		{name: "default receiver", endpoint: banking.DefaultWebhookEndpoint},
		{name: "own receiver", own: true, endpoint: "partner-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			operator := newPartnerSink(t, "operator-secret", nil)
			e := newHookEnv(t, banking.WebhookTarget{URL: operator.srv.URL, Secret: operator.secret})
			var targets WebhookTargets = joseOnDefault{e.hooks}
			if tc.own {
				own := newPartnerSink(t, "partner-one-secret-0001", nil)
				if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"`+own.srv.URL+`","secret":"partner-one-secret-0001","format":"jose"}`); st != 200 {
					t.Fatal(raw)
				}
				targets = e.hooks
			}
			// partner-1's event first, and one worker: it fails before
			// partner-3's starts, so a pause of its receiver would take
			// partner-3's out of the pass.
			joseID, jsonID := newUUID(710), newUUID(711)
			e.pay("p1", joseID)
			e.pay("p3", jsonID)
			disp := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: targets, URLs: loopbackURLs},
				Workers: 1, BaseBackoff: time.Minute, Now: func() time.Time { return payNow }}
			n, err := disp.RunOnce(context.Background())
			if err != nil || n != 2 {
				t.Fatalf("run: %d tried, %v; want both", n, err)
			}
			if _, ok, _ := operator.snapshot(); ok[jsonID] != 1 {
				t.Fatalf("partner-3's event to the default receiver was not delivered in the pass: %v", ok)
			}
			pause, err := e.store.WebhookPause(context.Background(), tc.endpoint)
			if err != nil || !pause.Until.IsZero() || pause.Failures != 0 {
				t.Fatalf("receiver %s paused: %+v %v", tc.endpoint, pause, err)
			}
			ds, err := e.hooks.Deliveries(context.Background(), "partner-1", 10)
			if err != nil || len(ds) != 1 {
				t.Fatalf("partner-1's deliveries %+v %v", ds, err)
			}
			d := ds[0]
			if d.ExternalID != joseID || d.State != "PENDING" || d.Attempts != 1 || len(d.Log) != 1 || !d.NextAt.After(payNow) {
				t.Fatalf("the jose event's delivery %+v", d)
			}
			if a := d.Log[0]; a.HTTPStatus != 0 || !strings.Contains(a.Error, "no bank signing key") || a.Format != banking.WebhookFormatJOSE {
				t.Fatalf("the jose event's attempt %+v", a)
			}
		})
	}
}

// A delivery whose receiver refuses the connection is logged without the
// address the receiver's name resolved to when it is the deployment
// default: the operator's internal address is not the partners' to read.
// A partner's own receiver keeps it, which helps the partner debug its
// receiver.
func TestWebhookDialErrorHidesTheDefaultsAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close() // nothing listens there now: the connection is refused
	// The receiver is named, so the only 127.0.0.1 in the log is what the
	// dial error adds.
	receiver := "http://receiver.test:" + port
	urls := loopbackURLs
	urls.Resolver = newScriptedDNS(map[string][]string{"receiver.test": {"127.0.0.1"}})
	for _, tc := range []struct {
		name     string
		own      bool
		keepAddr bool
	}{
		{name: "default receiver"},
		{name: "own receiver", own: true, keepAddr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := banking.WebhookTarget{URL: receiver + "/hook", Secret: []byte("default-secret-0000000001")}
			if tc.own {
				def = banking.WebhookTarget{}
			}
			e := newHookEnv(t, def)
			if tc.own {
				if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"`+receiver+`/own","secret":"partner-one-secret-0001"}`); st != 200 {
					t.Fatal(raw)
				}
			}
			e.pay("p1", newUUID(720))
			disp := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: e.hooks, URLs: urls},
				Now: func() time.Time { return payNow }}
			if n, err := disp.RunOnce(context.Background()); err != nil || n != 1 {
				t.Fatalf("run %d %v", n, err)
			}
			st, _, raw := e.do("GET", webhookBase+"/deliveries", "p1", "")
			if st != 200 || !strings.Contains(raw, "receiver.test:"+port) || !strings.Contains(raw, "dial tcp") || !strings.Contains(raw, "connection refused") {
				t.Fatalf("deliveries %d %s", st, raw)
			}
			if got := strings.Contains(raw, "127.0.0.1:"+port); got != tc.keepAddr {
				t.Fatalf("the log shows the receiver's address: %v, want %v: %s", got, tc.keepAddr, raw)
			}
		})
	}
}

// The delivery error as the log keeps it: the URL cut to scheme and host,
// the bank's own addresses (a connection's local one, the resolver's)
// dropped always and the receiver's address for the default's receiver
// alone, through the wrappers net/http and the dial guard put around the
// net errors, whose chain is kept.
func TestWebhookErrorAddresses(t *testing.T) {
	u, _ := url.Parse("https://hooks.example/p/SECRET?token=SECRET")
	refused := os.NewSyscallError("connect", syscall.ECONNREFUSED)
	dial := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 8443}, Err: refused}
	reset := &net.OpError{Op: "read", Net: "tcp", Source: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 43210},
		Addr: &net.TCPAddr{IP: net.IPv4(203, 0, 113, 7), Port: 443}, Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	lookup := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "hooks.example", Server: "10.0.0.2:53", IsNotFound: true}}
	post := func(err error) error { return &url.Error{Op: "Post", URL: u.String(), Err: err} }
	for _, tc := range []struct {
		name          string
		err           error
		operators     bool
		want          string
		is            error
		isNotFoundDNS bool
	}{
		{name: "dial, default", err: post(errors.Join(dial)), operators: true,
			want: `Post "https://hooks.example": dial tcp: connect: connection refused`, is: syscall.ECONNREFUSED},
		{name: "dial, own", err: post(errors.Join(dial)),
			want: `Post "https://hooks.example": dial tcp 10.1.2.3:8443: connect: connection refused`, is: syscall.ECONNREFUSED},
		{name: "read, default", err: post(fmt.Errorf("net/http: transport failed: %w", reset)), operators: true,
			want: `Post "https://hooks.example": net/http: transport failed: read tcp: read: connection reset by peer`, is: syscall.ECONNRESET},
		{name: "read, own", err: post(fmt.Errorf("net/http: transport failed: %w", reset)),
			want: `Post "https://hooks.example": net/http: transport failed: read tcp 203.0.113.7:443: read: connection reset by peer`, is: syscall.ECONNRESET},
		{name: "lookup, default", err: post(lookup), operators: true,
			want: `Post "https://hooks.example": dial tcp: lookup hooks.example: no such host`, isNotFoundDNS: true},
		{name: "lookup, own", err: post(lookup),
			want: `Post "https://hooks.example": dial tcp: lookup hooks.example: no such host`, isNotFoundDNS: true},
		{name: "no net error", err: post(errPlainHTTPWebhook), operators: true,
			want: `Post "https://hooks.example": ` + errPlainHTTPWebhook.Error(), is: errPlainHTTPWebhook},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withURLHost(tc.err, u, tc.operators)
			if got.Error() != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if tc.is != nil && !errors.Is(got, tc.is) {
				t.Errorf("%v is not %v any more", got, tc.is)
			}
			var dns *net.DNSError
			if tc.isNotFoundDNS && (!errors.As(got, &dns) || !dns.IsNotFound || dns.Server != "") {
				t.Errorf("the DNS error %+v", dns)
			}
		})
	}
}
