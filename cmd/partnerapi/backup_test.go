package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"partnerapi/internal/sqlite"
)

// runTool runs one partnerapi command and returns what it printed.
func runTool(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return out.String(), err
}

// tokenStatus is the status of the assistant's token exchange for an
// authorization key.
func tokenStatus(t *testing.T, base, key string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/api/v2/oauth", strings.NewReader(url.Values{"scope": {"GIGACHAT_API_PERS"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("RqUID", "72384bd5-0ca0-4cfd-9ac7-65d75258284c")
	req.Header.Set("Authorization", "Basic "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// A backup taken while serve writes holds every commit before it and the
// keys beside the database; restored into another data directory, a new
// serve answers the clients of before the backup and not those after it,
// and signs with the same keys.
func TestBackupWhileServingRestoresElsewhere(t *testing.T) {
	ts := startServer(t, "--only", "banking,assistant")
	before, err := createAssistantClient(t, ts.dataDir, "--scope", "GIGACHAT_API_PERS")
	if err != nil {
		t.Fatal(err)
	}
	// Writers go on during the backup: the snapshot must be whole
	// anyway (SQLite's integrity check runs on it in backup and restore).
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if _, err := createAssistantClient(t, ts.dataDir, "--scope", "GIGACHAT_API_PERS"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	backup := filepath.Join(t.TempDir(), "b")
	out, err := runTool(t, "backup", "--data-dir", ts.dataDir, "--out", backup)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	var printed struct {
		Database string       `json:"database"`
		Files    []backupFile `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &printed); err != nil || printed.Database != "sqlite" {
		t.Fatalf("backup printed %q: %v", out, err)
	}
	names := map[string]bool{}
	for _, f := range printed.Files {
		names[f.Name] = true
		st, err := os.Stat(filepath.Join(backup, f.Name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s in the backup: %v %v", f.Name, st.Mode(), err)
		}
	}
	for _, name := range append([]string{sqlite.FileName}, keyFiles...) {
		if _, err := os.Stat(filepath.Join(ts.dataDir, name)); err == nil && !names[name] {
			t.Errorf("the backup lacks %s: %v", name, printed.Files)
		}
	}
	if !names[sqlite.FileName] || !names[webhookKeyFile] {
		t.Fatalf("the backup lacks the database or the webhook key: %v", printed.Files)
	}
	after, err := createAssistantClient(t, ts.dataDir, "--scope", "GIGACHAT_API_PERS")
	if err != nil {
		t.Fatal(err)
	}

	// The running serve's data directory cannot be restored into.
	if _, err := runTool(t, "restore", "--from", backup, "--data-dir", ts.dataDir); err == nil || !strings.Contains(err.Error(), "in use by another partnerapi serve") {
		t.Fatalf("restore under a running serve: %v", err)
	}
	// Another data directory, holding a database of its own, can: what
	// it held is moved aside, not lost.
	target := t.TempDir()
	if _, err := createAssistantClient(t, target, "--scope", "GIGACHAT_API_PERS"); err != nil {
		t.Fatal(err)
	}
	out, err = runTool(t, "restore", "--from", backup, "--data-dir", target)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	var restored struct {
		Moved []string `json:"moved_aside"`
	}
	if err := json.Unmarshal([]byte(out), &restored); err != nil || len(restored.Moved) == 0 {
		t.Fatalf("restore printed %q: %v", out, err)
	}
	for _, p := range restored.Moved {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("moved aside but not there: %v", err)
		}
	}
	for name := range names {
		want, _ := os.ReadFile(filepath.Join(ts.dataDir, name))
		got, _ := os.ReadFile(filepath.Join(target, name))
		// Journals are restored under new names (backup_billjournal_test.go).
		if name != sqlite.FileName && !isBackupBillJournal(name) && !bytes.Equal(got, want) {
			t.Errorf("%s restored differs from the original", name)
		}
	}
	rs := startServer(t, "--only", "assistant", "--data-dir", target)
	if got := tokenStatus(t, rs.urls["assistant"], before["authorization_key"]); got != 200 {
		t.Errorf("a client created before the backup: token %d after the restore", got)
	}
	if got := tokenStatus(t, rs.urls["assistant"], after["authorization_key"]); got != 401 {
		t.Errorf("a client created after the backup: token %d after the restore, want 401", got)
	}
}

// A damaged or edited backup is refused before the data directory is
// touched.
func TestRestoreRefusesDamagedBackup(t *testing.T) {
	src := t.TempDir()
	if _, err := createAssistantClient(t, src, "--scope", "GIGACHAT_API_PERS"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, webhookKeyFile), []byte("a2V5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "b")
	if _, err := runTool(t, "backup", "--data-dir", src, "--out", good); err != nil {
		t.Fatal(err)
	}
	if _, err := runTool(t, "backup", "--data-dir", src, "--out", good); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("backup into a backup: %v", err)
	}
	editManifest := func(edit func(m *backupManifest)) func(dir string) {
		return func(dir string) {
			p := filepath.Join(dir, backupManifestFile)
			raw, _ := os.ReadFile(p)
			var m backupManifest
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			edit(&m)
			raw, _ = json.Marshal(m)
			os.WriteFile(p, raw, 0o600)
		}
	}
	for _, tc := range []struct {
		name   string
		damage func(dir string)
		want   string
	}{
		{"a key changed", func(dir string) { os.WriteFile(filepath.Join(dir, webhookKeyFile), []byte("b2V5\n"), 0o600) }, "damaged"},
		{"the database truncated", func(dir string) { os.Truncate(filepath.Join(dir, sqlite.FileName), 4096) }, "damaged"},
		{"no manifest", func(dir string) { os.Remove(filepath.Join(dir, backupManifestFile)) }, "not a partnerapi backup"},
		{"a file outside the data directory", editManifest(func(m *backupManifest) { m.Files[0].Name = "../escape" }), "unexpected file"},
		{"no database", editManifest(func(m *backupManifest) {
			for i, f := range m.Files {
				if f.Name == sqlite.FileName {
					m.Files = append(m.Files[:i], m.Files[i+1:]...)
					break
				}
			}
		}), "database file is missing"},
		{"database and manifest both rewritten", func(dir string) {
			os.WriteFile(filepath.Join(dir, sqlite.FileName), bytes.Repeat([]byte("x"), 8192), 0o600)
			f, _ := describeFile(dir, sqlite.FileName)
			editManifest(func(m *backupManifest) {
				for i := range m.Files {
					if m.Files[i].Name == sqlite.FileName {
						m.Files[i] = f
					}
				}
			})(dir)
		}, "not a database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "b")
			if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
				t.Fatal(err)
			}
			tc.damage(dir)
			target := t.TempDir()
			_, err := runTool(t, "restore", "--from", dir, "--data-dir", target)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("restore: %v, want an error saying %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(target); len(entries) != 0 {
				t.Errorf("the refused restore wrote %d entries into the data directory", len(entries))
			}
		})
	}
}

// With PostgreSQL the database is pg_dump's to back up: the backup holds
// the data directory's keys, which a restore puts back, and an SQLite
// backup is not restored into a PostgreSQL deployment.
func TestBackupWithPostgresHoldsTheKeys(t *testing.T) {
	src := t.TempDir()
	key := []byte("a2V5\n")
	if err := os.WriteFile(filepath.Join(src, webhookKeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "b")
	// The URL is never dialled: the database is not in the backup.
	out, err := runTool(t, "backup", "--data-dir", src, "--database-url", "postgres://nobody@127.0.0.1:1/none", "--out", backup)
	if err != nil || !strings.Contains(out, `"database":"postgresql"`) || strings.Contains(out, sqlite.FileName) {
		t.Fatalf("backup: %v %s", err, out)
	}
	target := t.TempDir()
	if _, err := runTool(t, "restore", "--from", backup, "--data-dir", target, "--database-url", "postgres://nobody@127.0.0.1:1/none"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(target, webhookKeyFile)); !bytes.Equal(got, key) {
		t.Fatalf("restored key %q", got)
	}
	if _, err := os.Stat(filepath.Join(target, sqlite.FileName)); err == nil {
		t.Fatal("a PostgreSQL backup restored an SQLite database")
	}

	lite := filepath.Join(t.TempDir(), "b")
	if _, err := createAssistantClient(t, src, "--scope", "GIGACHAT_API_PERS"); err != nil {
		t.Fatal(err)
	}
	if _, err := runTool(t, "backup", "--data-dir", src, "--out", lite); err != nil {
		t.Fatal(err)
	}
	if _, err := runTool(t, "restore", "--from", lite, "--data-dir", t.TempDir(), "--database-url", "postgres://nobody@127.0.0.1:1/none"); err == nil || !strings.Contains(err.Error(), "SQLite") {
		t.Fatalf("an SQLite backup into a PostgreSQL deployment: %v", err)
	}
}

// FuzzBackupManifest holds restore's reading of backup.json, a file anyone
// may have edited, to what the copy relies on: it never panics, and a
// manifest it accepts names only files a backup writes, so no restore
// writes outside the data directory.
func FuzzBackupManifest(f *testing.F) {
	f.Add([]byte(`{"database":"postgresql","files":[{"name":"banking-webhook.key","bytes":0,"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}]}`))
	f.Add([]byte(`{"database":"sqlite","files":[{"name":"../x"}]}`))
	f.Add([]byte(`{"database":"postgresql","files":[]}`))
	f.Add([]byte(`{"database":"postgresql","files":[{"name":"assistant-bills/bills-abcdefghijklmnop.journal","bytes":0,"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}]}`))
	f.Add([]byte(`{"database":"postgresql","files":[{"name":"assistant-bills/../x"},{"name":"other/x"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, backupManifestFile), raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, webhookKeyFile), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		// An empty journal, so a manifest naming it can be accepted.
		if err := os.Mkdir(filepath.Join(dir, billJournalDir), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, billJournalDir, "bills-abcdefghijklmnop.journal"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := readBackupManifest(context.Background(), dir)
		if err != nil {
			return
		}
		for _, file := range m.Files {
			// A journal's name is its directory, one slash, and a plain
			// name of a journal's form; every other name has no
			// separator at all.
			name, journal := strings.CutPrefix(file.Name, billJournalDir+"/")
			if journal && (!strings.HasPrefix(name, "bills-") || !strings.HasSuffix(name, ".journal") || name == ".." || !filepath.IsLocal(name)) ||
				!journal && name != webhookKeyFile && name != sqlite.FileName && !strings.HasPrefix(name, "banking-") ||
				strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") {
				t.Fatalf("accepted a manifest naming %q", file.Name)
			}
		}
	})
}
