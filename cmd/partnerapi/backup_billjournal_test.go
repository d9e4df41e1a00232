package main

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/billjournal"
)

// keepBill journals a bill of tokens for a client in the data directory,
// as a serve does when the database cannot take it, and returns the
// journal, still open and locked as a live serve holds it.
func keepBill(t *testing.T, dataDir, clientID string, tokens int64) *billjournal.Journal {
	t.Helper()
	j, err := billjournal.Open(filepath.Join(dataDir, billJournalDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Keep(assistant.Bill{ID: rand.Text(), ClientID: clientID, Model: "stories260K", Prepaid: true, Tokens: tokens,
		MadeAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return j
}

// prepaidBalance is a client's one prepaid balance, as the API answers it.
func prepaidBalance(t *testing.T, base, tok string) int64 {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/v1/balance", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b struct {
		Balance []struct {
			Value int64 `json:"value"`
		} `json:"balance"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil || len(b.Balance) != 1 {
		t.Fatalf("balance: %d %v %+v", resp.StatusCode, err, b)
	}
	return b.Balance[0].Value
}

// A bill kept in a live serve's journal (locked, read all the same) is in
// the backup; restored into another data directory, beside a journal of
// that directory's own, the next serve charges both bills, each once.
func TestBackupCarriesKeptBillsToTheRestoredServe(t *testing.T) {
	src := t.TempDir()
	creds, err := createAssistantClient(t, src, "--scope", "ASSISTANT_API_PERS", "--balance", "stories260K=1000")
	if err != nil {
		t.Fatal(err)
	}
	live := keepBill(t, src, creds["client_id"], 17)
	backup := filepath.Join(t.TempDir(), "b")
	out, err := runTool(t, "backup", "--data-dir", src, "--out", backup)
	live.Close()
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if !strings.Contains(out, backupBillJournalPrefix+"bills-") {
		t.Fatalf("the backup lists no bill journal: %s", out)
	}

	// The target's own journal holds a bill for the same client (the
	// restored database has it), which the restore must not replace.
	target := t.TempDir()
	keepBill(t, target, creds["client_id"], 5).Close()
	if _, err := runTool(t, "restore", "--from", backup, "--data-dir", target); err != nil {
		t.Fatalf("restore: %v", err)
	}
	entries, err := os.ReadDir(filepath.Join(target, billJournalDir))
	if err != nil || len(entries) != 2 {
		t.Fatalf("the restored journal directory holds %d files, want the target's and the backup's: %v", len(entries), err)
	}

	ts := startServer(t, "--data-dir", target, "--models-dir", t.TempDir(), "--only", "assistant")
	base := ts.urls["assistant"]
	if got := engineMetric(t, base, "partnerapi_assistant_kept_bills"); got != 2 {
		t.Fatalf("partnerapi_assistant_kept_bills = %v at start, want the 2 journaled", got)
	}
	tok := assistantToken(t, base, "ASSISTANT_API_PERS", creds["authorization_key"])
	deadline := time.Now().Add(30 * time.Second)
	for engineMetric(t, base, "partnerapi_assistant_kept_bills") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("partnerapi_assistant_kept_bills is not 0: the restored bills were not charged")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := prepaidBalance(t, base, tok); got != 1000-17-5 {
		t.Fatalf("balance %d after the kept bills are charged, want %d: each bill charged once", got, 1000-17-5)
	}
}

// A manifest naming a journal anywhere but as a journal inside the
// journal directory is refused, before the data directory is touched.
func TestRestoreRefusesBillJournalNamesOutsideTheirDirectory(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, webhookKeyFile), []byte("a2V5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keepBill(t, src, "client", 3).Close()
	good := filepath.Join(t.TempDir(), "b")
	if _, err := runTool(t, "backup", "--data-dir", src, "--database-url", "postgres://nobody@127.0.0.1:1/none", "--out", good); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		billJournalDir + "/../x",
		billJournalDir + "/../bills-aaaaaaaaaaaaaaaa.journal",
		"other/x",
		"other/bills-aaaaaaaaaaaaaaaa.journal",
		billJournalDir + "/sub/bills-aaaaaaaaaaaaaaaa.journal",
		billJournalDir + `\bills-aaaaaaaaaaaaaaaa.journal`,
		billJournalDir + "/bills-aaaaaaaaaaaaaaaa.journal.tmp",
		billJournalDir + "/bills-AAAAAAAAAAAAAAAA.journal",
		"bills-aaaaaaaaaaaaaaaa.journal",
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "b")
			if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, backupManifestFile)
			raw, _ := os.ReadFile(p)
			var m backupManifest
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			found := false
			for i := range m.Files {
				if isBackupBillJournal(m.Files[i].Name) {
					m.Files[i].Name, found = name, true
				}
			}
			if !found {
				t.Fatalf("the backup lists no bill journal: %+v", m.Files)
			}
			raw, _ = json.Marshal(m)
			os.WriteFile(p, raw, 0o600)
			target := t.TempDir()
			_, err := runTool(t, "restore", "--from", dir, "--data-dir", target, "--database-url", "postgres://nobody@127.0.0.1:1/none")
			if err == nil || !strings.Contains(err.Error(), "unexpected file") {
				t.Fatalf("restore: %v, want an unexpected file", err)
			}
			if entries, _ := os.ReadDir(target); len(entries) != 0 {
				t.Errorf("the refused restore wrote %d entries into the data directory", len(entries))
			}
		})
	}
}
