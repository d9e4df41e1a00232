package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/testenv"
)

// A listener serves the certificate its files hold now: a renewed
// certificate from the next handshake, the previous one while the files
// do not load (with one warning), and a rotated client CA bundle's
// clients only.
func TestTLSReloadsChangedFiles(t *testing.T) {
	defer func(d time.Duration) { tlsReloadCheck = d }(tlsReloadCheck)
	tlsReloadCheck = 10 * time.Millisecond
	dir := t.TempDir()
	caPath, _, ca1, ca1Key := writeCert(t, dir, "ca", nil, nil)
	_, _, ca2, ca2Key := writeCert(t, dir, "ca2", nil, nil)
	srvCert, srvKey, first, _ := writeCert(t, dir, "server", ca1, ca1Key)
	cli1Cert, cli1Key, _, _ := writeCert(t, dir, "client1", ca1, ca1Key)
	cli2Cert, cli2Key, _, _ := writeCert(t, dir, "client2", ca2, ca2Key)
	logs := &testenv.LogBuffer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	l, err := Listen("banking", "127.0.0.1:0", h, TLSFiles{Cert: srvCert, Key: srvKey, ClientCA: caPath}, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	go l.Serve()
	defer l.Shutdown(context.Background())
	roots := x509.NewCertPool()
	roots.AddCert(ca1)
	roots.AddCert(ca2)
	client := func(cert, key string) *tls.Config {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}
	}
	// served is the serial of the certificate a new connection is shown.
	served := func() string {
		t.Helper()
		conn, err := tls.Dial("tcp", l.Addr().String(), client(cli1Cert, cli1Key))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	// get is one request on a new connection, to see whether the server
	// took the client's certificate: a client sends only a certificate of
	// a CA the server names, and without one it gets the 400 page.
	get := func(cfg *tls.Config) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
		resp, err := c.Get("https://" + l.Addr().String() + "/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	// touched makes sure the files' times moved, whatever the file
	// system's time resolution, and waits past the check interval.
	touched := func(paths ...string) {
		later := time.Now().Add(time.Second)
		for _, p := range paths {
			os.Chtimes(p, later, later)
		}
		time.Sleep(3 * tlsReloadCheck)
	}
	if got := served(); got != first.SerialNumber.String() {
		t.Fatalf("served %s, want %s", got, first.SerialNumber)
	}
	_, _, renewed, _ := writeCert(t, dir, "server", ca1, ca1Key)
	touched(srvCert, srvKey)
	served() // the handshake that looks at the files
	if got := served(); got != renewed.SerialNumber.String() {
		t.Fatalf("after renewal served %s, want %s", got, renewed.SerialNumber)
	}
	if err := os.WriteFile(srvKey, []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	touched(srvKey)
	for range 3 {
		if got := served(); got != renewed.SerialNumber.String() {
			t.Fatalf("with a broken key file served %s, want the previous %s", got, renewed.SerialNumber)
		}
		time.Sleep(3 * tlsReloadCheck)
	}
	if n := strings.Count(logs.String(), "do not load"); n != 1 {
		t.Fatalf("%d warnings about the broken files, want 1:\n%s", n, logs.String())
	}
	// The CA bundle rotated: clients of the new CA only.
	_, _, third, _ := writeCert(t, dir, "server", ca1, ca1Key)
	raw, _ := os.ReadFile(dir + "/ca2.crt")
	if err := os.WriteFile(caPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	touched(srvCert, srvKey, caPath)
	get(client(cli2Cert, cli2Key))
	if err := get(client(cli2Cert, cli2Key)); err != nil {
		t.Fatalf("a client of the new CA: %v", err)
	}
	if err := get(client(cli1Cert, cli1Key)); err == nil {
		t.Fatal("a client of the old CA was served after the bundle rotated")
	}
	if got := served(); got != third.SerialNumber.String() {
		t.Fatalf("served %s, want %s", got, third.SerialNumber)
	}
	if !strings.Contains(logs.String(), "certificate files reloaded") {
		t.Errorf("no line says the files were reloaded:\n%s", logs.String())
	}
}
