package forwarded

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzClientIPForwardedFor feeds the X-Forwarded-For walk arbitrary
// lines behind a trusted peer. The client it answers is the peer or an
// address some entry names, never one no header gave; and an address no
// proxy is trusted with, appended by the nearest proxy as nginx's
// $proxy_add_x_forwarded_for does, is the client whatever the client
// wrote before it.
//
// Each line is at most 128 bytes, some sixteen entries. The walk's
// coverage grows with the number of entries, so every longer line was new
// coverage for the minimizer, which tried its ~n²/2 substrings of
// kilobyte lines while the only worker fuzzed nothing (the run stood
// still for half of its 30 s). Sixteen entries reach every branch that
// a thousand do.
func FuzzClientIPForwardedFor(f *testing.F) {
	for _, s := range []string{"192.0.2.60", "203.0.113.7, 10.1.2.3", "[2001:db8::1]:4711,10.0.0.9", "unknown, 10.0.0.5",
		", ,192.0.2.1:80", "::ffff:10.0.0.1", "fe80::1%eth0", "1.2.3.4\n5.6.7.8"} {
		f.Add(s, "", []byte{198, 51, 100, 7})
	}
	f.Add("10.0.0.2", "192.0.2.5", []byte{192, 0, 2, 9})
	trusted, err := ParseProxies("10.0.0.0/8, fd00::/8")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line1, line2 string, ip []byte) {
		if len(line1) > 128 || len(line2) > 128 || len(ip) > 16 {
			return
		}
		lines := []string{line1}
		if line2 != "" {
			lines = append(lines, line2)
		}
		named := map[netip.Addr]bool{}
		for _, l := range lines {
			for _, e := range strings.Split(l, ",") {
				if a, ok := parseAddr(strings.TrimSpace(e)); ok {
					named[a.Unmap()] = true
				}
			}
		}
		h := map[string][]string{"X-Forwarded-For": lines}
		got, forwarded := trusted.Client("10.0.0.1:4000", h)
		a, err := netip.ParseAddr(got)
		if !forwarded || err != nil || (got != "10.0.0.1" && !named[a]) {
			t.Fatalf("Client with X-Forwarded-For %q = %q (forwarded %v)", lines, got, forwarded)
		}

		want, ok := netip.AddrFromSlice(ip)
		if !ok || trusted.Trusts(want) {
			return
		}
		want = want.Unmap()
		h["X-Forwarded-For"] = append(lines[:len(lines):len(lines)], want.String())
		if got, _ := trusted.Client("10.0.0.1:4000", h); got != want.String() {
			t.Fatalf("X-Forwarded-For %q then %v: client %q", lines, want, got)
		}
	})
}
