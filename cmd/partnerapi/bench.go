package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// benchCommand is one `partnerapi bench <name>` benchmark.
type benchCommand func(ctx context.Context, args []string, getenv func(string) string, io stdio) error

// benchmarks lists the benchmarks; each lives in its own bench_<name>.go.
var benchmarks = map[string]benchCommand{}

// runBench is `partnerapi bench <name>`.
func runBench(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	var names []string
	for n := range benchmarks {
		names = append(names, n)
	}
	sort.Strings(names)
	// -h is the question a new user asks first; it gets the list of
	// benchmarks, not "unknown benchmark".
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return fmt.Errorf("usage: partnerapi bench <%s> [flags]   ('partnerapi bench NAME -h' for a benchmark's flags)", strings.Join(names, "|"))
	}
	b, ok := benchmarks[args[0]]
	if !ok {
		return fmt.Errorf("unknown benchmark %q (have %s)", args[0], strings.Join(names, ", "))
	}
	return b(ctx, args[1:], getenv, io)
}
