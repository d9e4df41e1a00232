//go:build !linux

package postgres

import "syscall"

// setUserTimeout does nothing where TCP_USER_TIMEOUT is not available:
// the keepalive probes alone find a dead peer there, and only once a
// connection is idle.
func setUserTimeout(string, string, syscall.RawConn) error { return nil }
