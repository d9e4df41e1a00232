//go:build !linux

package main

// sampleCPU samples nothing where /proc/stat does not exist: the bench's
// CPU columns print "-".
func sampleCPU() machineCPU { return machineCPU{} }
