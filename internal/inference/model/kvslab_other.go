//go:build !linux

package model

// mapSlab returns n bytes of heap memory: other systems keep the caches in
// the Go heap.
func mapSlab(n int, _ bool) (buf []byte, mapped bool) { return make([]byte, n), false }

func unmapSlab([]byte) {}
