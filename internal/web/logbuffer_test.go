package web

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingWriter records what reaches the stream and in how many writes.
type countingWriter struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.b.Write(p)
}

func (c *countingWriter) snapshot() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String(), c.writes
}

func TestLogBufferKeepsEveryLineWholeAndInOrder(t *testing.T) {
	out := &countingWriter{}
	// A small buffer, so size-triggered flushes happen while eight
	// goroutines write; the interval is long, so the timer plays no part.
	b := NewLogBuffer(out, time.Hour, 512)
	const writers, lines = 8, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				fmt.Fprintf(b, "writer=%d line=%d %s\n", g, i, strings.Repeat("x", i%97))
			}
		}()
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	text, writes := out.snapshot()
	next := make([]int, writers)
	sc := bufio.NewScanner(strings.NewReader(text))
	n := 0
	for sc.Scan() {
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(sc.Text(), "writer=%d line=%d %s", &g, &i, &pad); err != nil && i%97 != 0 {
			t.Fatalf("torn line %q: %v", sc.Text(), err)
		}
		if i != next[g] || len(pad) != i%97 {
			t.Fatalf("writer %d: line %d (pad %d) where line %d was due", g, i, len(pad), next[g])
		}
		next[g]++
		n++
	}
	if n != writers*lines {
		t.Fatalf("%d lines reached the stream, want %d", n, writers*lines)
	}
	if writes >= n/4 {
		t.Fatalf("%d writes for %d lines: the buffer did not batch", writes, n)
	}
}

func TestLogBufferFlushesOnTimerAndClose(t *testing.T) {
	out := &countingWriter{}
	b := NewLogBuffer(out, 20*time.Millisecond, 1<<16)
	// Whether the line is still held right after the write is not asked
	// here: the ticker may fire in between when the machine is loaded.
	// TestLogBufferWritesOversizedLinesThrough asks it with a timer that
	// does not fire.
	_, _ = io.WriteString(b, "first\n")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if text, _ := out.snapshot(); text == "first\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the timer never flushed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, _ = io.WriteString(b, "second\n")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if text, _ := out.snapshot(); text != "first\nsecond\n" {
		t.Fatalf("after Close: %q", text)
	}
	// After Close a line is written through at once.
	_, _ = io.WriteString(b, "third\n")
	if text, _ := out.snapshot(); text != "first\nsecond\nthird\n" {
		t.Fatalf("after Close, a write was held: %q", text)
	}
}

func TestLogBufferWritesOversizedLinesThrough(t *testing.T) {
	out := &countingWriter{}
	b := NewLogBuffer(out, time.Hour, 64)
	defer b.Close()
	_, _ = io.WriteString(b, "short\n")
	if text, _ := out.snapshot(); text != "" {
		t.Fatalf("written before any flush: %q", text)
	}
	long := strings.Repeat("y", 200) + "\n"
	_, _ = io.WriteString(b, long)
	if text, _ := out.snapshot(); text != "short\n"+long {
		t.Fatalf("stream holds %q", text)
	}
}

func TestFlushingHandlerFlushesWarningsAtOnce(t *testing.T) {
	out := &countingWriter{}
	b := NewLogBuffer(out, time.Hour, 1<<16)
	defer b.Close()
	base := slog.New(NewFlushingHandler(NewTextHandler(b, nil), b))
	log := base.With("api", "banking")
	log.Info("request", "status", 200)
	if text, _ := out.snapshot(); text != "" {
		t.Fatalf("info line written at once: %q", text)
	}
	log.Warn("store slow", "ms", 900)
	text, _ := out.snapshot()
	if !strings.Contains(text, "msg=request") || !strings.Contains(text, "msg=\"store slow\"") {
		t.Fatalf("warning did not flush both lines in order: %q", text)
	}
	if strings.Index(text, "msg=request") > strings.Index(text, "store slow") {
		t.Fatalf("lines out of order: %q", text)
	}
	// The access log's fast path still finds the TextHandler beneath.
	if textHandlerOf(base.Handler()) == nil {
		t.Fatal("textHandlerOf does not see through FlushingHandler")
	}
}

// BenchmarkLogLines writes access-log-sized lines to a pipe drained by
// another goroutine (as stderr read by a container runtime or a service
// manager is), unbuffered and through a LogBuffer, side by side in one run;
// the ratio is unbuffered ns per line ÷ buffered ns per line.
func BenchmarkLogLines(b *testing.B) {
	line := []byte(`time=2026-11-25T12:00:00.000Z level=INFO msg=request api=banking method=POST path=/fintech/api/v1/payments status=201 bytes=661 duration=412.5µs request_id=eb7c8e53-4fc3-4d0d-8015-fcaff49d860b remote=127.0.0.1:40000` + "\n")
	run := func(b *testing.B, buffered bool) time.Duration {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		drained := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, r); close(drained) }()
		var dst io.Writer = w
		var buf *LogBuffer
		if buffered {
			buf = NewLogBuffer(w, 100*time.Millisecond, 64<<10)
			dst = buf
		}
		const n = 20000
		start := time.Now()
		for range n {
			_, _ = dst.Write(line)
		}
		if buf != nil {
			_ = buf.Close()
		}
		elapsed := time.Since(start)
		w.Close()
		<-drained
		r.Close()
		return elapsed / n
	}
	var direct, buffered time.Duration
	for b.Loop() {
		direct += run(b, false)
		buffered += run(b, true)
	}
	b.ReportMetric(float64(direct.Nanoseconds())/float64(b.N), "ns/line-direct")
	b.ReportMetric(float64(buffered.Nanoseconds())/float64(b.N), "ns/line-buffered")
	b.ReportMetric(float64(direct)/float64(max(buffered, 1)), "direct÷buffered")
}

// Lines written while Close runs reach the stream all the same: none is
// left in the buffer once Close and the writers returned. A small buffer
// makes the writers take the flushing path often, so the race detector
// sees them beside Close.
func TestLogBufferCloseWhileWriting(t *testing.T) {
	out := &countingWriter{}
	b := NewLogBuffer(out, time.Hour, 128)
	const writers, lines = 4, 300
	var wg sync.WaitGroup
	halfway := make(chan struct{}, writers)
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				if i == lines/2 {
					halfway <- struct{}{}
				}
				fmt.Fprintf(b, "writer=%d line=%d\n", g, i)
			}
		})
	}
	<-halfway
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	text, _ := out.snapshot()
	if n := strings.Count(text, "\n"); n != writers*lines {
		t.Fatalf("%d lines reached the stream, want %d", n, writers*lines)
	}
}
