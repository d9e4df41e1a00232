//go:build !unix

package testenv

// Freeze needs SIGSTOP, which this system does not have: the test is
// skipped loudly.
func (m *Mosquitto) Freeze() {
	m.tb.Helper()
	m.tb.Skip("SKIPPED LOUDLY: freezing the broker needs SIGSTOP (unix only)")
}

// Thaw has nothing to undo: Freeze skipped the test.
func (m *Mosquitto) Thaw() {}
