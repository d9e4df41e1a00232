package gost

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Oracle tests against OpenSSL with the GOST engine (Debian package
// libengine-gost-openssl). They skip loudly when the engine is missing; CI
// installs it. The golden files in testdata were made the same way:
//
//	openssl genpkey -engine gost -algorithm gost2012_256 -pkeyopt paramset:A -out k.pem
//	openssl req -engine gost -new -x509 -key k.pem -subj "/CN=openssl-256/O=Test Bank" -days 3650 -md_gost12_256 -out c.pem
//	openssl cms -engine gost -sign -binary -nosmimecap -in digest.txt -signer c.pem -inkey k.pem -outform DER -out openssl-256-cpA.p7s -md md_gost12_256
//	openssl cms -engine gost -sign -binary -nosmimecap -nocerts -in digest.txt -signer c.pem -inkey k.pem -outform DER -out openssl-256-cpA-nocerts.p7s -md md_gost12_256
//	openssl cms -engine gost -sign -binary -nosmimecap -nocerts -keyid -in digest.txt -signer c.pem -inkey k.pem -outform DER -out openssl-256-cpA-nocerts-keyid.p7s -md md_gost12_256

var (
	engineOnce sync.Once
	engineErr  error
)

func requireGOSTEngine(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping OpenSSL oracle test")
	}
	engineOnce.Do(func() {
		if _, err := exec.LookPath("openssl"); err != nil {
			engineErr = err
			return
		}
		out, err := exec.Command("openssl", "engine", "gost").CombinedOutput()
		if err != nil {
			engineErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if engineErr != nil {
		t.Skipf("SKIPPING OPENSSL ORACLE TEST: the OpenSSL GOST engine is not available (%v); "+
			"install it with: apt-get install -y libengine-gost-openssl openssl", engineErr)
	}
}

// openssl runs one openssl command in dir and returns stdout; a non-zero
// exit is an error carrying stderr.
func openssl(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "openssl", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("openssl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

func mustOpenSSL(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := openssl(t, dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestOpenSSLStreebog(t *testing.T) {
	requireGOSTEngine(t)
	dir := t.TempDir()
	big := make([]byte, 1<<20+17)
	for i := range big {
		big[i] = byte(i*31 + i>>8)
	}
	inputs := map[string][]byte{"empty": nil, "m2": mustHex(t, m2Hex), "big": big, "block": bytes.Repeat([]byte{0xff}, 64)}
	for name, data := range inputs {
		writeFile(t, dir, name, data)
		for _, md := range []string{"md_gost12_256", "md_gost12_512"} {
			out := mustOpenSSL(t, dir, "dgst", "-engine", "gost", "-"+md, "-r", name)
			want := strings.Fields(out)[0]
			var got []byte
			if md == "md_gost12_256" {
				s := Streebog256(data)
				got = s[:]
			} else {
				s := Streebog512(data)
				got = s[:]
			}
			if hex.EncodeToString(got) != want {
				t.Errorf("%s %s: ours %x, openssl %s", name, md, got, want)
			}
		}
	}
}

// opensslParamsets maps OpenSSL's paramset names to ours.
var opensslParamsets = []struct {
	alg, paramset string
	params        *Params
}{
	{"gost2012_256", "A", CryptoProA},
	{"gost2012_256", "B", CryptoProB},
	{"gost2012_256", "C", CryptoProC},
	{"gost2012_256", "XA", CryptoProXchA},
	{"gost2012_256", "XB", CryptoProXchB},
	{"gost2012_256", "TCA", TC26256A},
	{"gost2012_256", "TCB", TC26256B},
	{"gost2012_256", "TCC", TC26256C},
	{"gost2012_256", "TCD", TC26256D},
	{"gost2012_512", "A", TC26512A},
	{"gost2012_512", "B", TC26512B},
	{"gost2012_512", "C", TC26512C},
}

func mdFor(p *Params) string {
	if p.Size() == 64 {
		return "md_gost12_512"
	}
	return "md_gost12_256"
}

// TestOpenSSLSignsWeVerify: keys, certificates, raw signatures and CMS
// made by OpenSSL on every parameter set are accepted here.
func TestOpenSSLSignsWeVerify(t *testing.T) {
	requireGOSTEngine(t)
	content := []byte("amount=100.00\ndate=2026-01-15\npayeeName=ООО \"Ромашка\"")
	for _, ps := range opensslParamsets {
		t.Run(ps.alg+"-"+ps.paramset, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "digest.txt", content)
			md := mdFor(ps.params)
			mustOpenSSL(t, dir, "genpkey", "-engine", "gost", "-algorithm", ps.alg, "-pkeyopt", "paramset:"+ps.paramset, "-out", "k.pem")
			mustOpenSSL(t, dir, "req", "-engine", "gost", "-new", "-x509", "-key", "k.pem", "-subj", "/CN=oracle",
				"-days", "30", "-"+md, "-out", "c.pem")
			mustOpenSSL(t, dir, "cms", "-engine", "gost", "-sign", "-binary", "-nosmimecap", "-in", "digest.txt",
				"-signer", "c.pem", "-inkey", "k.pem", "-outform", "DER", "-out", "attrs.p7s", "-md", md)
			mustOpenSSL(t, dir, "cms", "-engine", "gost", "-sign", "-binary", "-noattr", "-keyid", "-in", "digest.txt",
				"-signer", "c.pem", "-inkey", "k.pem", "-outform", "DER", "-out", "keyid.p7s", "-md", md)
			mustOpenSSL(t, dir, "dgst", "-engine", "gost", "-"+md, "-sign", "k.pem", "-out", "raw.sig", "digest.txt")

			key, err := ParsePrivateKey(readFile(t, dir, "k.pem"))
			if err != nil {
				t.Fatal(err)
			}
			cert, err := ParseCertificate(readFile(t, dir, "c.pem"))
			if err != nil {
				t.Fatal(err)
			}
			if cert.PublicKey.Params != ps.params || key.Params != ps.params || !cert.PublicKey.Equal(key.Public()) {
				t.Fatalf("key %s / cert %s, want %s", key.Params.Name, cert.PublicKey.Params.Name, ps.params.Name)
			}
			if err := cert.CheckSignatureFrom(cert); err != nil {
				t.Fatalf("certificate self-signature: %v", err)
			}
			h := newHashFor(ps.params)
			h.Write(content)
			if err := Verify(cert.PublicKey, h.Sum(nil), readFile(t, dir, "raw.sig")); err != nil {
				t.Fatalf("openssl dgst -sign: %v", err)
			}
			for _, name := range []string{"attrs.p7s", "keyid.p7s"} {
				p7s := readFile(t, dir, name)
				if err := VerifyDetached(p7s, content, nil); err != nil {
					t.Fatalf("%s with embedded certificate: %v", name, err)
				}
				if err := VerifyDetached(p7s, content, cert); err != nil {
					t.Fatalf("%s with given certificate: %v", name, err)
				}
				if err := VerifyDetached(p7s, append(bytes.Clone(content), '\n'), cert); err == nil {
					t.Fatalf("%s verified over different content", name)
				}
			}
		})
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenSSLVerifiesOurs: our keys, certificates, raw signatures and CMS
// are accepted by OpenSSL.
func TestOpenSSLVerifiesOurs(t *testing.T) {
	requireGOSTEngine(t)
	content := []byte("businessCardId=42\ncode=X\nexternalId=e1\nlimit=1000.00")
	tests := []struct {
		name   string
		params *Params
		opt    SignOptions
	}{
		{"256A-attrs", TC26256A, SignOptions{}},
		{"cpA-noattr", CryptoProA, SignOptions{NoSignedAttributes: true}},
		{"256D-keyid", TC26256D, SignOptions{BySubjectKeyID: true}},
		{"512A-attrs", TC26512A, SignOptions{}},
		{"512C-keyid-noattr", TC26512C, SignOptions{BySubjectKeyID: true, NoSignedAttributes: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			key, err := GenerateKey(tc.params, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			cert, err := SelfSignedCertificate(key, "ours", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			keyPEM, err := MarshalPrivateKeyPEM(key)
			if err != nil {
				t.Fatal(err)
			}
			p7s, err := SignDetachedWithOptions(content, cert, key, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			h := newHashFor(tc.params)
			h.Write(content)
			raw, err := Sign(key, h.Sum(nil), rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "digest.txt", content)
			writeFile(t, dir, "c.pem", cert.PEM())
			writeFile(t, dir, "k.pem", keyPEM)
			writeFile(t, dir, "pub.pem", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: MarshalPublicKey(key.Public())}))
			writeFile(t, dir, "d.p7s", p7s)
			writeFile(t, dir, "raw.sig", raw)

			verify := []string{"cms", "-engine", "gost", "-verify", "-binary", "-inform", "DER", "-in", "d.p7s",
				"-content", "digest.txt", "-CAfile", "c.pem", "-purpose", "any", "-out", os.DevNull}
			mustOpenSSL(t, dir, verify...)
			mustOpenSSL(t, dir, "verify", "-engine", "gost", "-CAfile", "c.pem", "c.pem")
			mustOpenSSL(t, dir, "dgst", "-engine", "gost", "-"+mdFor(tc.params), "-verify", "pub.pem", "-signature", "raw.sig", "digest.txt")
			text := mustOpenSSL(t, dir, "pkey", "-engine", "gost", "-in", "k.pem", "-text", "-noout")
			wantD := strings.ToUpper(key.D.Text(16))
			if !strings.Contains(strings.ReplaceAll(text, ":", ""), wantD) {
				t.Fatalf("openssl reads a different private key:\n%s\nwant %s", text, wantD)
			}
			// Negative control: OpenSSL must reject changed content.
			writeFile(t, dir, "digest.txt", append(bytes.Clone(content), 'x'))
			if _, err := openssl(t, dir, verify...); err == nil {
				t.Fatal("openssl verified our signature over changed content")
			}
		})
	}
}
