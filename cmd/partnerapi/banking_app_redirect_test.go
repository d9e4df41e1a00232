package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestBankingAppCreateRedirectURIs: `banking app create` registers only
// redirect URIs the authorization endpoint can send a code to (RFC 6749
// §3.1.2): absolute http or https URIs with a host and no fragment. Any
// other is refused naming the flag, before an app is made. Before, every
// string was registered, javascript: and relative URIs included, and
// the login form would send a user's browser with a code to them.
func TestBankingAppCreateRedirectURIs(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		uris string
		ok   bool
	}{
		{"https://partner.example/cb", true},
		{"http://localhost:8080/callback https://partner.example/cb?from=bank", true},
		{"javascript:alert(1)", false},
		{"data:text/html,hi", false},
		{"/cb", false},
		{"partner.example/cb", false},
		{"https://partner.example/cb#done", false},
		{"https:///cb", false},
		{"ftp://partner.example/cb", false},
		{"https://partner.example/cb javascript:alert(1)", false},
	} {
		t.Run(tc.uris, func(t *testing.T) {
			err := runBanking(context.Background(), []string{"app", "create", "--name", "P", "--redirect-uri", tc.uris, "--data-dir", dir},
				func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "--redirect-uri")) {
				t.Fatalf("got %v, want a refusal naming --redirect-uri", err)
			}
		})
	}
}
