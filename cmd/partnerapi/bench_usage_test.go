package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// `partnerapi bench -h` lists the benchmarks instead of calling -h an
// unknown one, and the command list of `partnerapi -h` names every
// benchmark the binary has.
func TestBenchUsageNamesEveryBenchmark(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		err := run(context.Background(), []string{"bench", arg}, noEnv, stdio{out: io.Discard, err: io.Discard})
		if err == nil || !strings.Contains(err.Error(), "usage: partnerapi bench") {
			t.Errorf("partnerapi bench %s: %v, want the usage", arg, err)
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, noEnv, stdio{out: &out, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "bench ") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("partnerapi -h has no bench line:\n%s", out.String())
	}
	for name := range benchmarks {
		if !strings.Contains(line, name) {
			t.Errorf("partnerapi -h: %q does not name the %s benchmark", line, name)
		}
	}
}
