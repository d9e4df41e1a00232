package forwarded

import (
	"strings"
	"testing"
)

func TestParseProxies(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: " , ", want: ""},
		{in: "10.0.0.0/8", want: "10.0.0.0/8"},
		{in: "10.1.2.3/8", want: "10.0.0.0/8"}, // host bits dropped: the prefix is what is trusted
		{in: "192.0.2.7", want: "192.0.2.7/32"},
		{in: "2001:db8::1", want: "2001:db8::1/128"},
		{in: "fd00::/8, 127.0.0.1", want: "fd00::/8,127.0.0.1/32"},
		{in: "::ffff:10.0.0.0/104", want: "10.0.0.0/8"},
		{in: "::ffff:192.0.2.7", want: "192.0.2.7/32"},
		// An IPv4-mapped prefix is the IPv4 prefix it maps (peers are
		// compared unmapped), and one shorter than /96, which maps no
		// IPv4 prefix and would never match an IPv4 peer, is refused.
		{in: "::ffff:0:0/96", want: "0.0.0.0/0"},
		{in: "::ffff:7f00:1/128", want: "127.0.0.1/32"},
		{in: "::ffff:10.1.2.3/104", want: "10.0.0.0/8"},
		{in: "::ffff:0.0.0.0/90", err: `"::ffff:0.0.0.0/90"`},
		{in: "::ffff:0:0/95", err: `"::ffff:0:0/95"`},
		{in: "::ffff:0:0/80", err: `"::ffff:0:0/80"`},
		{in: "::/0", want: "::/0"},
		{in: "10.0.0.0/33", err: `"10.0.0.0/33"`},
		{in: "proxy.internal", err: `"proxy.internal"`},
		{in: "10.0.0.1,nope", err: `"nope"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseProxies(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseProxies(%q) = %v, %v; want an error naming %s", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got.String() != tc.want {
				t.Fatalf("ParseProxies(%q) = %q, %v; want %q", tc.in, got.String(), err, tc.want)
			}
		})
	}
}

// TestClient pins which address a request is taken to come from: the
// peer's unless the peer is trusted, and then the right-most untrusted
// X-Forwarded-For entry, so that a client cannot choose its address by
// writing the header itself.
func TestClient(t *testing.T) {
	trusted, err := ParseProxies("10.0.0.0/8, 192.0.2.1, fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	// The same proxies written as IPv4-mapped prefixes trust the same
	// IPv4 peers, mapped or not.
	mapped, err := ParseProxies("::ffff:10.0.0.0/104, ::ffff:c000:201/128")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		proxies   Proxies
		peer      string
		xff       []string // one header line each
		realIP    string
		fwd       []string // Forwarded, one header line each
		want      string
		forwarded bool
	}{
		{name: "no proxies: headers ignored", peer: "203.0.113.5:4000", xff: []string{"198.51.100.1"}, realIP: "198.51.100.2", want: "203.0.113.5"},
		{name: "no proxies: trusted-looking peer still itself", peer: "10.0.0.1:4000", xff: []string{"198.51.100.1"}, want: "10.0.0.1"},
		{name: "untrusted peer: headers ignored", proxies: trusted, peer: "203.0.113.5:4000", xff: []string{"198.51.100.1"}, want: "203.0.113.5"},
		{name: "trusted peer without headers", proxies: trusted, peer: "10.0.0.1:4000", want: "10.0.0.1"},
		{name: "one proxy", proxies: trusted, peer: "10.0.0.1:4000", xff: []string{"198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "client's own entries left of the real one", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"1.1.1.1, 2.2.2.2, 198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "client claims a trusted address", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"10.9.9.9, 198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "two trusted hops", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"6.6.6.6, 198.51.100.1, 192.0.2.1, 10.2.3.4"}, want: "198.51.100.1", forwarded: true},
		{name: "header split over lines", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"6.6.6.6, 198.51.100.1", "192.0.2.1"}, want: "198.51.100.1", forwarded: true},
		{name: "every hop trusted: the left-most", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"10.3.3.3, 192.0.2.1"}, want: "10.3.3.3", forwarded: true},
		{name: "entries with ports and brackets", proxies: trusted, peer: "[fd00::1]:4000",
			xff: []string{"[2001:db8::7]:5555, 10.1.1.1:80"}, want: "2001:db8::7", forwarded: true},
		{name: "IPv4-mapped peer and entry", proxies: trusted, peer: "[::ffff:10.0.0.1]:4000",
			xff: []string{"::ffff:198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "IPv4 peer, IPv4-mapped prefixes", proxies: mapped, peer: "10.0.0.1:4000",
			xff: []string{"198.51.100.1, 192.0.2.1"}, want: "198.51.100.1", forwarded: true},
		{name: "IPv4-mapped peer, IPv4-mapped prefixes", proxies: mapped, peer: "[::ffff:10.0.0.1]:4000",
			xff: []string{"198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "untrusted peer, IPv4-mapped prefixes", proxies: mapped, peer: "11.0.0.1:4000",
			xff: []string{"198.51.100.1"}, want: "11.0.0.1"},
		{name: "garbage from a trusted hop stops at that hop", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"198.51.100.1, unknown, 192.0.2.1"}, want: "192.0.2.1", forwarded: true},
		{name: "empty entries skipped", proxies: trusted, peer: "10.0.0.1:4000", xff: []string{"198.51.100.1, , "}, want: "198.51.100.1", forwarded: true},
		{name: "X-Real-IP without X-Forwarded-For", proxies: trusted, peer: "10.0.0.1:4000", realIP: "198.51.100.9", want: "198.51.100.9", forwarded: true},
		{name: "X-Forwarded-For wins over X-Real-IP", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"198.51.100.1"}, realIP: "198.51.100.9", want: "198.51.100.1", forwarded: true},
		{name: "bad X-Real-IP: the peer", proxies: trusted, peer: "10.0.0.1:4000", realIP: "somewhere", want: "10.0.0.1"},
		{name: "X-Real-IP from an untrusted peer ignored", proxies: trusted, peer: "203.0.113.5:4000", realIP: "198.51.100.9", want: "203.0.113.5"},

		// Forwarded (RFC 7239), read when a trusted peer sent neither
		// X-Forwarded-For nor X-Real-IP.
		{name: "Forwarded: one proxy", proxies: trusted, peer: "10.0.0.1:4000", fwd: []string{"for=198.51.100.1;proto=https"},
			want: "198.51.100.1", forwarded: true},
		{name: "Forwarded from an untrusted peer ignored", proxies: trusted, peer: "203.0.113.5:4000", fwd: []string{"for=198.51.100.1"},
			want: "203.0.113.5"},
		{name: "Forwarded without proxies ignored", peer: "10.0.0.1:4000", fwd: []string{"for=198.51.100.1"}, want: "10.0.0.1"},
		{name: "Forwarded: client's own elements left of the real one", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=1.1.1.1, for=10.9.9.9, for=198.51.100.1"}, want: "198.51.100.1", forwarded: true},
		{name: "Forwarded: two trusted hops", proxies: trusted, peer: "10.0.0.1:4000",
			fwd:  []string{`for=6.6.6.6, for=198.51.100.1;by=192.0.2.1, for=192.0.2.1;by=10.0.0.1, for="10.2.3.4:80"`},
			want: "198.51.100.1", forwarded: true},
		{name: "Forwarded: elements across repeated headers", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=6.6.6.6, for=198.51.100.1", "for=192.0.2.1"}, want: "198.51.100.1", forwarded: true},
		{name: "Forwarded: quoted IPv6 with a port", proxies: trusted, peer: "[fd00::1]:4000",
			fwd: []string{`for="[2001:db8::1]:4711"`}, want: "2001:db8::1", forwarded: true},
		{name: "Forwarded: quoted IPv6 without a port", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for="[2001:db8::1]"`}, want: "2001:db8::1", forwarded: true},
		{name: "Forwarded: IPv6 with an obfuscated port", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for="[2001:db8::1]:_p0rt"`}, want: "2001:db8::1", forwarded: true},
		{name: "Forwarded: IPv4 with a port", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for="198.51.100.1:8080"`}, want: "198.51.100.1", forwarded: true},
		{name: "Forwarded: parameter names in any case", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"Proto=https;FOR=198.51.100.1;By=10.0.0.1"}, want: "198.51.100.1", forwarded: true},
		{name: "Forwarded: quoted commas and semicolons stay in their value", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for=6.6.6.6;ext="a, for=1.2.3.4; b", for=198.51.100.1`}, want: "198.51.100.1", forwarded: true},
		{name: "Forwarded: an escaped quote stays in its value", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for=198.51.100.1;ext="x\", for=6.6.6.6"`}, want: "198.51.100.1", forwarded: true},
		{name: "Forwarded: unknown stops the walk at the hop that wrote it", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=198.51.100.1, for=unknown, for=192.0.2.1"}, want: "192.0.2.1", forwarded: true},
		{name: "Forwarded: UNKNOWN in capitals too", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=198.51.100.1, for=UNKNOWN"}, want: "10.0.0.1", forwarded: true},
		{name: "Forwarded: an obfuscated identifier stops the walk", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=198.51.100.1, for=_hidden, for=192.0.2.1"}, want: "192.0.2.1", forwarded: true},
		{name: "Forwarded: an obfuscated nearest hop leaves the peer", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for=198.51.100.1, for="_SEVKISEK"`}, want: "10.0.0.1", forwarded: true},
		{name: "Forwarded: an element without for stops the walk", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=198.51.100.1, proto=https"}, want: "10.0.0.1", forwarded: true},
		{name: "Forwarded: a repeated for makes the element unusable", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=6.6.6.6;for=198.51.100.1"}, want: "10.0.0.1", forwarded: true},
		{name: "Forwarded: an unterminated quote stops the walk", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for=198.51.100.1, for="192.0.2.1`}, want: "10.0.0.1", forwarded: true},
		{name: "Forwarded: a bad port stops the walk", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for=198.51.100.1, for="192.0.2.1:99999"`}, want: "10.0.0.1", forwarded: true},
		{name: "Forwarded: a host name stops the walk", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=198.51.100.1, for=proxy.internal"}, want: "10.0.0.1", forwarded: true},
		{name: "Forwarded: empty elements skipped", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=198.51.100.1, , ", ""}, want: "198.51.100.1", forwarded: true},
		{name: "Forwarded: an element of empty pairs says nothing of its client", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=198.51.100.1, ;"}, want: "10.0.0.1", forwarded: true},
		{name: "Forwarded: every hop trusted, the left-most", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{"for=10.3.3.3, for=192.0.2.1"}, want: "10.3.3.3", forwarded: true},
		{name: "Forwarded: IPv4-mapped", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for="[::ffff:198.51.100.1]"`}, want: "198.51.100.1", forwarded: true},
		{name: "Forwarded: zone dropped", proxies: trusted, peer: "10.0.0.1:4000",
			fwd: []string{`for="[fe80::1%eth0]:80"`}, want: "fe80::1", forwarded: true},

		// Precedence: X-Forwarded-For, then X-Real-IP, then Forwarded.
		{name: "X-Forwarded-For wins over Forwarded", proxies: trusted, peer: "10.0.0.1:4000",
			xff: []string{"198.51.100.1"}, fwd: []string{"for=6.6.6.6"}, want: "198.51.100.1", forwarded: true},
		{name: "X-Real-IP wins over Forwarded", proxies: trusted, peer: "10.0.0.1:4000",
			realIP: "198.51.100.9", fwd: []string{"for=6.6.6.6"}, want: "198.51.100.9", forwarded: true},
		{name: "bad X-Real-IP: the peer, not Forwarded", proxies: trusted, peer: "10.0.0.1:4000",
			realIP: "somewhere", fwd: []string{"for=6.6.6.6"}, want: "10.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The keys as net/http canonicalises them (X-Real-IP is
			// X-Real-Ip), as Client is given them.
			h := map[string][]string{}
			if tc.xff != nil {
				h["X-Forwarded-For"] = tc.xff
			}
			if tc.realIP != "" {
				h["X-Real-Ip"] = []string{tc.realIP}
			}
			if tc.fwd != nil {
				h["Forwarded"] = tc.fwd
			}
			got, forwarded := tc.proxies.Client(tc.peer, h)
			if got != tc.want || forwarded != tc.forwarded {
				t.Errorf("Client = %q (forwarded %v), want %q (forwarded %v)", got, forwarded, tc.want, tc.forwarded)
			}
		})
	}
}
