package main

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestServeMetricsTLS pins --metrics-tls. With --tls-cert and the default,
// auto, the --metrics-addr listener serves HTTPS with the API listeners'
// certificate, asking no client certificate even under --tls-client-ca (a
// scraper has none), refuses plain HTTP, and serves a certificate written
// over the files from the next handshakes on, as the API listeners do;
// with off it is plain HTTP whatever --tls-cert says; with no --tls-cert,
// auto is plain HTTP too. (TestServeChecksEnvironmentValues: any other
// value stops serve.)
func TestServeMetricsTLS(t *testing.T) {
	files, pool := selfSigned(t)
	tlsFlags := []string{"--tls-cert", files.Cert, "--tls-key", files.Key, "--tls-client-ca", files.Cert}
	for _, tc := range []struct {
		name  string
		flags []string
		https bool // the metrics listener serves HTTPS, and not plain HTTP
	}{
		{name: "auto under tls-cert", flags: tlsFlags, https: true},
		{name: "off under tls-cert", flags: append([]string{"--metrics-tls", "off"}, tlsFlags...)},
		{name: "auto without tls-cert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, append([]string{"--only", "smarthome", "--metrics-addr", "127.0.0.1:0"}, tc.flags...)...)
			addr := strings.TrimPrefix(ts.urls["metrics"], "http://")
			if want := "msg=listening service=metrics addr=" + addr + " tls=" + fmt.Sprint(tc.https); !strings.Contains(ts.logs.String(), want) {
				t.Errorf("no %q line:\n%s", want, ts.logs.String())
			}
			// No client certificate: the scraper's client trusts the
			// server's certificate and has none of its own.
			scraper := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			scrape := func(scheme string) (int, string, error) {
				resp, err := scraper.Get(scheme + "://" + addr + "/metrics")
				if err != nil {
					return 0, "", err
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(body), nil
			}
			served, refused := "http", "https"
			if tc.https {
				served, refused = refused, served
			}
			if code, body, err := scrape(served); err != nil || code != http.StatusOK || !strings.Contains(body, "partnerapi_build_info") {
				t.Fatalf("%s scrape: %d %v %.200s", served, code, err, body)
			}
			if code, body, err := scrape(refused); err == nil && (code == http.StatusOK || strings.Contains(body, "partnerapi_")) {
				t.Fatalf("%s scrape of a listener that serves %s: %d %.200s", refused, served, code, body)
			}
			if tc.https {
				servesRenewedCertificate(t, addr, files.Cert, files.Key)
			}
		})
	}

}

// servesRenewedCertificate writes a new certificate and key over certFile
// and keyFile and waits until addr's handshakes present it: the metrics
// listener reloads the files as the API listeners do (a check a second at
// most).
func servesRenewedCertificate(t *testing.T, addr, certFile, keyFile string) {
	t.Helper()
	renewed, _ := selfSigned(t)
	for _, f := range [][2]string{{renewed.Key, keyFile}, {renewed.Cert, certFile}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pemBytes, _ := os.ReadFile(renewed.Cert)
	want, _ := pem.Decode(pemBytes)
	if want == nil {
		t.Fatalf("%s holds no PEM block", renewed.Cert)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Only the certificate presented is of interest here, not whom
		// it names.
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			got := conn.ConnectionState().PeerCertificates[0].Raw
			conn.Close()
			if bytes.Equal(got, want.Bytes) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics listener still serves the old certificate 10 s after new files were written (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
