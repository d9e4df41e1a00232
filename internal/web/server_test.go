package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestShutdownLetsInFlightRequestsFinish starts a slow request, begins a
// graceful shutdown while it runs, and expects the request to complete.
func TestShutdownLetsInFlightRequestsFinish(t *testing.T) {
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "finished")
	})
	l, err := Listen("test", "127.0.0.1:0", h, TLSFiles{}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	go l.Serve()
	type result struct {
		body string
		err  error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + l.Addr().String() + "/")
		if err != nil {
			res <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		res <- result{string(b), err}
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	r := <-res
	if r.err != nil || r.body != "finished" {
		t.Fatalf("in-flight request got %q, %v", r.body, r.err)
	}
	if _, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
		t.Error("listener still accepts after shutdown")
	}
}

// writeCert writes a self-signed ECDSA certificate and key for 127.0.0.1.
func writeCert(t *testing.T, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (string, string, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		IsCA:        ca == nil, BasicConstraintsValid: true,
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca, caKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, _ := x509.MarshalECPrivateKey(key)
	cp, kp := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	os.WriteFile(cp, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(kp, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cp, kp, cert, key
}

// serveWithClientCA serves h over TLS on a loopback port until the test
// ends, with the server certificate srvCert and key srvKey (signed by ca),
// and ca, in caPath, as --tls-client-ca; /login is its browser path. It
// returns the server's base URL (no trailing slash) and a pool that trusts
// ca, for the clients.
func serveWithClientCA(t *testing.T, h http.Handler, srvCert, srvKey, caPath string, ca *x509.Certificate) (base string, pool *x509.CertPool) {
	t.Helper()
	l, err := Listen("banking", "127.0.0.1:0", h, TLSFiles{Cert: srvCert, Key: srvKey, ClientCA: caPath, BrowserPaths: []string{"/login"}}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	go l.Serve()
	t.Cleanup(func() { l.Shutdown(context.Background()) })
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	return "https://" + l.Addr().String(), pool
}

// TestTLSWithClientCertificates checks that --tls-client-ca makes the
// listener refuse clients without a certificate signed by that CA: a
// certificate of another CA in the handshake, no certificate with the
// provider's nginx page (400 No required SSL certificate was sent), except
// on the browser paths and the health check.
func TestTLSWithClientCertificates(t *testing.T) {
	dir := t.TempDir()
	caPath, _, ca, caKey := writeCert(t, dir, "ca", nil, nil)
	_, _, other, otherKey := writeCert(t, dir, "other", nil, nil)
	srvCert, srvKey, _, _ := writeCert(t, dir, "server", ca, caKey)
	cliCert, cliKey, _, _ := writeCert(t, dir, "client", ca, caKey)
	strangerCert, strangerKey, _, _ := writeCert(t, dir, "stranger", other, otherKey)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	base, pool := serveWithClientCA(t, h, srvCert, srvKey, caPath, ca)
	url := base + "/"
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := anon.Get(url + "fintech/api/v1/payments")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || string(page) != noClientCertPage || resp.Header.Get("Content-Type") != "text/html" {
		t.Fatalf("a client without a certificate: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	for _, open := range []string{"login", "healthz"} {
		resp, err := anon.Get(url + open)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "hello" {
			t.Errorf("/%s without a certificate: %d %q", open, resp.StatusCode, b)
		}
	}
	stranger, err := tls.LoadX509KeyPair(strangerCert, strangerKey)
	if err != nil {
		t.Fatal(err)
	}
	// A client whose certificate the server's CA list does not name
	// sends none (crypto/tls): it is a client without one.
	strange := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{stranger}}}}
	if resp, err := strange.Get(url + "fintech/api/v1/payments"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("a client with another CA's certificate: %d", resp.StatusCode)
		}
	}
	// One that sends it anyway fails the handshake.
	forced := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &stranger, nil }}}}
	if resp, err := forced.Get(url + "login"); err == nil {
		resp.Body.Close()
		t.Fatal("a client sending another CA's certificate was served")
	}
	pair, err := tls.LoadX509KeyPair(cliCert, cliKey)
	if err != nil {
		t.Fatal(err)
	}
	authed := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}}
	resp, err = authed.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" {
		t.Fatalf("got %q", b)
	}
	if _, err := Listen("banking", "127.0.0.1:0", h, TLSFiles{Cert: srvCert}, quietLog()); err == nil {
		t.Error("a certificate without a key was accepted")
	}
}
