package banking

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// addrTable is a resolver over a fixed table: tests never use the network.
type addrTable map[string][]string

func (t addrTable) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ss, ok := t[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func TestPrivateWebhookAddr(t *testing.T) {
	for _, tc := range []struct {
		class   string
		addrs   []string
		private bool
	}{
		{"loopback v4", []string{"127.0.0.1", "127.255.255.254"}, true},
		{"loopback v6", []string{"::1"}, true},
		{"10/8", []string{"10.0.0.1", "10.255.255.255"}, true},
		{"172.16/12", []string{"172.16.0.1", "172.31.255.255"}, true},
		{"192.168/16", []string{"192.168.0.1", "192.168.255.255"}, true},
		{"link-local v4 and cloud metadata", []string{"169.254.0.1", "169.254.169.254"}, true},
		{"unique local fc00::/7", []string{"fc00::1", "fd12:3456::1"}, true},
		{"link-local fe80::/10", []string{"fe80::1", "febf::1", "fe80::1%eth0"}, true},
		{"unspecified", []string{"0.0.0.0", "::", "0.1.2.3"}, true},
		{"multicast", []string{"224.0.0.1", "239.255.255.250", "ff02::1", "ff0e::1", "ff01::1"}, true},
		{"broadcast and reserved", []string{"255.255.255.255", "240.0.0.1"}, true},
		{"carrier-grade NAT", []string{"100.64.0.1", "100.127.255.254"}, true},
		{"IPv4-mapped private", []string{"::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254"}, true},
		{"NAT64 of private", []string{"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe"}, true},
		{"6to4 of private", []string{"2002:7f00:1::1", "2002:c0a8:101::1"}, true},
		// IPv4-compatible (::a.b.c.d, RFC 4291 §2.5.5.1, deprecated) is
		// judged by its IPv4 address, as the other embeddings are.
		{"IPv4-compatible of private", []string{"::127.0.0.1", "::7f00:1", "::10.1.2.3", "::169.254.169.254", "::192.168.0.1", "::0.0.0.2"}, true},
		// NAT64 local-use (64:ff9b:1::/48, RFC 8215) embeds the IPv4 at a
		// prefix length only the operator knows, so the whole range is
		// refused, with a public IPv4 in the /96 position too.
		{"NAT64 local-use", []string{"64:ff9b:1::7f00:1", "64:ff9b:1::808:808", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "64:ff9b:1::"}, true},
		// Teredo (2001::/32, RFC 4380) carries the server's IPv4 in bits
		// 32..63 and the client's, XOR 0xffffffff, in the last 32 bits:
		// either one non-public refuses the address.
		{"Teredo, client private", []string{
			"2001:0:4136:e378:8000:63bf:80ff:fffe",  // client 127.0.0.1
			"2001:0:4136:e378:8000:63bf:5601:5601",  // client 169.254.169.254
			"2001:0:4136:e378:8000:63bf:f5ff:fffe",  // client 10.0.0.1
			"2001:0:4136:e378:8000:63bf:3fff:fdd2"}, // RFC 4380's example, client 192.0.2.45 (documentation)
			true},
		{"Teredo, server private", []string{"2001:0:a00:1:8000:63bf:f7f7:f7f7", "2001:0:7f00:1::f7f7:f7f7", "2001::f7f7:f7f7", "2001::"}, true},
		{"Teredo, both public", []string{"2001:0:4136:e378:8000:63bf:f7f7:f7f7"}, false},
		{"IPv4-mapped in hexadecimal", []string{"::ffff:7f00:1", "::ffff:a01:203"}, true},
		{"documentation", []string{"192.0.2.1", "2001:db8::1"}, true},
		{"public v4", []string{"8.8.8.8", "172.15.255.255", "172.32.0.1", "169.253.255.255", "100.63.255.255", "11.0.0.1", "193.0.0.1"}, false},
		{"public v6", []string{"2a00:1450:4010:c02::64", "2606:4700::1111"}, false},
		{"IPv4-mapped public", []string{"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "::8.8.8.8"}, false},
	} {
		for _, s := range tc.addrs {
			if got := PrivateWebhookAddr(netip.MustParseAddr(s)); got != tc.private {
				t.Errorf("%s: %s private=%v, want %v", tc.class, s, got, tc.private)
			}
		}
	}
	if !PrivateWebhookAddr(netip.Addr{}) {
		t.Error("the invalid address must count as private")
	}
}

func TestWebhookURLPolicy(t *testing.T) {
	dns := addrTable{
		"partner.example":  {"93.184.216.34"},
		"dual.example":     {"93.184.216.34", "2606:2800:220:1::1"},
		"inside.example":   {"10.0.0.7"},
		"metadata.example": {"169.254.169.254"},
		"mixed.example":    {"93.184.216.34", "127.0.0.1"},
		"v6local.example":  {"fd00::5"},
	}
	production := WebhookURLPolicy{Resolver: dns}
	sandbox := WebhookURLPolicy{AllowHTTP: true, Resolver: dns}
	operator := WebhookURLPolicy{AllowHTTP: true, AllowPrivate: true, Resolver: dns}
	for _, tc := range []struct {
		url    string
		policy WebhookURLPolicy
		ok     bool
		check  string // a word of the refusal
	}{
		{"https://partner.example/hook", production, true, ""},
		{"https://dual.example/hook", production, true, ""},
		{"https://unresolvable.example/hook", production, true, ""}, // the dial-time guard decides
		{"https://93.184.216.34:8443/hook", production, true, ""},
		{"https://[2606:2800:220:1::1]/hook", production, true, ""},
		{"http://partner.example/hook", production, false, "https"},
		{"http://partner.example/hook", sandbox, true, ""},
		{"https://127.0.0.1/hook", production, false, "внутреннюю"},
		{"http://127.0.0.1:8080/hook", sandbox, false, "внутреннюю"},
		{"https://[::1]/hook", production, false, "внутреннюю"},
		{"https://10.1.2.3/hook", production, false, "внутреннюю"},
		{"https://172.20.0.1/hook", production, false, "внутреннюю"},
		{"https://192.168.1.1/hook", production, false, "внутреннюю"},
		{"http://169.254.169.254/latest/meta-data/", sandbox, false, "внутреннюю"},
		{"https://[fd00::1]/hook", production, false, "внутреннюю"},
		{"https://[fe80::1%25eth0]/hook", production, false, "внутреннюю"},
		{"https://0.0.0.0/hook", production, false, "внутреннюю"},
		{"https://224.0.0.1/hook", production, false, "внутреннюю"},
		{"https://[::ffff:127.0.0.1]/hook", production, false, "внутреннюю"},
		{"https://[::ffff:7f00:1]/hook", production, false, "внутреннюю"},
		{"https://[::127.0.0.1]/hook", production, false, "внутреннюю"},
		{"https://[::a9fe:a9fe]/latest/meta-data/", production, false, "внутреннюю"},
		{"https://[64:ff9b::10.0.0.1]/hook", production, false, "внутреннюю"},
		{"https://[64:ff9b::7f00:1]:8443/hook", production, false, "внутреннюю"},
		{"https://[2002:c0a8:101::1]/hook", production, false, "внутреннюю"},
		{"https://[2002:a00:1::]/hook", production, false, "внутреннюю"},
		{"https://[::8.8.8.8]/hook", production, true, ""},
		{"https://[64:ff9b:1::808:808]/hook", production, false, "внутреннюю"},
		{"https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook", production, false, "внутреннюю"},
		{"https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/hook", production, true, ""},
		{"https://localhost/hook", production, false, "внутреннюю"},
		{"https://api.localhost./hook", production, false, "внутреннюю"},
		{"https://inside.example/hook", production, false, "внутреннюю"},
		{"https://metadata.example/hook", production, false, "внутреннюю"},
		{"https://mixed.example/hook", production, false, "внутреннюю"},
		{"https://v6local.example/hook", production, false, "внутреннюю"},
		{"https://inside.example./hook", production, false, "внутреннюю"},
		// Numeric hosts Go's parser refuses are IPv4 addresses to browsers
		// and to inet_aton, and are judged as the addresses they name.
		{"https://2130706433/hook", production, false, "внутреннюю"},
		{"https://0x7f.1/hook", production, false, "внутреннюю"},
		{"https://0177.0.0.1/hook", production, false, "внутреннюю"},
		{"https://127.1:8443/hook", production, false, "внутреннюю"},
		{"https://0/hook", production, false, "внутреннюю"},
		{"https://0XA9FEA9FE/latest/meta-data/", production, false, "внутреннюю"},
		{"https://10.0x10203/hook", production, false, "внутреннюю"},
		{"https://127.0.0.1./hook", production, false, "внутреннюю"},
		{"https://1572395042/hook", production, true, ""}, // 93.184.216.34
		{"https://0x5d.0270.0xd822./hook", production, true, ""},
		{"https://1.2.3.4.5/hook", production, false, "URL"},
		{"https://256.0.0.1/hook", production, false, "URL"},
		{"https://09.1.2.3/hook", production, false, "URL"},
		{"https://1.2.3.4294967296/hook", production, false, "URL"},
		{"https://host.0x/hook", production, false, "URL"},
		{"http://127.0.0.1:8080/hook", operator, true, ""},
		{"http://inside.example/hook", operator, true, ""},
		{"ftp://partner.example/hook", operator, false, "URL"},
		{"https://u:p@partner.example/hook", operator, false, "учётные"},
		{"https:///hook", operator, false, "URL"},
	} {
		err := tc.policy.Check(context.Background(), tc.url)
		if tc.ok {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.url, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindValidation || len(e.FieldNames) != 1 || e.FieldNames[0] != "url" ||
			!strings.Contains(strings.Join(e.Checks, " "), tc.check) {
			t.Errorf("%s: want a VALIDATION_FAULT on url mentioning %q, got %#v", tc.url, tc.check, err)
		}
	}
}
