package forwarded

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// TestHops pins the parser of one Forwarded line: which elements
// it sees, in order, and which of them name a usable address.
func TestHops(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string // hops joined by spaces, "-" for an unusable one
	}{
		{"", ""},
		{"for=192.0.2.60;proto=http;by=203.0.113.43", "192.0.2.60"},
		{`for=192.0.2.43, for="[2001:db8:cafe::17]"`, "192.0.2.43 2001:db8:cafe::17"},
		{`for="[2001:db8:cafe::17]:4711"`, "2001:db8:cafe::17"},
		{`For="_gazonk"`, "-"},
		{"for=unknown, for=192.0.2.1", "- 192.0.2.1"},
		{`for="192.0.2.1:_port-1"`, "192.0.2.1"},
		{"for=[2001:db8::1]:80", "2001:db8::1"}, // unquoted, though RFC 7239 wants quotes
		{`for="2001:db8::1"`, "2001:db8::1"},    // unbracketed
		{`for="[192.0.2.1]"`, "-"},              // brackets hold IPv6 only
		{`for="2001:db8::1:80"`, "2001:db8::1:80"},
		{"for=192.0.2.1:", "-"},
		{"for=192.0.2.1:65536", "-"},
		{"for=192.0.2.1:_", "-"},
		{`for="[2001:db8::1"`, "-"},
		{`for="[2001:db8::1]x"`, "-"},
		{"for=", "-"},
		{"for", "-"},
		{"=192.0.2.1", "-"},
		{"for=192.0.2.1;FOR=192.0.2.2", "-"},
		{"for=192.0.2.1;proto=http;proto=https", "-"},
		{`for="192.0.2.1"x`, "-"},
		{`for="192.0.2.1`, "-"},
		{`for=192.0.2.1, for="192.0.2.2, for=192.0.2.3`, "192.0.2.1 -"},
		{`for=192.0.2.1;ext="\"", for=192.0.2.2`, "192.0.2.1 192.0.2.2"},
		{`for="\192.0.2.1"`, "192.0.2.1"}, // a quoted-pair stands for its character
		{`for=192.0.2.1;ext="a\`, "-"},
		{"for=192.0.2.1 ; proto=https , for=192.0.2.2", "192.0.2.1 192.0.2.2"},
		{"for=192.0.2.1 2", "-"},
		{"  ,  ,for=192.0.2.1,,", "192.0.2.1"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			var got []string
			for _, h := range appendHops(nil, tc.line) {
				if h.ok {
					got = append(got, h.addr.String())
				} else {
					got = append(got, "-")
				}
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("hops of %q = %q, want %q", tc.line, s, tc.want)
			}
		})
	}
}

// FuzzForwarded feeds the Forwarded parser and the client-address walk
// arbitrary header lines. Neither may panic; every usable hop is a valid
// address without a zone; the walk answers the peer or an address some
// element named; and an element written the way RFC 7239 §6 writes an
// address, appended to any line that leaves no quoted string open, is
// read back as the right-most hop.
func FuzzForwarded(f *testing.F) {
	for _, s := range []string{
		"for=192.0.2.60;proto=http;by=203.0.113.43",
		`for=192.0.2.43, for="[2001:db8:cafe::17]:4711"`,
		"for=unknown, for=_hidden, for=10.0.0.7",
		`for=6.6.6.6;ext="a, for=1.2.3.4; b", for=198.51.100.1`,
		`for="[fe80::1%eth0]:80"`,
		`for="\"`,
		";,;,",
	} {
		f.Add(s, []byte{192, 0, 2, 1}, uint16(4711))
	}
	trusted, err := ParseProxies("10.0.0.0/8, fd00::/8")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string, ip []byte, port uint16) {
		hops := appendHops(nil, line)
		named := map[netip.Addr]bool{}
		for _, h := range hops {
			if h.ok {
				if !h.addr.IsValid() || h.addr.Zone() != "" {
					t.Fatalf("hop %v of %q", h.addr, line)
				}
				named[h.addr.Unmap()] = true
			}
		}
		if len(hops) > strings.Count(line, ",")+1 {
			t.Fatalf("%d hops of %q", len(hops), line)
		}

		got, forwarded := trusted.Client("10.0.0.1:4000", map[string][]string{"Forwarded": {line}})
		a, err := netip.ParseAddr(got)
		if !forwarded || err != nil || (got != "10.0.0.1" && !named[a]) {
			t.Fatalf("Client with Forwarded %q = %q (forwarded %v)", line, got, forwarded)
		}

		want, ok := netip.AddrFromSlice(ip)
		if !ok {
			return
		}
		node := want.String()
		if want.Is6() {
			node = "[" + node + "]"
		}
		if port != 0 {
			node += ":" + strconv.Itoa(int(port))
		}
		if !quotesClosed(line) {
			return
		}
		hops = appendHops(nil, line+`, for="`+node+`"`)
		last := hops[len(hops)-1]
		if !last.ok || last.addr != want {
			t.Fatalf("for=%q after %q read as %v (ok %v)", node, line, last.addr, last.ok)
		}
	})
}

// quotesClosed reports whether s leaves no quoted string open.
func quotesClosed(s string) bool {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		}
	}
	return !quoted
}
