package main

import (
	"runtime"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tick := time.Second / userHz
	tests := []struct {
		name       string
		text       string
		ok         bool
		busy, idle time.Duration
	}{
		{
			name: "ten fields, guest already inside user",
			text: "cpu  100 5 40 800 20 3 2 7 50 0\ncpu0 50 2 20 400 10 1 1 3 25 0\nintr 1\n",
			ok:   true, busy: (100 + 5 + 40 + 3 + 2 + 7) * tick, idle: (800 + 20) * tick,
		},
		{
			name: "an old kernel's eight counters",
			text: "cpu 1 2 3 4 5 6 7 8\n",
			ok:   true, busy: (1 + 2 + 3 + 6 + 7 + 8) * tick, idle: (4 + 5) * tick,
		},
		{name: "too few counters", text: "cpu 1 2 3 4 5 6 7\n"},
		{name: "a per-core line first", text: "cpu0 1 2 3 4 5 6 7 8\n"},
		{name: "not a number", text: "cpu 1 2 x 4 5 6 7 8\n"},
		{name: "negative", text: "cpu 1 2 -3 4 5 6 7 8\n"},
		{name: "empty", text: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseProcStat(tt.text)
			if got.ok != tt.ok || got.busy != tt.busy || got.idle != tt.idle {
				t.Errorf("parseProcStat = %+v, want ok=%v busy=%v idle=%v", got, tt.ok, tt.busy, tt.idle)
			}
		})
	}
}

func TestMachineCPUPerRequest(t *testing.T) {
	a := machineCPU{busy: 10 * time.Second, idle: 30 * time.Second, ok: true}
	b := machineCPU{busy: 12 * time.Second, idle: 30*time.Second + 500*time.Millisecond, ok: true}
	d := a.sub(b)
	if cpu, idle := d.perRequest(40_000); cpu != "50.0µs" || idle != "20%" {
		t.Errorf("perRequest = %s %s, want 50.0µs 20%%", cpu, idle)
	}
	// Two rounds sum; a round without a sample makes the sum unknown.
	if cpu, _ := d.add(d).perRequest(80_000); cpu != "50.0µs" {
		t.Errorf("two rounds: %s", cpu)
	}
	if cpu, idle := d.add(machineCPU{}).perRequest(1); cpu != "-" || idle != "-" {
		t.Errorf("unknown round: %s %s", cpu, idle)
	}
	if cpu, _ := d.perRequest(0); cpu != "-" {
		t.Errorf("no requests: %s", cpu)
	}
	if got := (machineCPU{}).sub(b); got.ok {
		t.Errorf("sub of a failed sample is ok: %+v", got)
	}
}

// TestSampleCPU reads the running machine's counters: on Linux they exist
// and only grow.
func TestSampleCPU(t *testing.T) {
	s := sampleCPU()
	if runtime.GOOS != "linux" {
		if s.ok {
			t.Fatalf("sampleCPU on %s: %+v", runtime.GOOS, s)
		}
		return
	}
	if !s.ok || s.busy <= 0 || s.idle < 0 {
		t.Fatalf("sampleCPU = %+v", s)
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	d := s.sub(sampleCPU())
	if !d.ok || d.busy < 0 || d.idle < 0 {
		t.Fatalf("interval = %+v", d)
	}
}
