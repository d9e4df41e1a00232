// Package leaktest checks that a process gives back what a burst of traffic
// took: goroutines and open file descriptors. A server that runs for weeks
// dies of a goroutine or a socket kept per cancelled stream, failed
// delivery or abandoned request long before any single request looks
// wrong, so tests take a Snapshot after warm-up, push the traffic through
// the real handler stack and then WaitBack to that baseline.
package leaktest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"
	"time"
)

// Snapshot is what the process holds at one moment.
type Snapshot struct {
	Goroutines int
	// FDs is the number of open file descriptors, -1 where the platform
	// does not list them (/proc/self/fd is Linux's).
	FDs int
	// stacks is the goroutine profile in its aggregated text form
	// (debug=1: one entry per distinct stack with its count), kept so a
	// failure can say which stacks grew.
	stacks  string
	fdLinks []string
}

// Take records the process's goroutines and open descriptors now.
func Take() Snapshot {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	links := fdLinks()
	n := len(links)
	if links == nil {
		n = -1
	}
	return Snapshot{Goroutines: runtime.NumGoroutine(), FDs: n, stacks: b.String(), fdLinks: links}
}

// fdLinks lists the targets of the process's open descriptors, or nil
// where /proc/self/fd does not exist.
func fdLinks() []string {
	dir := "/proc/self/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	links := make([]string, 0, len(ents))
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			// The descriptor ReadDir itself used is closed by now.
			continue
		}
		links = append(links, l)
	}
	return links
}

// Settled is the baseline after warm-up: the snapshot with the fewest
// goroutines, taken once the count has stopped falling for half a second
// (or at most after deadline). The warm-up's own streams and connections
// wind down for a while after their clients return, and a baseline taken
// among them would hide as many leaked goroutines.
func Settled(deadline time.Duration) Snapshot {
	end := time.Now().Add(deadline)
	runtime.GC()
	low := Take()
	for still := 0; still < 5 && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
		runtime.GC()
		if now := Take(); now.Goroutines < low.Goroutines {
			low, still = now, 0
		} else {
			still++
		}
	}
	return low
}

// Slack is how far above the baseline a count may stay: runtime and
// library goroutines (a GC worker, a timer's, a connection pool's opener)
// come and go on their own, so an exact match would be flaky.
type Slack struct {
	Goroutines, FDs int
	// Pooled bounds the descriptors of files a pool opens as load asks
	// and then keeps: each SQLite reader connection holds the database
	// and its WAL open, up to the pool's size, and a warm-up on a quiet
	// machine opens fewer readers than a burst on a busy one. Each file
	// named here may hold up to that many descriptors more than the
	// baseline without counting against FDs; beyond it, they count.
	Pooled map[string]int
}

// WaitBack polls until the process holds no more than base plus slack,
// and fails tb with what is left (the goroutine stacks whose counts grew
// and the descriptors that are new) when deadline passes first. It returns
// the last snapshot.
func WaitBack(tb testing.TB, base Snapshot, slack Slack, deadline time.Duration) Snapshot {
	tb.Helper()
	end := time.Now().Add(deadline)
	for {
		// A collection runs finalizers and cleanups, which close what was
		// only dropped (an os.File, a net.Conn nobody closed), so what
		// remains after it is held by someone.
		runtime.GC()
		now := Take()
		if within(base, now, slack) {
			return now
		}
		if time.Now().After(end) {
			tb.Errorf("after %v: %d goroutines (baseline %d, slack %d), %d open fds (baseline %d, slack %d)\n%s",
				deadline, now.Goroutines, base.Goroutines, slack.Goroutines, now.FDs, base.FDs, slack.FDs, Diff(base, now))
			return now
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func within(base, now Snapshot, slack Slack) bool {
	if now.Goroutines > base.Goroutines+slack.Goroutines {
		return false
	}
	if base.FDs < 0 {
		return true
	}
	return now.FDs-pooledGrowth(base, now, slack.Pooled) <= base.FDs+slack.FDs
}

// pooledGrowth is how many of now's descriptors over base are a pool's,
// within the pool's bound.
func pooledGrowth(base, now Snapshot, pooled map[string]int) int {
	if len(pooled) == 0 {
		return 0
	}
	count := func(links []string) map[string]int {
		m := map[string]int{}
		for _, l := range links {
			if _, ok := pooled[l]; ok {
				m[l]++
			}
		}
		return m
	}
	before, after := count(base.fdLinks), count(now.fdLinks)
	n := 0
	for f, bound := range pooled {
		n += min(max(after[f]-before[f], 0), bound)
	}
	return n
}

// Diff describes what now holds beyond base: each goroutine stack whose
// count grew, with the growth, and each descriptor target whose count grew.
func Diff(base, now Snapshot) string {
	var out strings.Builder
	before := stackCounts(base.stacks)
	grown := stackCounts(now.stacks)
	keys := make([]string, 0, len(grown))
	for k, n := range grown {
		if n > before[k] {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return grown[keys[i]]-before[keys[i]] > grown[keys[j]]-before[keys[j]] })
	out.WriteString("goroutine stacks that grew:\n")
	for _, k := range keys {
		fmt.Fprintf(&out, "+%d (%d → %d)\n%s\n\n", grown[k]-before[k], before[k], grown[k], k)
	}
	fdsBefore, fdsNow := map[string]int{}, map[string]int{}
	for _, l := range base.fdLinks {
		fdsBefore[fdKind(l)]++
	}
	for _, l := range now.fdLinks {
		fdsNow[fdKind(l)]++
	}
	out.WriteString("open descriptors that grew:\n")
	for k, n := range fdsNow {
		if n > fdsBefore[k] {
			fmt.Fprintf(&out, "+%d %s\n", n-fdsBefore[k], k)
		}
	}
	return out.String()
}

// fdKind groups descriptors by what they are: sockets and pipes by kind
// (their inode numbers differ from one to the next), files by path.
func fdKind(link string) string {
	for _, p := range []string{"socket:", "pipe:", "anon_inode:"} {
		if strings.HasPrefix(link, p) {
			return p
		}
	}
	return link
}

// stackCounts parses a debug=1 goroutine profile into its stacks (the
// frames without the addresses line) and their counts.
func stackCounts(profile string) map[string]int {
	m := map[string]int{}
	// The header line ("goroutine profile: total N") runs straight into
	// the first stack, the most frequent one, with no blank line between.
	if _, rest, ok := strings.Cut(profile, "\n"); ok && strings.Contains(profile[:len(profile)-len(rest)], "profile: total") {
		profile = rest
	}
	for _, block := range strings.Split(profile, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if len(lines) < 2 {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(lines[0], "%d @", &n); err != nil {
			continue
		}
		m[strings.Join(lines[1:], "\n")] += n
	}
	return m
}
