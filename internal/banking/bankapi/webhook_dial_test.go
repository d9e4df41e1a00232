package bankapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// loopbackURLs is the policy of tests whose receivers are httptest servers
// on 127.0.0.1: plain http to private addresses, as an operator allows
// with --banking-webhook-allow-private. Tests of the guard use their own.
var loopbackURLs = banking.WebhookURLPolicy{AllowHTTP: true, AllowPrivate: true}

// scriptedDNS answers each name from a list of answers in turn (the last
// one repeats) and counts the lookups: the rebinding attacker's DNS.
type scriptedDNS struct {
	mu      sync.Mutex
	answers map[string][]string
	lookups map[string]int
}

func newScriptedDNS(answers map[string][]string) *scriptedDNS {
	return &scriptedDNS{answers: answers, lookups: map[string]int{}}
}

func (d *scriptedDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	list, ok := d.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := min(d.lookups[host], len(list)-1)
	d.lookups[host]++
	return []netip.Addr{netip.MustParseAddr(list[n])}, nil
}

// The delivery client refuses every private address class at dial time,
// before any packet leaves: IP literals need no resolver and no network.
func TestWebhookClientRefusesPrivateAddresses(t *testing.T) {
	client := NewWebhookClient(banking.WebhookURLPolicy{AllowHTTP: true, Resolver: newScriptedDNS(nil)})
	for _, tc := range []struct{ class, host string }{
		{"loopback", "127.0.0.1"},
		{"loopback v6", "[::1]"},
		{"10/8", "10.0.0.1"},
		{"172.16/12", "172.16.5.4"},
		{"192.168/16", "192.168.1.1"},
		{"link-local", "169.254.1.1"},
		{"cloud metadata", "169.254.169.254"},
		{"unique local", "[fd00::1]"},
		{"link-local v6", "[fe80::1]"},
		{"unspecified", "0.0.0.0"},
		{"multicast", "224.0.0.1"},
		{"multicast v6", "[ff02::1]"},
		{"IPv4-mapped loopback", "[::ffff:127.0.0.1]"},
		{"IPv4-mapped loopback in hexadecimal", "[::ffff:7f00:1]"},
		{"IPv4-compatible loopback", "[::127.0.0.1]"},
		{"IPv4-compatible cloud metadata", "[::a9fe:a9fe]"},
		{"NAT64 of a private address", "[64:ff9b::10.0.0.1]"},
		{"6to4 of a private address", "[2002:c0a8:101::1]"},
		{"NAT64 local-use", "[64:ff9b:1::808:808]"},
		{"Teredo to a loopback client", "[2001:0:4136:e378:8000:63bf:80ff:fffe]"},
		{"Teredo via a private server", "[2001:0:a00:1:8000:63bf:f7f7:f7f7]"},
	} {
		resp, err := client.Post("http://"+tc.host+":9/hook", "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, banking.ErrPrivateWebhookAddress) {
			t.Errorf("%s %s: %v", tc.class, tc.host, err)
		}
	}
	// The socket-level check refuses what the resolver step let through.
	g := &webhookDialGuard{}
	for _, addr := range []string{"127.0.0.1:443", "[::1]:443", "10.1.1.1:80", "[fe80::1%eth0]:80", "169.254.169.254:80",
		"[::127.0.0.1]:443", "[::ffff:7f00:1]:443", "[64:ff9b::a00:1]:80", "[2002:a00:1::1]:80",
		"[64:ff9b:1::808:808]:443", "[2001:0:4136:e378:8000:63bf:80ff:fffe]:443", "not an address"} {
		if err := g.control("tcp", addr, nil); !errors.Is(err, banking.ErrPrivateWebhookAddress) {
			t.Errorf("control %s: %v", addr, err)
		}
	}
	if err := g.control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("control of a public address: %v", err)
	}
	if err := (&webhookDialGuard{allowPrivate: true}).control("tcp", "127.0.0.1:443", nil); err != nil {
		t.Errorf("control with private targets allowed: %v", err)
	}
}

// A name that answers a public address when the partner sets its URL and
// our loopback when the delivery dials (DNS rebinding) gets nothing: the
// attempt is logged as refused and the receiver is never called. With
// private targets allowed, the same name reaches the receiver, so the
// refusal is the guard's and not a failed lookup.
func TestWebhookDNSRebindingRefused(t *testing.T) {
	sink := newPartnerSink(t, "partner-one-secret-0001", nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(sink.srv.URL, "http://"))
	url := "http://rebind.example:" + port + "/hook"
	for _, allow := range []bool{false, true} {
		answers := []string{"93.184.216.34", "127.0.0.1"} // public when set, loopback when dialled
		if allow {
			answers = answers[1:] // the set-time lookup is skipped
		}
		dns := newScriptedDNS(map[string][]string{"rebind.example": answers})
		policy := banking.WebhookURLPolicy{AllowHTTP: true, AllowPrivate: allow, Resolver: dns}
		e := newHookEnv(t, banking.WebhookTarget{})
		e.hooks.URLs = policy
		if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"`+url+`","secret":"partner-one-secret-0001"}`); st != 200 {
			t.Fatalf("allow=%v: set: %s", allow, raw)
		}
		id := newUUID(700)
		if allow {
			id = newUUID(701)
		}
		e.pay("p1", id)
		disp := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: e.hooks, URLs: policy}, ConfiguredOnly: true,
			Now: func() time.Time { return payNow }}
		if n, err := disp.RunOnce(context.Background()); err != nil || n != 1 {
			t.Fatalf("allow=%v: run %d %v", allow, n, err)
		}
		ds, err := e.hooks.Deliveries(context.Background(), "partner-1", 10)
		if err != nil || len(ds) != 1 || len(ds[0].Log) != 1 {
			t.Fatalf("allow=%v: deliveries %+v %v", allow, ds, err)
		}
		calls, _, _ := sink.snapshot()
		// One lookup at set time (skipped when private targets are
		// allowed), one at dial time.
		want := 2
		if allow {
			want = 1
		}
		if dns.lookups["rebind.example"] != want {
			t.Fatalf("allow=%v: the dial did not resolve the name again (%d lookups)", allow, dns.lookups["rebind.example"])
		}
		switch d := ds[0]; {
		case !allow && (d.State != "PENDING" || d.Log[0].HTTPStatus != 0 || !strings.Contains(d.LastError, "private") || calls[id] != 0):
			t.Fatalf("rebinding not refused: %+v, receiver calls %d", d, calls[id])
		case allow && (d.State != "DELIVERED" || calls[id] != 1):
			t.Fatalf("allowed private target not reached: %+v, receiver calls %d", d, calls[id])
		}
	}
}

// Private and plain-http URLs are refused when set through the API, with
// the banking envelope naming the field; the same URLs pass when the
// operator allows private targets.
func TestWebhookSetRefusesPrivateURLs(t *testing.T) {
	e := newHookEnv(t, banking.WebhookTarget{})
	e.hooks.URLs = banking.WebhookURLPolicy{Resolver: newScriptedDNS(map[string][]string{
		"partner.example": {"93.184.216.34"}, "inside.example": {"10.20.30.40"}, "meta.example": {"169.254.169.254"}})}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://partner.example/hook", true},
		{"http://partner.example/hook", false},
		{"https://127.0.0.1/hook", false},
		{"https://[::1]:8443/hook", false},
		{"https://10.0.0.1/hook", false},
		{"https://172.16.0.1/hook", false},
		{"https://192.168.0.1/hook", false},
		{"https://169.254.169.254/latest/meta-data/", false},
		{"https://[fc00::1]/hook", false},
		{"https://[fe80::1]/hook", false},
		{"https://0.0.0.0/hook", false},
		{"https://239.1.1.1/hook", false},
		{"https://localhost:8443/hook", false},
		{"https://inside.example/hook", false},
		{"https://meta.example/hook", false},
	} {
		st, m, raw := e.do("PUT", webhookBase, "p1", `{"url":"`+tc.url+`","secret":"partner-one-secret-0001"}`)
		if tc.ok && st != 200 {
			t.Errorf("%s: %d %s", tc.url, st, raw)
		}
		if !tc.ok && (st != 400 || m["cause"] != "VALIDATION_FAULT" || !strings.Contains(raw, `"fieldNames":["url"]`)) {
			t.Errorf("%s: %d %s", tc.url, st, raw)
		}
	}
	if v, _ := e.hooks.Get(context.Background(), "partner-1"); v.URL != "https://partner.example/hook" {
		t.Fatalf("a refused URL was stored: %+v", v)
	}
	e.hooks.URLs = banking.WebhookURLPolicy{AllowHTTP: true, AllowPrivate: true}
	if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"http://10.0.0.1/hook"}`); st != 200 {
		t.Fatalf("allowed private: %d %s", st, raw)
	}
}

// A redirect is the delivery's answer, not a hop: a receiver cannot send
// our request on to an address of its choosing. And where https is
// required, an http URL stored earlier is not called.
func TestWebhookClientRedirectsAndScheme(t *testing.T) {
	var inner sync.Mutex
	innerCalls := 0
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.Lock()
		innerCalls++
		inner.Unlock()
		w.WriteHeader(204)
	}))
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/internal", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	ev := banking.WebhookEvent{ExternalID: newUUID(710), BankStatus: "IMPLEMENTED", EventTime: payNow}
	s := &WebhookSender{Targets: fixedTarget{URL: redirector.URL, Secret: []byte("redirect-secret-01")}, URLs: loopbackURLs}
	if sent, err := s.Send(context.Background(), ev); err != nil || sent.Status != http.StatusTemporaryRedirect {
		t.Fatalf("redirect: %d %v", sent.Status, err)
	}
	inner.Lock()
	followed := innerCalls
	inner.Unlock()
	if followed != 0 {
		t.Fatalf("the redirect was followed")
	}
	httpsOnly := &WebhookSender{Targets: fixedTarget{URL: target.URL, Secret: []byte("redirect-secret-01")},
		URLs: banking.WebhookURLPolicy{AllowPrivate: true}}
	_, err := httpsOnly.Send(context.Background(), ev)
	inner.Lock()
	defer inner.Unlock()
	if !errors.Is(err, errPlainHTTPWebhook) || innerCalls != 0 {
		t.Fatalf("http where https is required: %v, calls %d", err, innerCalls)
	}
}

// A delivery that fails to connect is logged with the URL cut to its scheme
// and host: the partner reads the log, and the operator's default URL,
// which GET /v1/webhook does not show it, may carry a receiver's token in
// its path or query.
func TestWebhookDeliveryErrorHidesTheURLsPathAndQuery(t *testing.T) {
	def := banking.WebhookTarget{URL: "http://127.0.0.1:1/hook/PATHSECRET?token=QUERYSECRET", Secret: []byte("default-secret-0000000001")}
	e := newHookEnv(t, def)
	id := newUUID(702)
	e.pay("p1", id)
	disp := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: e.hooks, URLs: loopbackURLs},
		Now: func() time.Time { return payNow }}
	if n, err := disp.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("run %d %v", n, err)
	}
	st, _, raw := e.do("GET", webhookBase+"/deliveries", "p1", "")
	if st != 200 || !strings.Contains(raw, "127.0.0.1:1") || !strings.Contains(raw, "refused") {
		t.Fatalf("deliveries %d %s", st, raw)
	}
	if strings.Contains(raw, "SECRET") || strings.Contains(raw, "/hook") {
		t.Errorf("the delivery log shows the default URL's path or query: %s", raw)
	}
}
