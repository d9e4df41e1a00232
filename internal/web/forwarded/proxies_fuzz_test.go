package forwarded

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// FuzzParseTrustedProxies holds --trusted-proxies to a round trip and to
// what its entries say: the list it prints (String) reads back as the same
// list; every entry that parses alone, as an address or prefix, makes the
// whole list trust the address it names (the prefix's own address, IPv4 in
// IPv6 judged as IPv4, zones dropped), and the list trusts an address
// only if some entry alone trusts it.
func FuzzParseTrustedProxies(f *testing.F) {
	for _, s := range []string{"", "10.0.0.0/8", "10.0.0.0/8, fd00::/8", "127.0.0.1", "::1", "::ffff:10.0.0.0/104",
		"fe80::1%eth0", "1.2.3.4/33", "1.2.3.4/32,,", " 192.168.0.1 , 192.168.0.0/16", "::ffff:1.2.3.4", "0.0.0.0/0", "::/0",
		"::ffff:0.0.0.0/90", "1.2.3.4/024", "a", "1.2.3.4/"} {
		f.Add(s, "10.1.2.3")
	}
	f.Fuzz(func(t *testing.T, spec, peer string) {
		tp, err := ParseProxies(spec)
		if err != nil {
			return
		}
		again, err := ParseProxies(tp.String())
		if err != nil || !slices.Equal(again, tp) {
			t.Fatalf("%q: %v prints %q, which reads %v, %v", spec, tp, tp.String(), again, err)
		}
		var alone []Proxies
		for _, e := range strings.Split(spec, ",") {
			one, err := ParseProxies(e)
			if err != nil {
				t.Fatalf("%q reads, its entry %q alone does not: %v", spec, e, err)
			}
			alone = append(alone, one)
			for _, p := range one {
				if a := p.Addr(); !tp.Trusts(a) {
					t.Fatalf("%q: entry %q (%v) is not trusted", spec, e, a)
				}
			}
		}
		a, err := netip.ParseAddr(peer)
		if err != nil {
			return
		}
		any := false
		for _, one := range alone {
			any = any || one.Trusts(a)
		}
		if tp.Trusts(a) != any {
			t.Fatalf("%q trusts %v: %v, its entries alone: %v", spec, a, tp.Trusts(a), any)
		}
	})
}
