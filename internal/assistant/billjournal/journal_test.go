package billjournal

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// journals lists the journal files in dir.
func journals(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.journal*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func openJournal(t *testing.T, dir string, log *slog.Logger) *Journal {
	t.Helper()
	j, err := Open(dir, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// The bills a process kept and did not see charged are the next process's,
// once each, and only once that process has them on disk is the old file
// gone; a torn last record (the crash came mid-write) is reported and
// skipped, the bills before it read.
func TestJournalTakenOverAfterCrash(t *testing.T) {
	dir := t.TempDir()
	first := openJournal(t, dir, nil)
	for n := 1; n <= 4; n++ {
		if err := first.Keep(testBill(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.Charged(testBill(2).ID); err != nil {
		t.Fatal(err)
	}
	path := first.path
	// The process dies: its file is closed by the system, as it is here,
	// with no Close of the journal, and its last write was torn.
	first.f.Close()
	first.f = nil
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	torn, _ := keptRecord(testBill(5))
	if err := os.WriteFile(path, append(data, torn[:len(torn)-4]...), 0o600); err != nil {
		t.Fatal(err)
	}

	var logged bytes.Buffer
	second := openJournal(t, dir, slog.New(slog.NewTextHandler(&logged, nil)))
	if got := ids(second.Bills()); !slices.Equal(got, want(1, 3, 4)) {
		t.Fatalf("taken over: %v, want %v", got, want(1, 3, 4))
	}
	if d := second.Skipped(); len(d) != 1 || d[0].Offset != int64(len(data)) || d[0].Length != int64(len(torn)-4) {
		t.Fatalf("skipped %v, want the torn record at %d", d, len(data))
	}
	if !strings.Contains(logged.String(), "damaged stretch of a bill journal") || !strings.Contains(logged.String(), path) {
		t.Fatalf("the damage is not reported: %s", logged.String())
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the old journal is still there: %v", err)
	}
	// What the second process was handed is in its own file: a third,
	// after the second died too, gets the same bills.
	second.Charged(testBill(3).ID)
	second.f.Close()
	second.f = nil
	third := openJournal(t, dir, nil)
	if got := ids(third.Bills()); !slices.Equal(got, want(1, 4)) || len(third.Skipped()) != 0 {
		t.Fatalf("after a second crash: %v %v, want %v", got, third.Skipped(), want(1, 4))
	}
	if got := journals(t, dir); len(got) != 1 || got[0] != third.path {
		t.Fatalf("journal files %v, want only %s", got, third.path)
	}
}

// A journal whose process still runs is not taken over by another process
// on the same data directory (serve on PostgreSQL does not lock it).
func TestJournalOfALiveProcessNotTakenOver(t *testing.T) {
	dir := t.TempDir()
	first := openJournal(t, dir, nil)
	if err := first.Keep(testBill(1)); err != nil {
		t.Fatal(err)
	}
	second := openJournal(t, dir, nil)
	if len(second.Bills()) != 0 {
		t.Fatalf("a live process's bills were taken over: %v", ids(second.Bills()))
	}
	if err := first.Keep(testBill(2)); err != nil {
		t.Fatal(err)
	}
	first.Close()
	second.Close()
	third := openJournal(t, dir, nil)
	if got := ids(third.Bills()); !slices.Equal(got, want(1, 2)) {
		t.Fatalf("after both closed: %v, want %v", got, want(1, 2))
	}
}

// The file does not grow without bound: with no bill live it is cut back
// to its header, and a long run of charges while others stay live is
// compacted away; what stays live is read back after a restart. A closed
// journal keeps nothing and refuses to keep.
func TestJournalCompacts(t *testing.T) {
	dir := t.TempDir()
	j := openJournal(t, dir, nil)
	for _, c := range []struct {
		name       string
		kept       int
		charged    int
		maxRecords int // 5990 here uncompacted
	}{
		{"all charged", 50, 50, 0},
		{"a few left", 3000, 2990, 10 + compactAfter},
	} {
		t.Run(c.name, func(t *testing.T) {
			for n := 1; n <= c.kept; n++ {
				if err := j.Keep(testBill(n)); err != nil {
					t.Fatal(err)
				}
			}
			for n := 1; n <= c.charged; n++ {
				if err := j.Charged(testBill(n).ID); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(j.path)
			if err != nil {
				t.Fatal(err)
			}
			live, records, damage := Decode(data)
			if records > c.maxRecords || int64(len(data)) != j.size || len(live) != c.kept-c.charged || len(damage) != 0 {
				t.Fatalf("journal of %d records, %d bytes, %d live, damage %v; want at most %d records, %d live", records, len(data),
					len(live), damage, c.maxRecords, c.kept-c.charged)
			}
		})
	}
	path := j.path
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.Keep(testBill(1)); err == nil {
		t.Fatal("a closed journal kept a bill")
	}
	again := openJournal(t, dir, nil)
	var left []int
	for n := 2991; n <= 3000; n++ {
		left = append(left, n)
	}
	if got := ids(again.Bills()); !slices.Equal(got, want(left...)) {
		t.Fatalf("after the restart: %v, want %v", got, want(left...))
	}
	for _, n := range left {
		again.Charged(testBill(n).ID)
	}
	again.Close()
	if got := journals(t, dir); len(got) != 0 {
		t.Fatalf("journals left with no bill live: %v (first was %s)", got, path)
	}
}
