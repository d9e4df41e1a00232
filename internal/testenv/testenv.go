// Package testenv locates what tests share with the rest of the workplace:
// the test models and reference files in ../shared beside the repository
// (never copied into it) and the machine's MQTT broker.
package testenv

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// RepoRoot returns the directory holding go.mod, found by walking up from the
// working directory (go test runs in the package directory).
func RepoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// SharedDir returns ../shared/<sub> beside the repository, or "" when absent.
// PARTNERAPI_SHARED_DIR overrides the location.
func SharedDir(sub string) string {
	base := os.Getenv("PARTNERAPI_SHARED_DIR")
	if base == "" {
		root, ok := RepoRoot()
		if !ok {
			return ""
		}
		base = filepath.Join(filepath.Dir(root), "shared")
	}
	p := filepath.Join(base, sub)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// Models returns the shared models directory or skips the test loudly when
// it is absent (it is always present in CI).
func Models(tb testing.TB) string {
	tb.Helper()
	p := SharedDir("models")
	if p == "" {
		tb.Skip("SKIPPING: ../shared/models is absent; this test needs the shared test models")
	}
	return p
}

// Model returns the path of one file in the shared models directory. Only
// the directory's absence skips: a file missing from a directory that is
// there is a broken checkout of the shared models (it lists every file
// the tests name), and a skip there hid that the fuzz targets and vector
// tests of the tokenizers had stopped running.
func Model(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(Models(tb), name)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("shared model %s is absent from ../shared/models, which is there: %v", name, err)
	}
	return p
}

// Reference returns the path of a file in ../shared/reference or skips.
func Reference(tb testing.TB, name string) string {
	tb.Helper()
	p := SharedDir(filepath.Join("reference", name))
	if p == "" {
		tb.Skipf("SKIPPING: ../shared/reference/%s is absent", name)
	}
	return p
}

// EnvMQTT names the MQTT broker tests use; CI starts Mosquitto and sets it.
const EnvMQTT = "PARTNERAPI_TEST_MQTT_URL"

// MQTTBroker returns the URL of a reachable MQTT broker: EnvMQTT's, which
// must answer, or else Mosquitto's default local port when something
// listens there; with neither the test is skipped with a loud message.
func MQTTBroker(tb testing.TB) string {
	tb.Helper()
	u, ok := MQTTBrokerIfAny(tb)
	if !ok {
		tb.Skipf("SKIPPED LOUDLY: no MQTT broker at %s and %s unset (CI starts Mosquitto and sets it)", u, EnvMQTT)
	}
	return u
}

// MQTTBrokerIfAny is MQTTBroker for a test that runs its other parts
// without a broker: false (and the address tried) when none answers and
// EnvMQTT is unset.
func MQTTBrokerIfAny(tb testing.TB) (string, bool) {
	tb.Helper()
	u := os.Getenv(EnvMQTT)
	named := u != ""
	if !named {
		u = "tcp://127.0.0.1:1883"
	}
	pu, err := url.Parse(u)
	if err != nil {
		tb.Fatalf("%s: %v", EnvMQTT, err)
	}
	c, err := net.DialTimeout("tcp", pu.Host, 2*time.Second)
	if err != nil {
		if named {
			tb.Fatalf("%s=%s unreachable: %v", EnvMQTT, u, err)
		}
		return u, false
	}
	c.Close()
	return u, true
}
