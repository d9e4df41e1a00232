package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
)

// With --tls-client-ca, serve's banking listener answers a partner's call
// without a client certificate as the provider does (400 No required SSL
// certificate was sent), while the login form a person's browser opens
// and the health check need none.
func TestServeBankingClientCertificates(t *testing.T) {
	files, pool := selfSigned(t)
	ts := startServer(t, "--only", "banking", "--tls-cert", files.Cert, "--tls-key", files.Key, "--tls-client-ca", files.Cert)
	base := strings.Replace(ts.urls["banking"], "http://", "https://", 1)
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, tc := range []struct {
		method, path string
		page         bool // the 400 page of a call without a certificate
	}{
		{"GET", "/fintech/api/v1/payments/0b8a8f3a-7a0c-4d0a-9a57-6f4d3c2b1a00", true},
		{"POST", "/ic/sso/api/v2/oauth/token", true},
		{"GET", "/ic/sso/api/v2/oauth/authorize?response_type=code&client_id=x&redirect_uri=https://example.com/cb&scope=openid", false},
		{"GET", "/ic/sbbid/api/v2/oauth/authorize?response_type=code&client_id=x&redirect_uri=https://example.com/cb&scope=openid", false},
		{"GET", "/healthz", false},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		resp, err := anon.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page := resp.StatusCode == 400 && strings.Contains(string(body), "<center>No required SSL certificate was sent</center>")
		if page != tc.page {
			t.Errorf("%s %s without a certificate: %d %q", tc.method, tc.path, resp.StatusCode, body)
		}
	}
}
