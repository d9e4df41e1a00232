//go:build !purego && !linux

package kernels

// requestAMX reports false: only Linux's way of granting the AMX tile
// state is implemented.
func requestAMX() bool { return false }
