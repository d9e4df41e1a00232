package testenv

import (
	"bytes"
	"sync"
)

// LogBuffer is a log sink a server under test and the test share: the
// server's goroutines write lines while the test reads them, so the buffer
// takes a lock, which bytes.Buffer alone does not.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
