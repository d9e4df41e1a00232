package upstream

import (
	"strings"
	"testing"
)

// FuzzUpstreamFlag holds the flag's parser to what route relies on: it
// never panics, every name it accepts is one a model id can be made of
// (no ':' or '/') and has one or more replicas, each a
// URL without its options and at a host and path of its own.
//
// It lives here, beside the parser, rather than in cmd/partnerapi, where
// the flag is declared: a fuzz binary instruments every package it links,
// and the server's (the SQLite and PostgreSQL drivers, the inference
// engine) held the target at a few hundred executions a second. Each value
// is at most 128 bytes: Set splits a value into one replica per word, so
// a longer one is only more of the same words.
func FuzzUpstreamFlag(f *testing.F) {
	f.Add("m=http://a:1#model=x", "m=http://b:1#model=x")
	f.Add("m=http://a:1", "m=http://a:1")
	f.Add("e=http://u:p@h/v1/#type=embedder", "e=https://h/v1")
	f.Add("m=http://a:1#model=x&type=chat", "m=http://a:1#model=%zz")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 128 || len(b) > 128 {
			return
		}
		var fl Routes
		errA := fl.Set(a)
		errB := fl.Set(b)
		if errA == nil && a == b && errB == nil {
			t.Fatalf("%q given twice was accepted twice", a)
		}
		for name, r := range fl {
			if name == "" || strings.ContainsAny(name, ":/") || len(r.Bases) == 0 {
				t.Fatalf("route %q: %+v", name, r)
			}
			hosts := map[string]bool{}
			for _, base := range r.Bases {
				if strings.Contains(base, "#") || hosts[Host(base)] {
					t.Fatalf("route %q: bases %v", name, r.Bases)
				}
				hosts[Host(base)] = true
			}
		}
		_ = fl.String()
	})
}
