package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A broker counts as started once it runs on its own port, not once the
// port answers: on a port another process listens on (here a plain
// listener; in CI another test's broker) start fails with mosquitto's
// reason, where the old dial check passed and left the test talking to
// the other process. On a free port it runs, and Stop ends it.
func TestMosquittoStartNeedsItsOwnPort(t *testing.T) {
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: no mosquitto binary")
	}
	for _, tc := range []struct {
		name  string
		taken bool
	}{{"port taken by another process", true}, {"free port", false}} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			if tc.taken {
				defer l.Close()
			} else {
				l.Close()
			}
			m := &Mosquitto{tb: t, bin: bin, port: port, conf: filepath.Join(t.TempDir(), "mosquitto.conf")}
			conf := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", port)
			if err := os.WriteFile(m.conf, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			err = m.start()
			defer m.Stop(os.Kill)
			if tc.taken {
				if err == nil || !strings.Contains(err.Error(), "Address already in use") || m.cmd != nil {
					t.Fatalf("start on a taken port: %v (running: %v), want mosquitto's Address already in use", err, m.cmd != nil)
				}
				return
			}
			if err != nil || m.cmd == nil {
				t.Fatalf("start on a free port: %v", err)
			}
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatalf("the running broker does not answer: %v", err)
			}
			c.Close()
			m.Stop(os.Kill)
			if m.cmd != nil {
				t.Fatal("Stop left the broker")
			}
		})
	}
}
