// Package filelock takes a file's exclusive or shared lock without waiting. The lock
// is the system's (flock on Unix, LockFileEx on Windows), so it ends with
// the process holding it however that process ended: a crash leaves no
// stale lock behind. Serve's data directory and the assistant's bill
// journals are kept to one process each with it.
package filelock

import "errors"

// ErrLocked is what TryLock returns when another open file holds the lock,
// in this process or another.
var ErrLocked = errors.New("locked")
