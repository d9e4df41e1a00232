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

// A command's -h prints its flags and exits 0, as the flag package's own
// -h does; an error still exits 1 with the "partnerapi:" prefix.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"serve", "-h"}, {"banking", "org", "create", "-h"}, {"models", "list", "--help"}, {"generate", "-h"}} {
		var w bytes.Buffer
		code := report(run(context.Background(), args, noEnv, stdio{out: io.Discard, err: io.Discard}), &w)
		if code != 0 || !strings.HasPrefix(w.String(), "usage of ") || !strings.Contains(w.String(), "  -") {
			t.Errorf("partnerapi %s: exit %d, %q; want 0 and the flags", strings.Join(args, " "), code, w.String())
		}
	}
	var w bytes.Buffer
	if code := report(run(context.Background(), []string{"serve", "--no-such-flag"}, noEnv, stdio{out: io.Discard, err: io.Discard}), &w); code != 1 || !strings.HasPrefix(w.String(), "partnerapi: ") {
		t.Errorf("partnerapi serve --no-such-flag: exit %d, %q; want 1 and the error", code, w.String())
	}
}

// `partnerapi models` shows that rm takes several names, as it does and as
// the README says.
func TestModelsUsageTakesSeveralNames(t *testing.T) {
	err := run(context.Background(), []string{"models"}, noEnv, stdio{out: io.Discard, err: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "models rm NAME... ") {
		t.Errorf("partnerapi models: %v, want its usage to show rm NAME...", err)
	}
}
