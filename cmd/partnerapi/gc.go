package main

import (
	"flag"
	"fmt"
	"runtime/debug"
	"strconv"
)

// gcPercentNoEngine is the GC target of processes without the assistant's
// LLM engine. Their live heap is small (tokens, accounts, buffers in
// flight), so at Go's default of 100 the collector runs many times a second
// under load and spends a tenth of a banking create's CPU; at 400 it runs
// about a third as often for a heap target of a few tens of megabytes. The
// engine's process keeps Go's default: its heap holds model buffers, and
// five times that would cost real memory.
const gcPercentNoEngine = 400

// registerGCFlag adds --gc-percent (PARTNERAPI_GC_PERCENT) to fs.
func registerGCFlag(fs *flag.FlagSet, v *string) {
	fs.StringVar(v, "gc-percent", "auto", fmt.Sprintf("Go GC target (as GOGC; -1: off): auto is %d when the process runs no LLM engine (the assistant API) and GOGC is unset, else the runtime's own", gcPercentNoEngine))
}

// gcPercentFor decides the GC percent to set: set is false when the
// runtime's own setting (GOGC or its default) stays.
func gcPercentFor(flagValue string, engine bool, gogc string) (percent int, set bool, err error) {
	if flagValue == "auto" || flagValue == "" {
		if engine || gogc != "" {
			return 0, false, nil
		}
		return gcPercentNoEngine, true, nil
	}
	p, err := strconv.Atoi(flagValue)
	if err != nil || p < -1 {
		return 0, false, fmt.Errorf("--gc-percent must be auto, -1 (off) or a percentage ≥ 0, got %q", flagValue)
	}
	return p, true, nil
}

// applyGCPercent sets the process's GC percent as gcPercentFor decides.
func applyGCPercent(flagValue string, engine bool, getenv func(string) string) error {
	p, set, err := gcPercentFor(flagValue, engine, getenv("GOGC"))
	if err != nil || !set {
		return err
	}
	debug.SetGCPercent(p)
	return nil
}
