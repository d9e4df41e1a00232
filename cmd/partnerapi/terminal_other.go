//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

// isTerminalFd reports false: on other systems the progress of a download
// is printed as lines, never redrawn in place.
func isTerminalFd(uintptr) bool { return false }
