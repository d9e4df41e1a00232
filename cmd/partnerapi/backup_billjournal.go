package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"partnerapi/internal/assistant/billjournal"
	"partnerapi/internal/dirsync"
)

// backupBillJournalPrefix is the directory part of a journal's name in a
// backup's manifest, always written with a slash.
const backupBillJournalPrefix = billJournalDir + "/"

// isBackupBillJournal tells whether a manifest's name is a journal's:
// the journal directory, one slash, and a journal's own name, nothing
// else (no "..", no other directory, no second separator): a backup copies
// only such files, and restore accepts no other name from a manifest, so
// none of its files lands outside the journal directory.
func isBackupBillJournal(name string) bool {
	rest, ok := strings.CutPrefix(name, backupBillJournalPrefix)
	return ok && billjournal.IsName(rest)
}

// backupBillJournals copies the kept-bill journals of dataDir into out's
// journal directory and describes them. A live serve's journal is locked
// (flock on Unix), which does not stop reading it. A journal gone before
// it is read was closed empty, or taken over by a starting serve, which
// wrote its bills to a journal of its own first: the directory is read
// again until a pass finds every file it lists, so that new journal is
// copied too.
func backupBillJournals(dataDir, out string) ([]backupFile, error) {
	src := filepath.Join(dataDir, billJournalDir)
	dst := filepath.Join(out, billJournalDir)
	copied := map[string]bool{}
	var files []backupFile
	for pass := 0; ; pass++ {
		if pass == 100 {
			return nil, fmt.Errorf("the bill journals in %s kept changing while they were copied", src)
		}
		entries, err := os.ReadDir(src)
		if errors.Is(err, os.ErrNotExist) {
			break
		} else if err != nil {
			return nil, err
		}
		vanished := false
		for _, e := range entries {
			name := e.Name()
			if copied[name] || !e.Type().IsRegular() || !billjournal.IsName(name) {
				continue
			}
			if err := os.MkdirAll(dst, 0o700); err != nil {
				return nil, err
			}
			err := copyDurably(filepath.Join(src, name), filepath.Join(dst, name))
			if errors.Is(err, os.ErrNotExist) {
				vanished = true
				continue
			} else if err != nil {
				return nil, fmt.Errorf("bill journal: %w", err)
			}
			copied[name] = true
			f, err := describeFile(out, backupBillJournalPrefix+name)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		if !vanished {
			break
		}
	}
	if len(files) > 0 {
		if err := dirsync.Sync(dst); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// restoreBillJournals puts the backup's journals into dataDir's journal
// directory, each under a new journal name, so that none replaces a
// journal already there (its bills are owed too), and the next serve takes
// them over as a gone process's journals and charges their bills; a bill
// the restored database already applied is charged nothing again, by its
// id. Each is copied through a ".journal.tmp" file, which a serve starting
// after a crash midway drops as an unfinished compaction.
func restoreBillJournals(from, dataDir string, m backupManifest) error {
	dir := filepath.Join(dataDir, billJournalDir)
	n := 0
	for _, f := range m.Files {
		if !isBackupBillJournal(f.Name) {
			continue
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		dst, err := newBillJournalPath(dir)
		if err != nil {
			return err
		}
		if err := copyDurably(filepath.Join(from, f.Name), dst); err != nil {
			return fmt.Errorf("bill journal %s: %w", f.Name, err)
		}
		n++
	}
	if n == 0 {
		return nil
	}
	return dirsync.Sync(dir)
}

// newBillJournalPath is a journal name in dir that no file there has yet.
func newBillJournalPath(dir string) (string, error) {
	for range 16 {
		p := filepath.Join(dir, billjournal.NewName())
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p, nil
		} else if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("no free bill journal name in %s", dir)
}
