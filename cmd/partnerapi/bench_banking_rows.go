package main

// The flags, merged measurements and printed rows of `bench banking`
// (bench_banking.go runs the load).

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"partnerapi/internal/sqldb"
)

// parseScenarios reads --scenarios: a subset of create, state and
// create-signed, in the order given, so a profile can hold one scenario alone.
func parseScenarios(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f != "create" && f != "state" && f != scenarioCreateSigned {
			return nil, fmt.Errorf("--scenarios: %q is none of create, state, create-signed", f)
		}
		out = append(out, f)
	}
	return out, nil
}

func parseConnections(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--connections: %q is not a number ≥ 1", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// mergeLoad adds run to total; latencies are sorted again afterwards.
func mergeLoad(total *loadResult, run loadResult) {
	total.mergeCPU(run)
	total.ok += run.ok
	total.errs += run.errs
	total.elapsed += run.elapsed
	total.firstErr = errors.Join(total.firstErr, run.firstErr)
	total.latencies = mergeSorted(total.latencies, run.latencies)
}

func mergeSorted(a, b []time.Duration) []time.Duration {
	out := make([]time.Duration, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// perCommit is the mean number of items a group commit wrote between two
// readings of its statistics ("" when there was no commit).
func perCommit(before, after sqldb.GroupStats) string {
	if b := after.Batches - before.Batches; b > 0 {
		return strconv.FormatFloat(float64(after.Items-before.Items)/float64(b), 'f', 1, 64)
	}
	return ""
}

// printBankRow prints one row; a ratio or ofFloor of 0 prints as "-".
func printBankRow(w io.Writer, conns int, name string, r loadResult, ratio float64, batch string, ofFloor float64) {
	rs := ""
	if ratio > 0 {
		rs = strconv.FormatFloat(ratio, 'f', 2, 64)
	}
	if rs == "" {
		rs = "-"
	}
	if batch == "" {
		batch = "-"
	}
	cpu, idle := r.cpu.perRequest(r.ok)
	fs := "-"
	if ofFloor > 0 {
		fs = strconv.FormatFloat(ofFloor, 'f', 2, 64)
	}
	fmt.Fprintf(w, "%6d %-22s %9d %9.0f %10s %10s %6d %6s %11s %9s %5s %7s\n", conns, name, r.ok, r.rps(), r.pct(50), r.pct(99), r.errs, rs, batch, cpu, idle, fs)
}
