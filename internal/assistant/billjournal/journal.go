package billjournal

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"partnerapi/internal/assistant"
	"partnerapi/internal/dirsync"
	"partnerapi/internal/filelock"
)

// errClosed is what a closed journal answers.
var errClosed = errors.New("billjournal: closed")

// compactAfter is how many records no longer needed (charged bills and
// their kept records) the file may gather while other bills are still
// live before it is written anew with the live ones only. When no bill is
// live the file is cut back to its header at once.
const compactAfter = 1024

// Journal is one process's bill journal: a file of its own in the journal
// directory, locked while the process lives. Processes that share a data
// directory (serve on PostgreSQL does not lock it) each have theirs, and
// a journal whose process is gone, found unlocked at Open, is taken over.
type Journal struct {
	dir     string
	log     *slog.Logger
	bills   []assistant.Bill // the bills taken over at Open
	skipped []Damage

	mu     sync.Mutex
	f      *os.File
	path   string
	size   int64
	live   map[string]assistant.Bill
	dead   int   // records in the file that no live bill needs
	broken error // a write that failed and could not be undone
}

var _ assistant.BillJournal = (*Journal)(nil)

// Open makes this process's journal in dir, creating dir when missing,
// and takes over every journal there that no live process holds: their
// live bills are written to the new journal, fsynced, and then their files
// are removed. Damaged stretches of those files are logged and skipped
// (Skipped). A crash at any point leaves every bill in at least one file,
// and a bill found twice is charged once, by its id.
func Open(dir string, log *slog.Logger) (*Journal, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bill journal: %w", err)
	}
	j := &Journal{dir: dir, log: log, live: map[string]assistant.Bill{}}
	j.path = filepath.Join(dir, NewName())
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("bill journal: %w", err)
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		os.Remove(j.path)
		return nil, fmt.Errorf("bill journal: lock %s: %w", j.path, err)
	}
	j.f = f
	taken, err := j.takeOver()
	if err == nil {
		err = j.rewrite(j.f, j.bills)
	}
	if err == nil {
		err = dirsync.Sync(dir)
	}
	if err != nil {
		for _, t := range taken {
			t.Close()
		}
		f.Close()
		os.Remove(j.path)
		return nil, fmt.Errorf("bill journal: %w", err)
	}
	for _, b := range j.bills {
		j.live[b.ID] = b
	}
	// The taken-over bills are in this journal, on disk: their old files
	// go. A crash before the directory's sync leaves some of them, whose
	// bills the next start charges nothing for twice.
	for _, t := range taken {
		if err := os.Remove(t.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("assistant: a taken-over bill journal could not be removed; its bills are charged once all the same", "file", t.Name(), "err", err)
		}
		t.Close()
	}
	if len(taken) > 0 {
		if err := dirsync.Sync(dir); err != nil {
			log.Warn("assistant: bill journal directory not synced", "dir", dir, "err", err)
		}
	}
	return j, nil
}

// takeOver reads the journals in j.dir that no process holds, into
// j.bills, and returns their files, still open and locked.
// Where the system has no file lock (Plan 9, WebAssembly) two processes
// on one data directory may both read a journal; the store's bill ids
// keep its bills charged once there.
func (j *Journal) takeOver() (taken []*os.File, err error) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(j.dir, name)
		if path == j.path || !e.Type().IsRegular() || !strings.HasSuffix(name, ".journal") && !strings.HasSuffix(name, ".journal.tmp") {
			continue
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			continue // taken over meanwhile by another process
		} else if err != nil {
			return taken, err
		}
		if err := filelock.TryLock(f); errors.Is(err, filelock.ErrLocked) {
			f.Close() // a live process's
			continue
		} else if err != nil {
			f.Close()
			return taken, err
		}
		taken = append(taken, f)
		if strings.HasSuffix(name, ".tmp") {
			// A compaction that its process did not finish: the journal
			// it was to replace still has every bill.
			continue
		}
		data, err := io.ReadAll(f)
		if err != nil {
			return taken, err
		}
		bills, _, damage := Decode(data)
		for _, d := range damage {
			j.log.Error("assistant: a damaged stretch of a bill journal is skipped", "file", path, "offset", d.Offset, "bytes", d.Length,
				"reason", d.Reason)
		}
		j.skipped = append(j.skipped, damage...)
		for _, b := range bills {
			if !seen[b.ID] {
				seen[b.ID] = true
				j.bills = append(j.bills, b)
			}
		}
	}
	slices.SortStableFunc(j.bills, func(a, b assistant.Bill) int { return cmp.Compare(a.MadeAt.UnixMilli(), b.MadeAt.UnixMilli()) })
	return taken, nil
}

// rewrite writes f anew with the header and a kept record for each bill,
// fsynced, and makes f the journal's file.
func (j *Journal) rewrite(f *os.File, bills []assistant.Bill) error {
	buf := []byte(magic)
	for _, b := range bills {
		rec, err := keptRecord(b)
		if err != nil {
			return err
		}
		buf = append(buf, rec...)
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(buf, 0); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	j.f, j.size, j.dead = f, int64(len(buf)), 0
	return nil
}

// Bills are the bills taken over from the journals of processes gone,
// oldest first.
func (j *Journal) Bills() []assistant.Bill { return slices.Clone(j.bills) }

// Skipped is the damage skipped in the journals taken over.
func (j *Journal) Skipped() []Damage { return slices.Clone(j.skipped) }

// Keep appends b and fsyncs the file: nil only once b is on disk. A write
// that fails is cut off again, so the next record follows a whole one; a
// failed fsync leaves the file's state unknown, and the journal refuses
// every write after it.
func (j *Journal) Keep(b assistant.Bill) error {
	rec, err := keptRecord(b)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.append(rec); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		j.broken = fmt.Errorf("bill journal %s: fsync failed: %w", j.path, err)
		return j.broken
	}
	j.live[b.ID] = b
	return nil
}

// append writes rec at the end of the file, undoing a partial write.
func (j *Journal) append(rec []byte) error {
	if j.f == nil {
		return errClosed
	}
	if j.broken != nil {
		return j.broken
	}
	if _, err := j.f.WriteAt(rec, j.size); err != nil {
		if terr := j.f.Truncate(j.size); terr != nil {
			j.broken = fmt.Errorf("bill journal %s: a failed write could not be cut off: %w", j.path, terr)
		}
		return fmt.Errorf("bill journal %s: %w", j.path, err)
	}
	j.size += int64(len(rec))
	return nil
}

// Charged notes that the bill with this id is charged. The record is not
// fsynced: lost in a crash, it costs a retry that charges nothing. When
// no bill is left live, the file is cut back to its header.
func (j *Journal) Charged(id string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.live[id]; !ok {
		return nil
	}
	if j.f == nil {
		return errClosed
	}
	delete(j.live, id)
	if len(j.live) == 0 && j.broken == nil {
		if err := j.f.Truncate(int64(len(magic))); err != nil {
			j.broken = fmt.Errorf("bill journal %s: %w", j.path, err)
			return j.broken
		}
		j.size, j.dead = int64(len(magic)), 0
		return j.f.Sync()
	}
	rec, err := chargedRecord(id)
	if err != nil {
		return err
	}
	if err := j.append(rec); err != nil {
		return err
	}
	j.dead += 2
	if j.dead > compactAfter && j.dead > 2*len(j.live) {
		if err := j.compact(); err != nil {
			j.log.Warn("assistant: the bill journal was not compacted; it is tried again later", "file", j.path, "err", err)
		}
	}
	return nil
}

// compact writes the live bills to a new file, locked before it takes the
// journal's name, so that no starting process takes over the journal
// between the two, and then lets the old file go.
func (j *Journal) compact() error {
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	old, oldSize, oldDead := j.f, j.size, j.dead
	bills := make([]assistant.Bill, 0, len(j.live))
	for _, b := range j.live {
		bills = append(bills, b)
	}
	slices.SortStableFunc(bills, func(a, b assistant.Bill) int { return cmp.Compare(a.MadeAt.UnixMilli(), b.MadeAt.UnixMilli()) })
	err = filelock.TryLock(f)
	if err == nil {
		err = j.rewrite(f, bills)
	}
	if err == nil {
		err = os.Rename(tmp, j.path)
	}
	if err != nil {
		j.f, j.size, j.dead = old, oldSize, oldDead
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := dirsync.Sync(j.dir); err != nil {
		j.log.Warn("assistant: bill journal directory not synced", "dir", j.dir, "err", err)
	}
	old.Close()
	return nil
}

// Close closes the file, leaving the bills still live in it for the next
// start; a journal with none is removed.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	if len(j.live) == 0 {
		// Removed while still locked, so no starting process reads it
		// half gone.
		os.Remove(j.path)
	}
	err := j.f.Close()
	j.f = nil
	return err
}
