package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	// exited is closed once cmd has exited and been waited for.
	exited chan struct{}
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
	m := &Mosquitto{tb: tb, bin: bin, conf: filepath.Join(tb.TempDir(), "mosquitto.conf")}
	// A port found free may be taken before the broker binds it: CI runs
	// packages' tests in parallel, and each starts brokers of its own.
	// The broker then exits, and another port is tried.
	for attempt := 1; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		m.port = l.Addr().(*net.TCPAddr).Port
		l.Close()
		// Without persistence a restarted broker has forgotten every
		// session, subscription and retained message, as a broker
		// upgraded in a fresh container has.
		conf := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", m.port)
		if err := os.WriteFile(m.conf, []byte(conf), 0o600); err != nil {
			tb.Fatal(err)
		}
		err = m.start()
		if err == nil {
			break
		}
		if attempt == 5 {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() { m.Stop(os.Kill) })
	return m
}

// URL is the broker's address for MQTT clients.
func (m *Mosquitto) URL() string { return fmt.Sprintf("tcp://127.0.0.1:%d", m.port) }

// Start runs the broker again on its port after Stop, returning once it
// runs there; a port another process took meanwhile fails the test.
func (m *Mosquitto) Start() {
	m.tb.Helper()
	if m.cmd != nil {
		m.tb.Fatal("mosquitto is already running")
	}
	if err := m.start(); err != nil {
		m.tb.Fatal(err)
	}
}

// start runs the broker and returns once it says, on its log, that it
// runs, which it does after it opened its listener. Answering on the port
// is no proof: a broker that cannot bind it (another process's, often
// another test's broker, took it) exits with "Address already in use",
// and a test that dialed the port would take the other broker for its
// own; TestCommandNotReplayed then froze the exited one and saw its
// command acknowledged by the other.
func (m *Mosquitto) start() error {
	log := &mosquittoLog{running: make(chan struct{})}
	cmd := exec.Command(m.bin, "-c", m.conf)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case <-log.running:
		m.cmd, m.exited = cmd, exited
		return nil
	case <-exited:
		return fmt.Errorf("mosquitto exited before it ran on port %d: %s", m.port, log.text())
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("mosquitto did not run on port %d in 10 s: %s", m.port, log.text())
	}
}

// mosquittoLog keeps the start of a broker's log, where it says that it
// runs (closing running) or why it could not; it takes and drops the rest,
// a line for every connection.
type mosquittoLog struct {
	mu      sync.Mutex
	head    []byte
	said    bool
	running chan struct{}
}

func (l *mosquittoLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.head) < 64<<10 {
		l.head = append(l.head, p...)
	}
	// "mosquitto version 2.0.11 running", after the listeners opened.
	if !l.said && bytes.Contains(l.head, []byte(" running")) {
		l.said = true
		close(l.running)
	}
	return len(p), nil
}

func (l *mosquittoLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.TrimSpace(string(l.head))
}

// Stop sends the broker sig (os.Kill models a crash, syscall.SIGTERM an
// orderly stop) and waits for it to exit; without a running broker it
// does nothing.
func (m *Mosquitto) Stop(sig os.Signal) {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Signal(sig)
	<-m.exited
	m.cmd, m.exited = nil, nil
}

// Signal sends sig to the running broker without waiting for it to exit
// (Freeze sends SIGSTOP where there is one).
func (m *Mosquitto) Signal(sig os.Signal) {
	if m.cmd != nil {
		_ = m.cmd.Process.Signal(sig)
	}
}
