package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Mosquitto is a broker of a test's own, on a free local port of the
// loopback interface and without persistence, which the test may stop
// (as a crash or an orderly restart) and start again on the same port:
// the machine's shared broker must never be restarted under other tests.
type Mosquitto struct {
	tb   testing.TB
	bin  string
	conf string
	port int
	cmd  *exec.Cmd
}

// StartMosquitto starts a private broker, skipping the test loudly when the
// mosquitto binary is absent (and failing it when CI, which installs the
// binary, has set EnvMQTT). The test's cleanup kills it.
func StartMosquitto(tb testing.TB) *Mosquitto {
	tb.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		if os.Getenv(EnvMQTT) != "" {
			tb.Fatalf("mosquitto is not installed though %s is set (CI installs it)", EnvMQTT)
		}
		tb.Skip("SKIPPED LOUDLY: no mosquitto binary to run a private broker (CI installs it: apt-get install mosquitto)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	m := &Mosquitto{tb: tb, bin: bin, port: port, conf: filepath.Join(tb.TempDir(), "mosquitto.conf")}
	// Without persistence a restarted broker has forgotten every session,
	// subscription and retained message, as a broker upgraded in a fresh
	// container has.
	conf := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", port)
	if err := os.WriteFile(m.conf, []byte(conf), 0o600); err != nil {
		tb.Fatal(err)
	}
	m.Start()
	tb.Cleanup(func() { m.Stop(os.Kill) })
	return m
}

// URL is the broker's address for MQTT clients.
func (m *Mosquitto) URL() string { return fmt.Sprintf("tcp://127.0.0.1:%d", m.port) }

// Start runs the broker again on its port after Stop, returning once it
// accepts connections.
func (m *Mosquitto) Start() {
	m.tb.Helper()
	if m.cmd != nil {
		m.tb.Fatal("mosquitto is already running")
	}
	cmd := exec.Command(m.bin, "-c", m.conf)
	if err := cmd.Start(); err != nil {
		m.tb.Fatal(err)
	}
	m.cmd = cmd
	addr := fmt.Sprintf("127.0.0.1:%d", m.port)
	// The port was free a moment ago, and connections of the previous
	// run's clients in TIME_WAIT do not keep a listener from binding it.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			m.Stop(os.Kill)
			m.tb.Fatalf("mosquitto did not listen on %s in 10 s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop sends the broker sig (os.Kill models a crash, syscall.SIGTERM an
// orderly stop) and waits for it to exit; without a running broker it
// does nothing.
func (m *Mosquitto) Stop(sig os.Signal) {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Signal(sig)
	_ = m.cmd.Wait()
	m.cmd = nil
}

// Signal sends sig to the running broker without waiting for it to exit
// (Freeze sends SIGSTOP where there is one).
func (m *Mosquitto) Signal(sig os.Signal) {
	if m.cmd != nil {
		_ = m.cmd.Process.Signal(sig)
	}
}
