package main

import (
	"strconv"
	"strings"
	"time"
)

// machineCPU is what the whole machine's processors did while a load ran:
// busy and idle time summed over every core, from the kernel's counters
// (Linux's /proc/stat; elsewhere nothing is sampled). The banking bench is
// CPU-bound on small machines, so its ratios follow the CPU each request
// costs everything on the machine (server, load generator, PostgreSQL,
// the kernel), and the idle share tells where it is not CPU-bound.
type machineCPU struct {
	busy, idle time.Duration
	ok         bool
}

// sub returns the CPU spent between s and a later sample t.
func (s machineCPU) sub(t machineCPU) machineCPU {
	if !s.ok || !t.ok {
		return machineCPU{}
	}
	return machineCPU{busy: t.busy - s.busy, idle: t.idle - s.idle, ok: true}
}

// add sums two intervals' CPU (for a scenario cut into rounds); an
// interval without a sample makes the sum unknown.
func (s machineCPU) add(t machineCPU) machineCPU {
	if !s.ok || !t.ok {
		return machineCPU{}
	}
	return machineCPU{busy: s.busy + t.busy, idle: s.idle + t.idle, ok: true}
}

// userHz is the unit of /proc/stat's counters. It is part of Linux's
// user-space ABI (USER_HZ), 100 on every architecture Go supports there,
// whatever the kernel's own tick rate.
const userHz = 100

// parseProcStat reads the aggregate "cpu" line of /proc/stat: user, nice,
// system, idle, iowait, irq, softirq and steal, in USER_HZ ticks. Idle is
// idle plus iowait (a core waiting for the disk runs nothing); steal counts
// as busy, being time the core was not ours to use. Guest time is already
// inside user and nice, so it is not added again.
func parseProcStat(text string) machineCPU {
	line, _, _ := strings.Cut(text, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return machineCPU{}
	}
	var v [8]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || n < 0 {
			return machineCPU{}
		}
		v[i] = n
	}
	tick := time.Second / userHz
	busy := v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	idle := v[3] + v[4]
	return machineCPU{busy: time.Duration(busy) * tick, idle: time.Duration(idle) * tick, ok: true}
}

// perRequest is the machine's busy CPU per request of n, and the idle
// share of the interval, as the bench prints them ("-" when unknown).
func (s machineCPU) perRequest(n int) (cpu, idle string) {
	if !s.ok || n == 0 || s.busy+s.idle <= 0 {
		return "-", "-"
	}
	us := float64(s.busy.Microseconds()) / float64(n)
	share := 100 * float64(s.idle) / float64(s.busy+s.idle)
	return strconv.FormatFloat(us, 'f', 1, 64) + "µs", strconv.FormatFloat(share, 'f', 0, 64) + "%"
}
