package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"partnerapi/internal/banking/bankkeys"
	"partnerapi/internal/dirsync"
	"partnerapi/internal/sqlite"
)

// backupManifestFile names a backup's contents and their digests; restore
// refuses a backup whose files do not match it.
const backupManifestFile = "backup.json"

// keyFiles are the files beside the database in the data directory that a
// restored database needs: the bank's JWS key and the id-token key sign
// what partners already verify, and the webhook key opens the partners'
// webhook secrets sealed in the database. They are in the data directory
// with PostgreSQL too.
var keyFiles = []string{bankkeys.BankKeyFile, bankkeys.IDTokenRSAKeyFile, webhookKeyFile}

// backupManifest is backup.json, the manifest.
type backupManifest struct {
	Created    time.Time      `json:"created"`
	Version    string         `json:"version"`
	Database   string         `json:"database"` // sqlite, or postgresql when the database is not in the backup
	Migrations map[string]int `json:"migrations,omitempty"`
	Files      []backupFile   `json:"files"`
}

type backupFile struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// runBackup copies the data directory of a running or stopped serve into
// a new directory: a consistent snapshot of the SQLite database, taken
// while serve goes on writing, the key files beside it and the
// assistant's kept-bill journals, with a manifest of their digests. With
// --database-url the database is PostgreSQL's to back up (pg_dump) and
// only the keys and the journals are copied.
func runBackup(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	var store storeConfig
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	store.register(fs)
	out := fs.String("out", "", "directory to write the backup to (must not exist, or be empty)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return errors.New("usage: partnerapi backup --data-dir DIR --out BACKUP_DIR")
	}
	if err := emptyDir(*out); err != nil {
		return err
	}
	m := backupManifest{Created: time.Now().UTC().Truncate(time.Second), Version: version, Database: "postgresql"}
	// The kept-bill journals are copied before the database: a bill
	// charged between the two is then both in a journal copy and in the
	// snapshot's applied bills, and its retry after a restore charges
	// nothing, by its id. The other order would lose a bill charged, and
	// so dropped from its journal, after the snapshot.
	journals, err := backupBillJournals(store.DataDir, *out)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	m.Files = append(m.Files, journals...)
	if store.DatabaseURL == "" {
		m.Database = "sqlite"
		dst := filepath.Join(*out, sqlite.FileName)
		if err := sqlite.Snapshot(ctx, filepath.Join(store.DataDir, sqlite.FileName), dst); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		v, err := sqlite.Check(ctx, dst)
		if err != nil {
			return fmt.Errorf("backup: the copy: %w", err)
		}
		m.Migrations = v
		f, err := describeFile(*out, sqlite.FileName)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, f)
	}
	for _, name := range keyFiles {
		if _, err := os.Stat(filepath.Join(store.DataDir, name)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := copyDurably(filepath.Join(store.DataDir, name), filepath.Join(*out, name)); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		f, err := describeFile(*out, name)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, f)
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeDurably(filepath.Join(*out, backupManifestFile), append(raw, '\n')); err != nil {
		return err
	}
	if err := dirsync.Sync(*out); err != nil {
		return err
	}
	if m.Database == "postgresql" {
		fmt.Fprintln(io.err, "partnerapi: backup: the database is PostgreSQL's; back it up with pg_dump (the backup holds the data directory's keys)")
	}
	return json.NewEncoder(io.out).Encode(map[string]any{"backup": *out, "database": m.Database, "files": m.Files})
}

// runRestore puts a backup into a data directory that no serve holds:
// it checks every file against the manifest and the database with
// SQLite's integrity check first, then moves what the directory held
// aside into before-restore-<time>/ and the backup's files in, each
// synced, so an interrupted restore leaves either directory whole.
func runRestore(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	var store storeConfig
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	store.register(fs)
	from := fs.String("from", "", "backup directory written by partnerapi backup")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if *from == "" || fs.NArg() > 0 {
		return errors.New("usage: partnerapi restore --from BACKUP_DIR --data-dir DIR")
	}
	m, err := readBackupManifest(ctx, *from)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if m.Database == "sqlite" && store.DatabaseURL != "" {
		return errors.New("restore: the backup holds an SQLite database, and --database-url names PostgreSQL: restore into a data directory without --database-url")
	}
	release, err := lockDataDir(store.DataDir) // no serve may run on it meanwhile
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer release()
	aside := filepath.Join(store.DataDir, "before-restore-"+time.Now().UTC().Format("20060102T150405Z"))
	moved, err := moveAside(store.DataDir, aside, m)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, f := range m.Files {
		if isBackupBillJournal(f.Name) {
			continue
		}
		if err := copyDurably(filepath.Join(*from, f.Name), filepath.Join(store.DataDir, f.Name)); err != nil {
			return fmt.Errorf("restore: %w (the data directory's files before it are in %s)", err, aside)
		}
	}
	if err := restoreBillJournals(*from, store.DataDir, m); err != nil {
		return fmt.Errorf("restore: %w (the data directory's files before it are in %s)", err, aside)
	}
	if err := dirsync.Sync(store.DataDir); err != nil {
		return err
	}
	return json.NewEncoder(io.out).Encode(map[string]any{"restored": *from, "database": m.Database,
		"migrations": m.Migrations, "files": m.Files, "moved_aside": moved})
}

// readBackupManifest reads a backup's manifest and checks its files' digests
// and its database.
func readBackupManifest(ctx context.Context, dir string) (backupManifest, error) {
	var m backupManifest
	raw, err := os.ReadFile(filepath.Join(dir, backupManifestFile))
	if err != nil {
		return m, fmt.Errorf("%s is not a partnerapi backup: %w", dir, err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%s: %w", backupManifestFile, err)
	}
	if m.Database != "sqlite" && m.Database != "postgresql" {
		return m, fmt.Errorf("%s: unknown database %q", backupManifestFile, m.Database)
	}
	allowed := map[string]bool{sqlite.FileName: m.Database == "sqlite"}
	for _, k := range keyFiles {
		allowed[k] = true
	}
	hasDB := false
	for _, f := range m.Files {
		// Names come from a file anyone may have edited: only the
		// files a backup writes, so none lands outside the data dir.
		if !allowed[f.Name] && !isBackupBillJournal(f.Name) {
			return m, fmt.Errorf("%s: unexpected file %q", backupManifestFile, f.Name)
		}
		got, err := describeFile(dir, f.Name)
		if err != nil {
			return m, err
		}
		if got != f {
			return m, fmt.Errorf("%s does not match the manifest (%d bytes, sha256 %s; the manifest says %d, %s): the backup is damaged", f.Name, got.Bytes, got.SHA256, f.Bytes, f.SHA256)
		}
		hasDB = hasDB || f.Name == sqlite.FileName
	}
	if m.Database == "sqlite" {
		if !hasDB {
			return m, fmt.Errorf("%s: the database file is missing", backupManifestFile)
		}
		if _, err := sqlite.Check(ctx, filepath.Join(dir, sqlite.FileName)); err != nil {
			return m, err
		}
	}
	return m, nil
}

// moveAside moves the files a restore replaces (with the database its WAL
// and shared-memory files, which belong to the old database) from dir into
// aside, and returns their names.
func moveAside(dir, aside string, m backupManifest) ([]string, error) {
	names := []string{}
	for _, f := range m.Files {
		if isBackupBillJournal(f.Name) {
			continue // the journals there stay: their bills are owed too
		}
		names = append(names, f.Name)
		if f.Name == sqlite.FileName {
			names = append(names, sqlite.FileName+"-wal", sqlite.FileName+"-shm")
		}
	}
	var moved []string
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := os.MkdirAll(aside, 0o700); err != nil {
			return moved, err
		}
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(aside, name)); err != nil {
			return moved, err
		}
		moved = append(moved, filepath.Join(aside, name))
	}
	sort.Strings(moved)
	if len(moved) > 0 {
		if err := dirsync.Sync(aside); err != nil {
			return moved, err
		}
	}
	return moved, dirsync.Sync(dir)
}

// emptyDir makes dir, or accepts it when it exists and is empty, so a
// backup never mixes with another one's files.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("backup: %s is not empty; give a new directory", dir)
	}
	return nil
}

// describeFile is a file's size and SHA-256.
func describeFile(dir, name string) (backupFile, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return backupFile{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return backupFile{}, err
	}
	return backupFile{Name: name, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// copyDurably copies src to dst (mode 0600: keys and the database are
// secrets) through a temporary file synced and renamed into place.
func copyDurably(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// writeDurably writes data to path through a synced temporary file.
func writeDurably(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	f, err := os.Open(tmp)
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
