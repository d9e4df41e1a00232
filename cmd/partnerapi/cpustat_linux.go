//go:build linux

package main

import "os"

// sampleCPU reads the machine's CPU counters; a failed read is a sample
// that is not ok, which blanks the bench's CPU columns.
func sampleCPU() machineCPU {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}
	}
	return parseProcStat(string(b))
}
