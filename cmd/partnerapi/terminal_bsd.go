//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "golang.org/x/sys/unix"

// isTerminalFd reports whether fd is a terminal: it answers the terminal
// attributes request (TIOCGETA is the BSD spelling of Linux's TCGETS).
func isTerminalFd(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	return err == nil
}
