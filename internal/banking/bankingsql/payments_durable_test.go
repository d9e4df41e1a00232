package bankingsql

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
	"partnerapi/internal/storetest"
)

func signedHistory(at time.Time) []banking.StatusChange {
	h := make([]banking.StatusChange, len(banking.ProcessingPath))
	for i, st := range banking.ProcessingPath {
		h[i] = banking.StatusChange{Status: st, At: at.Add(time.Duration(i) * time.Microsecond)}
	}
	return h
}

func countRows(t *testing.T, db *sqldb.DB, table, org string) int {
	t.Helper()
	var n int
	if err := db.R.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM `+table+` WHERE org_id = $1`, org).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// countOutbox is the number of org's outbox rows once the walked
// documents' implied rows are written (payments_walk_outbox.go), as every
// reader of the outbox sees them.
func countOutbox(t *testing.T, s *PaymentStore, org string) int {
	t.Helper()
	if err := s.materializeOutbox(context.Background()); err != nil {
		t.Fatal(err)
	}
	return countRows(t, s.db, "banking_payment_webhooks", org)
}

// countMoves is the number of status moves recorded for org's documents:
// history rows plus the processing path of every document whose walk is its
// walked_at (migration 0006).
func countMoves(t *testing.T, db *sqldb.DB, org string) int {
	t.Helper()
	var walked int
	if err := db.R.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM banking_payments WHERE org_id = $1 AND walked_at IS NOT NULL`, org).Scan(&walked); err != nil {
		t.Fatal(err)
	}
	return walked*len(banking.ProcessingPath) + countRows(t, db, "banking_payment_history", org)
}

// Concurrent creates that share batches: ids that already exist and ids
// sent twice fail alone with WORKFLOW_FAULT, every other document commits
// with exactly its own history and outbox rows.
func TestPaymentStoreBatchOutcomes(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		for i := range 20 {
			if err := s.CreatePayment(ctx, storedPayment("org1", fmt.Sprintf("old-%02d", i)), signedHistory(at)); err != nil {
				t.Fatal(err)
			}
		}
		type call struct {
			id      string
			wantDup bool
		}
		var calls []call
		for i := range 20 {
			calls = append(calls, call{fmt.Sprintf("old-%02d", i), true})
		}
		for i := range 100 {
			calls = append(calls, call{fmt.Sprintf("new-%03d", i), false})
		}
		var wg sync.WaitGroup
		errs := make([]error, 2*len(calls))
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.CreatePayment(ctx, storedPayment("org1", calls[i/2].id), signedHistory(at))
			}()
		}
		wg.Wait()
		for i := 0; i < len(errs); i += 2 {
			c := calls[i/2]
			a, b := banking.KindOf(errs[i]), banking.KindOf(errs[i+1])
			switch {
			case errs[i] != nil && a != banking.KindWorkflow, errs[i+1] != nil && b != banking.KindWorkflow:
				t.Fatalf("%s: %v / %v", c.id, errs[i], errs[i+1])
			case c.wantDup && (errs[i] == nil || errs[i+1] == nil):
				t.Fatalf("%s existed but was created again", c.id)
			case !c.wantDup && (errs[i] == nil) == (errs[i+1] == nil):
				t.Fatalf("%s sent twice: want exactly one created, got %v / %v", c.id, errs[i], errs[i+1])
			}
		}
		if n := countRows(t, db, "banking_payments", "org1"); n != 120 {
			t.Fatalf("%d documents, want 120", n)
		}
		if n := countMoves(t, db, "org1"); n != 120*len(banking.ProcessingPath) {
			t.Fatalf("%d status moves, want %d", n, 120*len(banking.ProcessingPath))
		}
		if n := countRows(t, db, "banking_payment_webhooks", "org1"); n != 120 {
			t.Fatalf("%d outbox rows, want 120", n)
		}
		h, err := s.PaymentHistory(ctx, "org1", "new-042")
		if err != nil || len(h) != len(banking.ProcessingPath) || h[len(h)-1].Status != banking.StatusImplemented {
			t.Fatalf("history of new-042: %+v %v", h, err)
		}
	})
}

// Every acknowledged create survives closing and reopening the SQLite file.
func TestPaymentStoreDurableAfterReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := MigratePayments(ctx, db); err != nil {
		t.Fatal(err)
	}
	s := NewPaymentStore(db)
	var wg sync.WaitGroup
	errs := make([]error, 300)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.CreatePayment(ctx, storedPayment("org1", fmt.Sprintf("doc-%03d", i)), signedHistory(time.Now()))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("doc-%03d: %v", i, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s = NewPaymentStore(db)
	for i := range errs {
		sp, err := s.GetPayment(ctx, "org1", fmt.Sprintf("doc-%03d", i))
		if err != nil || sp.Doc.Amount != "1500.50" {
			t.Fatalf("doc-%03d after reopen: %+v %v", i, sp, err)
		}
	}
	if n := countMoves(t, db, "org1"); n != len(errs)*len(banking.ProcessingPath) {
		t.Fatalf("%d status moves after reopen", n)
	}
}

// crashChildEnv makes the test binary a writer that prints each
// acknowledged externalId until it is killed.
const crashChildEnv = "BANKINGSQL_CRASH_CHILD_DIR"

// A writer killed with SIGKILL in the middle of the load: every id it
// printed as acknowledged is in the store when the file is reopened. (The
// kernel keeps the page cache across a process kill, so this checks that
// nothing is acknowledged before its commit; fsync against power loss is
// SQLite's synchronous=FULL.)
func TestPaymentStoreCrashKeepsAcknowledged(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a writer process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPaymentStoreCrashKeepsAcknowledged$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(acked) < 400 {
		if id, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
			acked = append(acked, id)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if len(acked) == 0 {
		t.Fatal("the writer acknowledged nothing")
	}
	db, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := NewPaymentStore(db)
	for _, id := range acked {
		if _, err := s.GetPayment(context.Background(), "org1", id); err != nil {
			t.Fatalf("acknowledged %s lost after the kill: %v", id, err)
		}
	}
	t.Logf("%d acknowledged documents all present after SIGKILL", len(acked))
}

// crashChild writes documents from 32 goroutines forever, printing each id
// once CreatePayment returned nil.
func crashChild(dir string) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dir)
	if err == nil {
		err = MigratePayments(ctx, db)
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s := NewPaymentStore(db)
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	for g := range 32 {
		go func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("crash-%02d-%06d", g, i)
				if err := s.CreatePayment(ctx, storedPayment("org1", id), signedHistory(time.Now())); err != nil {
					continue
				}
				mu.Lock()
				fmt.Fprintln(w, "acked", id)
				_ = w.Flush()
				mu.Unlock()
			}
		}()
	}
	select {}
}
