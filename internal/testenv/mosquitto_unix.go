//go:build unix

package testenv

import "syscall"

// Freeze stops the running broker with SIGSTOP: its connections stay open
// and nothing is answered, as with a broker that hangs. Stop(os.Kill)
// still ends it.
func (m *Mosquitto) Freeze() { m.Signal(syscall.SIGSTOP) }

// Thaw lets a frozen broker run again (SIGCONT).
func (m *Mosquitto) Thaw() { m.Signal(syscall.SIGCONT) }
