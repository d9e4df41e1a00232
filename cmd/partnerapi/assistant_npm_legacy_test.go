package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// legacyResult is what clients/npm/legacy.js prints: the password flow's
// chat, and the flow with a wrong password.
type legacyResult struct {
	Good struct {
		Model, Finish, Content string
		ExpiresAt              int64
		TokenLength            int
		Error                  *npmFailure
	}
	Wrong struct{ Error *npmFailure }
}

// npmFailure is how the npm client reported a failed call.
type npmFailure struct {
	Name, Code, Message string
	Status              int
	Body                json.RawMessage
}

// runLegacyScript runs legacy.js against the API at base (…/api/v1) as
// user with password, with env added to an environment that trusts no
// extra CA and checks certificates.
func runLegacyScript(t *testing.T, node, pkg, base, user, password string, env ...string) legacyResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(pkg, "legacy.js"))
	for _, kv := range os.Environ() {
		// The test decides what the client trusts; a runner's own
		// settings must not decide it for it.
		if !strings.HasPrefix(kv, "NODE_EXTRA_CA_CERTS=") && !strings.HasPrefix(kv, "NODE_TLS_REJECT_UNAUTHORIZED=") &&
			!strings.HasPrefix(kv, "GIGACHAT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{"LEGACY_BASE_URL=" + base, "LEGACY_USER=" + user,
		"LEGACY_PASSWORD=" + password, "LEGACY_MODEL=stories260K"}, env...)...)
	out, err := cmd.CombinedOutput()
	var res legacyResult
	npmResult(t, out, err, &res)
	return res
}

// checkLegacyChat asserts that the password flow got a token, read its
// expiry as 30 minutes ahead in milliseconds, and chatted with it.
func checkLegacyChat(t *testing.T, res legacyResult) {
	t.Helper()
	g := res.Good
	if g.Error != nil {
		t.Fatalf("the password flow failed: %+v", *g.Error)
	}
	if !strings.HasPrefix(g.Model, "stories260K:") || g.Finish != "length" || g.Content == "" {
		t.Errorf("chat after the password flow: %+v", g)
	}
	if d := time.Until(time.UnixMilli(g.ExpiresAt)); d < 29*time.Minute || d > 31*time.Minute {
		t.Errorf("the client read exp %d, %v away; want 30 minutes in Unix milliseconds", g.ExpiresAt, d)
	}
	if g.TokenLength == 0 {
		t.Error("the client kept no token")
	}
}

// TestNpmClientLegacyPassword runs the npm client's legacy password flow,
// unmodified, against a live server: user and password (the client id and
// its secret) get a token at POST /api/v1/token and a chat answer with it;
// a wrong password is the client's AuthenticationError with the API's
// {status: 401, message: Unauthorized}; neither the secret nor the Basic
// value it travels in reaches the server's log.
func TestNpmClientLegacyPassword(t *testing.T) {
	node, pkg := npmClient(t, "the npm gigachat client's legacy password test")
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant", "--log-format", "json")
	res := runLegacyScript(t, node, pkg, ts.urls["assistant"]+"/api/v1", creds["client_id"], creds["client_secret"])
	checkLegacyChat(t, res)
	w := res.Wrong.Error
	if w == nil {
		t.Fatal("a wrong password was accepted")
	}
	var body errorEnvelope
	if w.Name != "AuthenticationError" || w.Status != 401 || json.Unmarshal(w.Body, &body) != nil ||
		body.Status != 401 || body.Message != "Unauthorized" {
		t.Errorf("wrong password: the client reports %+v %s, want AuthenticationError 401 {status 401, Unauthorized}", *w, w.Body)
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, `"path":"/api/v1/token"`) {
		t.Errorf("no access line of /api/v1/token, so the check below is vacuous:\n%s", logs)
	}
	wrongKey := base64.StdEncoding.EncodeToString([]byte(creds["client_id"] + ":" + creds["client_secret"] + "x"))
	for _, secret := range []string{creds["client_secret"], creds["authorization_key"], wrongKey} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds a secret:\n%s", logs)
		}
	}
}

// selfSignedServer writes a self-signed certificate for 127.0.0.1 and
// localhost, made as `openssl req -x509` makes one (its own CA), and its
// key into dir, and returns their paths.
func selfSignedServer(t *testing.T, dir, name string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestNpmClientLegacyTLS runs the password flow over the assistant's HTTPS
// listener (--tls-cert, --tls-key) with a self-signed certificate: the npm
// client gets its token and a chat answer when it trusts the certificate,
// through Node's NODE_EXTRA_CA_CERTS or through its own httpsAgent option,
// and fails the handshake with Node's certificate error when it trusts
// nothing or another self-signed certificate.
func TestNpmClientLegacyTLS(t *testing.T) {
	node, pkg := npmClient(t, "the npm gigachat client's TLS test")
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	certs := t.TempDir()
	cert, key := selfSignedServer(t, certs, "server")
	other, _ := selfSignedServer(t, certs, "other")
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant",
		"--tls-cert", cert, "--tls-key", key)
	base := "https://" + strings.TrimPrefix(ts.urls["assistant"], "http://") + "/api/v1"
	for _, tc := range []struct {
		name    string
		env     []string
		trusted bool
	}{
		{"NODE_EXTRA_CA_CERTS", []string{"NODE_EXTRA_CA_CERTS=" + cert}, true},
		{"httpsAgent ca", []string{"LEGACY_CA_FILE=" + cert}, true},
		{"nothing trusted", nil, false},
		{"another certificate trusted", []string{"NODE_EXTRA_CA_CERTS=" + other}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runLegacyScript(t, node, pkg, base, creds["client_id"], creds["client_secret"], tc.env...)
			if tc.trusted {
				checkLegacyChat(t, res)
				if w := res.Wrong.Error; w == nil || w.Status != 401 {
					t.Errorf("wrong password over HTTPS: %+v", w)
				}
				return
			}
			for step, e := range map[string]*npmFailure{"password flow": res.Good.Error, "wrong password": res.Wrong.Error} {
				// The client passes axios's error on: Node's code for a
				// self-signed server certificate it does not trust, and no
				// HTTP answer.
				if e == nil || e.Name != "AxiosError" || e.Code != "DEPTH_ZERO_SELF_SIGNED_CERT" || e.Status != 0 {
					t.Errorf("%s with the certificate untrusted: %+v, want AxiosError DEPTH_ZERO_SELF_SIGNED_CERT before any answer", step, e)
				}
			}
		})
	}
}
