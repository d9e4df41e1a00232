//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// A second serve on one SQLite data directory stops at start with one line
// naming the first one's pid; once the first has stopped, a serve starts
// there again. Provisioning commands still run beside a serve.
func TestServeRefusesASecondServeOnOneDataDir(t *testing.T) {
	dir := t.TempDir()
	first := startControlledServer(t, dir, "--only", "smarthome")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := serve(ctx, []string{"--data-dir", dir, "--only", "smarthome", "--smarthome-addr", "127.0.0.1:0", "--log-flush-interval", "0"},
		func(string) string { return "" }, stdio{out: io.Discard, err: io.Discard}, func(map[string]string) {
			t.Error("a second serve started on the same data dir")
			cancel()
		})
	want := fmt.Sprintf("in use by another partnerapi serve (pid %d)", os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("second serve: %v, want one line with %q", err, want)
	}
	if err := runSmarthome(ctx, []string{"agent", "create", "--login", "beside", "--data-dir", dir},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}); err != nil {
		t.Fatalf("provisioning beside serve: %v", err)
	}
	first.cancel()
	if err := <-first.errc; err != nil {
		t.Fatalf("first serve: %v", err)
	}
	first.errc <- nil
	startControlledServer(t, dir, "--only", "smarthome")
}
