package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/testenv"
)

// A CI job starts serve on port 0 and waits for --ready-file: once the file
// is there, every address in it answers (the HTTP listeners' /healthz, the
// gRPC port a dial), its pid is serve's, a file an earlier job left is not
// what it read, and after the stop the file is gone.
func TestServeReadyFileNamesTheBoundAddresses(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready.json")
	stale := `{"pid":1,"banking":"127.0.0.1:1"}`
	if err := os.WriteFile(ready, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--data-dir", filepath.Join(dir, "data"), "--models-dir", filepath.Join(dir, "models"),
		"--banking-addr", "127.0.0.1:0", "--assistant-addr", "127.0.0.1:0", "--smarthome-addr", "127.0.0.1:0",
		"--assistant-grpc-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0", "--log-flush-interval", "0",
		"--ready-file", ready}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &testenv.LogBuffer{}
	errc := make(chan error, 1)
	go func() {
		errc <- serve(ctx, args, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: logs}, nil)
	}()
	doc := waitReadyFile(t, ready, stale, errc)
	if pid, _ := doc["pid"].(float64); int(pid) != os.Getpid() {
		t.Errorf("ready file pid = %v, want serve's %d", doc["pid"], os.Getpid())
	}
	for name, path := range map[string]string{"banking": "/healthz", "assistant": "/healthz", "smarthome": "/healthz",
		"metrics": "/metrics", "pprof": "/debug/pprof/"} {
		addr, _ := doc[name].(string)
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Errorf("%s at %q from the ready file: %v", name, addr, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s at %s%s: %d", name, addr, path, resp.StatusCode)
		}
	}
	grpcAddr, _ := doc["assistant-grpc"].(string)
	if !strings.Contains(logs.String(), "addr="+grpcAddr) || grpcAddr == "" {
		t.Errorf("ready file's assistant-grpc %q is not the address serve logged:\n%s", grpcAddr, logs.String())
	} else if c, err := net.DialTimeout("tcp", grpcAddr, 10*time.Second); err != nil {
		t.Errorf("assistant-grpc at %s: %v", grpcAddr, err)
	} else {
		c.Close()
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop in 30s")
	}
	if _, err := os.Stat(ready); !os.IsNotExist(err) {
		t.Errorf("ready file after serve stopped: %v, want it removed", err)
	}
}

// A start that fails (here a port in use, as when the previous job's serve
// still runs) leaves no ready file, not even one an earlier serve left, so
// the script waiting for it sees serve exit instead of stale addresses.
func TestServeReadyFileAbsentAfterAFailedStart(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready.json")
	if err := os.WriteFile(ready, []byte(`{"pid":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err = serve(context.Background(), []string{"--data-dir", filepath.Join(dir, "data"), "--only", "smarthome",
		"--smarthome-addr", taken.Addr().String(), "--ready-file", ready, "--log-flush-interval", "0"},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, nil)
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("serve on a taken port: %v, want address already in use", err)
	}
	if _, err := os.Stat(ready); !os.IsNotExist(err) {
		t.Errorf("ready file after a failed start: %v, want none", err)
	}
}

// waitReadyFile polls for the ready file with content other than stale and
// returns it decoded; serve failing meanwhile fails the test.
func waitReadyFile(t *testing.T, path, stale string, errc <-chan error) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-errc:
			t.Fatalf("serve ended before it was ready: %v", err)
		default:
		}
		if b, err := os.ReadFile(path); err == nil && string(b) != stale {
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("ready file %q: %v", b, err)
			}
			return doc
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no ready file within 60s")
	return nil
}
