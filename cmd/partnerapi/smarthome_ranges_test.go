package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --smarthome-ranges replaces third-party default ranges (reference §9
// #14): a relay's current of 40 000 mA, outside the transcribed 0..30 000,
// is valid once the file widens it, and a file naming a feature the
// catalog lacks stops serve with the flag's name rather than being
// ignored.
func TestSmarthomeRangesFlag(t *testing.T) {
	dir := t.TempDir()
	ranges := filepath.Join(dir, "ranges.json")
	if err := os.WriteFile(ranges, []byte(`{"current": {"min": 0, "max": 50000, "step": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	status := []byte(`{"devices":{"r1":{"states":[{"key":"current","value":{"type":"INTEGER","integer_value":"40000"}}]}}}`)
	for _, tc := range []struct {
		name  string
		args  []string
		valid string
	}{
		{"catalog's range", nil, `"valid":false`},
		{"widened", []string{"--smarthome-ranges", ranges}, `"valid":true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, append([]string{"--only", "smarthome"}, tc.args...)...)
			c := provision(t, ts.dataDir, "agent", "agent-g")
			c.base = ts.urls["smarthome"]
			resp, body := c.do("POST", "/v1/mqtt-gate/validate?category=relay", status)
			if resp.StatusCode != 200 || !strings.Contains(string(body), tc.valid) {
				t.Errorf("current 40000: %d %s, want %s", resp.StatusCode, body, tc.valid)
			}
		})
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"currant": {"min": 0, "max": 50000}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := serve(ctx, []string{"--only", "smarthome", "--data-dir", filepath.Join(dir, "data"), "--smarthome-addr", "127.0.0.1:0",
		"--smarthome-ranges", bad}, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard},
		func(map[string]string) { t.Error("serve started with a ranges file naming an unknown feature") })
	if err == nil || !strings.Contains(err.Error(), "--smarthome-ranges") || !strings.Contains(err.Error(), "currant") {
		t.Errorf("serve with a bad ranges file: %v", err)
	}
}
