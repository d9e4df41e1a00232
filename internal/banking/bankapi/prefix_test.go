package bankapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPrefixed(t *testing.T) {
	spec := []byte("paths:\n  /fintech/api/v1/payments:\n  /ic/sso/api/v2/oauth/token:\n")
	if prepare, served := Prefixed(DefaultPrefix, spec); prepare != nil || string(served) != string(spec) {
		t.Fatalf("the default prefix changes something: %v %q", prepare != nil, served)
	}
	prepare, served := Prefixed("/bank/fintech/api", spec)
	if want := "paths:\n  /bank/fintech/api/v1/payments:\n  /ic/sso/api/v2/oauth/token:\n"; string(served) != want {
		t.Errorf("served contract %q, want %q", served, want)
	}
	for _, tc := range []struct{ target, path, raw string }{
		{"/bank/fintech/api/v1/payments", "/fintech/api/v1/payments", ""},
		{"/bank/fintech/api/v1/payments/a%2Fb/state", "/fintech/api/v1/payments/a/b/state", "/fintech/api/v1/payments/a%2Fb/state"},
		{"/fintech/api/v1/payments", "/fintech/api/v1/payments", ""},
		{"/bank/fintech/apiv1/payments", "/bank/fintech/apiv1/payments", ""},
		{"/ic/sso/api/v2/oauth/token", "/ic/sso/api/v2/oauth/token", ""},
	} {
		r := httptest.NewRequest("GET", tc.target, nil)
		prepare(r)
		if r.URL.Path != tc.path || r.URL.RawPath != tc.raw {
			t.Errorf("%s → %q (raw %q), want %q (raw %q)", tc.target, r.URL.Path, r.URL.RawPath, tc.path, tc.raw)
		}
	}
	for _, bad := range []string{"bank", "/bank/", "/bank//api", "/bank/../api", "/ic/bank", "/bank?x", "/a b"} {
		if err := CheckPrefix(bad); err == nil || !strings.Contains(err.Error(), "--banking-prefix") {
			t.Errorf("CheckPrefix(%q) = %v", bad, err)
		}
	}
	if prepare, served := Prefixed("", spec); prepare != nil || string(served) != string(spec) {
		t.Errorf("no prefix changes something")
	}
	for _, good := range []string{DefaultPrefix, "", "/bank/fintech/api", "/api"} {
		if err := CheckPrefix(good); err != nil {
			t.Errorf("CheckPrefix(%q) = %v", good, err)
		}
	}
}
