package main

import "golang.org/x/sys/unix"

// isTerminalFd reports whether fd is a terminal: it answers the terminal
// attributes request.
func isTerminalFd(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}
