package banking

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// opensslOracle is a scratch directory in which the OpenSSL oracle tests
// make keys, certificates and signatures as a partner does, with the
// OpenSSL GOST engine: the tests hold our verification to what OpenSSL
// signs.
type opensslOracle struct {
	t   *testing.T
	dir string
}

// newOpenSSLOracle skips t, saying so loudly, where the OpenSSL GOST
// engine is not installed (CI installs it), and gives a new scratch
// directory otherwise.
func newOpenSSLOracle(t *testing.T) *opensslOracle {
	t.Helper()
	if out, err := exec.Command("openssl", "engine", "gost").CombinedOutput(); err != nil {
		t.Skipf("SKIPPING OPENSSL ORACLE TEST: the OpenSSL GOST engine is not available (%v: %s); "+
			"install it with: apt-get install -y libengine-gost-openssl openssl", err, out)
	}
	return &opensslOracle{t: t, dir: t.TempDir()}
}

// run runs openssl with args in the directory, failing the test with its
// output when it fails.
func (o *opensslOracle) run(args ...string) {
	o.t.Helper()
	cmd := exec.Command("openssl", args...)
	cmd.Dir = o.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		o.t.Fatalf("openssl %v: %v\n%s", args, err, out)
	}
}

// write puts a file into the directory.
func (o *opensslOracle) write(name string, data []byte) {
	o.t.Helper()
	if err := os.WriteFile(filepath.Join(o.dir, name), data, 0o600); err != nil {
		o.t.Fatal(err)
	}
}

// read returns a file of the directory.
func (o *opensslOracle) read(name string) []byte {
	o.t.Helper()
	b, err := os.ReadFile(filepath.Join(o.dir, name))
	if err != nil {
		o.t.Fatal(err)
	}
	return b
}
