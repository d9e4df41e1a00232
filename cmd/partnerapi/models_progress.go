package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// pullProgress shows a download's progress on stderr: on a terminal a bar
// redrawn in place at most every redrawEvery (bytes, %, rate, ETA); else,
// for logs, one line per 10 % (or every logEvery when the size is unknown).
type pullProgress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	tty   bool
	now   func() time.Time

	started    bool
	start      time.Time
	startBytes int64 // already on disk when this run began (resumed)
	lastDraw   time.Time
	lastDecile int64
	done       int64
	total      int64
	drawn      bool // a bar is on the current line
}

const (
	redrawEvery = 100 * time.Millisecond
	logEvery    = 10 * time.Second
	barWidth    = 24
)

func newPullProgress(w io.Writer, label string, tty bool) *pullProgress {
	return &pullProgress{w: w, label: label, tty: tty, now: time.Now}
}

// update is PullOptions.Progress: called after every chunk.
func (p *pullProgress) update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.started || done < p.done {
		// First call, or the download started over from byte 0.
		p.started, p.start, p.startBytes = true, now, done
		p.lastDecile = decile(done, total)
		p.lastDraw = time.Time{}
	}
	p.done, p.total = done, total
	if p.tty {
		if now.Sub(p.lastDraw) >= redrawEvery || (total > 0 && done == total) {
			p.lastDraw = now
			p.drawBar(now)
		}
		return
	}
	switch d := decile(done, total); {
	case total > 0 && d > p.lastDecile:
		p.lastDecile = d
		fmt.Fprintf(p.w, "%s: %d%% (%s of %s, %s)\n", p.label, d*10, formatBytes(done), formatBytes(total), p.rate(now))
	case total <= 0 && now.Sub(p.lastDraw) >= logEvery:
		if !p.lastDraw.IsZero() {
			fmt.Fprintf(p.w, "%s: %s (%s)\n", p.label, formatBytes(done), p.rate(now))
		}
		p.lastDraw = now
	}
}

func decile(done, total int64) int64 {
	if total <= 0 {
		return 0
	}
	return done * 10 / total
}

// drawBar rewrites the current terminal line.
func (p *pullProgress) drawBar(now time.Time) {
	var b strings.Builder
	b.WriteString("\r")
	b.WriteString(p.label)
	if p.total > 0 {
		filled := int(p.done * barWidth / p.total)
		fmt.Fprintf(&b, " %3d%% [%s%s] %s / %s", p.done*100/p.total,
			strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled), formatBytes(p.done), formatBytes(p.total))
	} else {
		fmt.Fprintf(&b, " %s", formatBytes(p.done))
	}
	fmt.Fprintf(&b, "  %s", p.rate(now))
	if eta, ok := p.eta(now); ok {
		fmt.Fprintf(&b, "  ETA %s", eta)
	}
	b.WriteString("\x1b[K") // clear what a longer previous line left
	io.WriteString(p.w, b.String())
	p.drawn = true
}

// rate is the average speed of this run (resumed bytes do not count).
func (p *pullProgress) rate(now time.Time) string {
	el := now.Sub(p.start).Seconds()
	if el < 0.05 {
		return "-- B/s"
	}
	return formatBytes(int64(float64(p.done-p.startBytes)/el)) + "/s"
}

func (p *pullProgress) eta(now time.Time) (time.Duration, bool) {
	got, el := p.done-p.startBytes, now.Sub(p.start)
	if p.total <= 0 || got <= 0 || el < 500*time.Millisecond || p.done >= p.total {
		return 0, false
	}
	left := time.Duration(float64(el) * float64(p.total-p.done) / float64(got))
	return left.Round(time.Second), true
}

// note is PullOptions.Notify: a message on its own line, the bar redrawn
// below it.
func (p *pullProgress) note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		io.WriteString(p.w, "\r\x1b[K")
	}
	fmt.Fprintf(p.w, "%s: %s\n", p.label, msg)
	if p.tty && p.drawn {
		p.drawBar(p.now())
	}
}

// finish ends the bar's line.
func (p *pullProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		p.drawBar(p.now())
		io.WriteString(p.w, "\n")
		p.drawn = false
	}
}

// isTerminal reports whether w is a terminal (a bar can be redrawn in place).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// formatBytes prints a size in binary units with three significant digits.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	suffix := "KMGTPE"[i : i+1]
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f %siB", v, suffix)
	case v >= 10:
		return fmt.Sprintf("%.1f %siB", v, suffix)
	}
	return fmt.Sprintf("%.2f %siB", v, suffix)
}
