package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"partnerapi/internal/testenv"
)

// TestJSONLogsEndInJSON holds that with --log-format json every line serve's
// process writes to standard error is a JSON object, the final error of a
// failed start and the signal watcher's lines included: a CI job reading the
// stream with jq failed on exactly the lines that said why serve stopped.
// Without JSON logs they stay the plain "partnerapi: …" lines.
func TestJSONLogsEndInJSON(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			var stderr testenv.LogBuffer
			lines := &processLines{w: &stderr}
			dir := t.TempDir()
			err := run(context.Background(), []string{"serve", "--data-dir", dir, "--models-dir", filepath.Join(dir, "models"),
				"--banking-addr", "127.0.0.1:0", "--assistant-addr", "127.0.0.1:0", "--assistant-grpc-addr", "off",
				"--smarthome-addr", busy.Addr().String(), "--log-flush-interval", "0", "--log-format", format},
				func(string) string { return "" }, stdio{out: io.Discard, err: &stderr, lines: lines})
			if code := reportTo(err, lines); code != 1 {
				t.Fatalf("serve with its port taken exited %d", code)
			}
			out := strings.TrimSpace(stderr.String())
			last := out[strings.LastIndex(out, "\n")+1:]
			if format == "text" {
				if !strings.HasPrefix(last, "partnerapi: ") || !strings.Contains(last, "smarthome: listen") {
					t.Fatalf("last text line %q", last)
				}
				return
			}
			for _, l := range strings.Split(out, "\n") {
				var v map[string]any
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Fatalf("a line of a JSON-logging serve is not JSON: %q", l)
				}
			}
			var v map[string]any
			_ = json.Unmarshal([]byte(last), &v)
			if v["level"] != "ERROR" || !strings.Contains(v["err"].(string), "smarthome: listen") {
				t.Fatalf("final line %v, want the error at ERROR", v)
			}
		})
	}

	// The signal watcher's lines follow the same switch.
	var stderr testenv.LogBuffer
	lines := &processLines{w: &stderr}
	lines.useJSON()
	sigs := make(chan os.Signal, 2)
	ctx, stop := signalContext(context.Background(), sigs, lines, func(int) {})
	defer stop()
	sigs <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the signal did not end the context")
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr.String())), &v); err != nil || v["signal"] != "terminated" {
		t.Fatalf("signal line %q (%v), want JSON naming the signal", stderr.String(), err)
	}
}
