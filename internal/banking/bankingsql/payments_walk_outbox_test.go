package bankingsql

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// walkOf is the processing walk at one instant, as a fully signed create
// records it.
func walkOf(at time.Time) []banking.StatusChange {
	h := make([]banking.StatusChange, len(banking.ProcessingPath))
	for i, st := range banking.ProcessingPath {
		h[i] = banking.StatusChange{Status: st, At: at}
	}
	return h
}

// outboxDump lists org's outbox rows as text, sorted by document, with
// every column a delivery reads except the id.
func outboxDump(t *testing.T, db *sqldb.DB, org string) string {
	t.Helper()
	rows, err := db.R.Query(`SELECT external_id, status, comment, event_time, next_at, attempts, state, client_id, COALESCE(delivered_at, -1)
		FROM banking_payment_webhooks WHERE org_id = $1`, org)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ext, status, comment, state, client string
		var ev, next, attempts, delivered int64
		if err := rows.Scan(&ext, &status, &comment, &ev, &next, &attempts, &state, &client, &delivered); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s %q %d %d %d %s %q %d", ext, status, comment, ev, next, attempts, state, client, delivered))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// On both engines the outbox holds, once read, exactly the rows a create
// queued for its final statuses before migration 0008: for walked documents
// (now implied by the row) with the partner of every kind of channel, and
// for a document whose history ends elsewhere (still written by the create).
func TestWalkOutboxRows(t *testing.T) {
	at := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
	refused := []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: banking.StatusRefusedByBank, Comment: "нет", At: at.Add(time.Second)}}
	cases := []struct {
		id, channel string
		history     []banking.StatusChange
	}{
		{"w-api", banking.PartnerChannel("p1"), walkOf(at)},
		{"w-api-later", banking.PartnerChannel("p2"), walkOf(at.Add(time.Minute))},
		{"w-no-client", banking.PartnerChannel(""), walkOf(at)},
		{"w-other", "BANK", walkOf(at)},
		{"w-lower", "api:p3", walkOf(at)},
		{"refused", banking.PartnerChannel("p1"), refused},
		{"created", banking.PartnerChannel("p1"), refused[:1]},
	}
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		var want []string
		for _, c := range cases {
			sp := storedPayment("org1", c.id)
			sp.Channel = c.channel
			if err := s.CreatePayment(ctx, sp, c.history); err != nil {
				t.Fatal(err)
			}
			for _, h := range c.history {
				if banking.IsFinal(h.Status) {
					want = append(want, fmt.Sprintf("%s %s %q %d %d 0 PENDING %q -1", c.id, h.Status, h.Comment,
						h.At.UnixMicro(), h.At.UnixMicro(), banking.PartnerOfChannel(c.channel)))
				}
			}
		}
		sort.Strings(want)
		// The creates themselves wrote only the rows of the document that
		// did not walk.
		if n := countRows(t, db, "banking_payment_webhooks", "org1"); n != 1 {
			t.Fatalf("%d outbox rows written by the creates, want 1", n)
		}
		if err := s.materializeOutbox(ctx); err != nil {
			t.Fatal(err)
		}
		if got := outboxDump(t, db, "org1"); got != strings.Join(want, "\n") {
			t.Fatalf("outbox:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
		}
		// Reading again adds nothing.
		if err := s.materializeOutbox(ctx); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, db, "banking_payment_webhooks", "org1"); n != len(want) {
			t.Fatalf("%d rows after a second read, want %d", n, len(want))
		}
	})
}

// Every reader of the outbox sees a walked document's webhook without a
// separate step: the dispatcher (with a default URL; for a partner that set
// its own after the create; parking it for a partner without one and
// sending it once the partner sets one) and the partner's delivery list.
func TestWalkOutboxReaders(t *testing.T) {
	at := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		read func(ctx context.Context, s *PaymentStore) ([]string, error)
	}{
		{"dispatcher with a default URL", func(ctx context.Context, s *PaymentStore) ([]string, error) {
			evs, err := s.DueWebhooks(ctx, at.Add(time.Hour), 10, false)
			var ids []string
			for _, ev := range evs {
				ids = append(ids, ev.ExternalID+"@"+ev.ClientID)
			}
			return ids, err
		}},
		{"partner set a webhook after the create", func(ctx context.Context, s *PaymentStore) ([]string, error) {
			if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: "p1", URL: "https://p1.example/hook", UpdatedAt: at}); err != nil {
				return nil, err
			}
			evs, err := s.DueWebhooks(ctx, at.Add(time.Hour), 10, true)
			var ids []string
			for _, ev := range evs {
				ids = append(ids, ev.ExternalID+"@"+ev.ClientID)
			}
			return ids, err
		}},
		{"parked, then its partner set a webhook", func(ctx context.Context, s *PaymentStore) ([]string, error) {
			// Another partner's setting makes the dispatcher read (and
			// park p1's event); p1's own setting wakes it.
			if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: "p0", URL: "https://p0.example/hook", UpdatedAt: at}); err != nil {
				return nil, err
			}
			if evs, err := s.DueWebhooks(ctx, at.Add(time.Hour), 10, true); err != nil || len(evs) != 0 {
				return nil, fmt.Errorf("before p1's setting: %d events, %v", len(evs), err)
			}
			if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: "p1", URL: "https://p1.example/hook", UpdatedAt: at.Add(2 * time.Hour)}); err != nil {
				return nil, err
			}
			evs, err := s.DueWebhooks(ctx, at.Add(2*time.Hour), 10, true)
			var ids []string
			for _, ev := range evs {
				ids = append(ids, ev.ExternalID+"@"+ev.ClientID)
			}
			return ids, err
		}},
		{"partner's delivery list", func(ctx context.Context, s *PaymentStore) ([]string, error) {
			ds, err := s.PartnerDeliveries(ctx, "p1", 10)
			var ids []string
			for _, d := range ds {
				ids = append(ids, d.ExternalID+"@p1")
			}
			return ids, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				ctx := context.Background()
				s := NewPaymentStore(db)
				sp := storedPayment("org1", "walked")
				sp.Channel = banking.PartnerChannel("p1")
				if err := s.CreatePayment(ctx, sp, walkOf(at)); err != nil {
					t.Fatal(err)
				}
				got, err := c.read(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, ",") != "walked@p1" {
					t.Fatalf("read %v, want [walked@p1]", got)
				}
			})
		})
	}
}

// A long backlog is written in bounded transactions: each covers at most
// the limit of positions past the cursor and says whether more remain.
func TestWalkOutboxChunks(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
		for i := range 5 {
			if err := s.CreatePayment(ctx, storedPayment("org1", fmt.Sprintf("d%d", i)), walkOf(at)); err != nil {
				t.Fatal(err)
			}
		}
		for _, want := range []struct {
			rows int
			more bool
		}{{2, true}, {4, true}, {5, false}, {5, false}} {
			var more bool
			if err := db.Tx(ctx, func(tx *sql.Tx) error {
				var err error
				more, err = materializeOutboxTx(ctx, db.Dialect, tx, 2)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if n := countRows(t, db, "banking_payment_webhooks", "org1"); n != want.rows || more != want.more {
				t.Fatalf("%d rows, more %v; want %d, %v", n, more, want.rows, want.more)
			}
		}
	})
}

// Documents created before migration 0008 already have their outbox rows:
// the cursor starts past them, so reading the outbox adds none twice, while
// a walked document created after it gets its row.
func TestWalkOutboxMigration(t *testing.T) {
	upTo7 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_payments", areaMigrationsUpTo(t, "payments", 7))
	}
	storetest.Each(t, upTo7, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		// What the creates before 0008 wrote: the walked row and its webhook.
		if _, err := db.W.Exec(`INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at, walked_at)
			VALUES ('org1', 'old', 'PAY_DOC_RU', '{}', 1, 'IMPLEMENTED', '', 'SOLE', 'API:p1', 5, 5, 5)`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.W.Exec(`INSERT INTO banking_payment_webhooks (org_id, external_id, status, comment, event_time, next_at, client_id)
			VALUES ('org1', 'old', 'IMPLEMENTED', '', 5, 5, 'p1')`); err != nil {
			t.Fatal(err)
		}
		if err := MigratePayments(ctx, db); err != nil {
			t.Fatal(err)
		}
		s := NewPaymentStore(db)
		if n := countOutbox(t, s, "org1"); n != 1 {
			t.Fatalf("%d outbox rows after the migration, want 1", n)
		}
		if err := s.CreatePayment(ctx, storedPayment("org1", "new"), walkOf(time.Now())); err != nil {
			t.Fatal(err)
		}
		if n := countOutbox(t, s, "org1"); n != 2 {
			t.Fatalf("%d outbox rows after a new create, want 2", n)
		}
	})
}

// Creates committing while the outbox is materialized over and over (the
// dispatcher beside the API; on PostgreSQL with two committers) end with
// exactly one row each: none skipped by a cursor that passed them, none
// written twice.
func TestWalkOutboxConcurrentCreates(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		const writers, each = 8, 40
		stop := make(chan struct{})
		readErr := make(chan error, 1)
		go func() {
			var err error
			for err == nil {
				select {
				case <-stop:
					readErr <- nil
					return
				default:
				}
				err = s.materializeOutbox(ctx)
			}
			readErr <- err
		}()
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if err := s.CreatePayment(ctx, storedPayment("org1", fmt.Sprintf("w%d-%d", w, i)), walkOf(time.Now())); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		if err := <-readErr; err != nil {
			t.Fatal(err)
		}
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n := countOutbox(t, s, "org1"); n != writers*each {
			t.Fatalf("%d outbox rows, want %d", n, writers*each)
		}
		var distinct int
		if err := db.R.QueryRow(`SELECT COUNT(DISTINCT external_id) FROM banking_payment_webhooks WHERE org_id = 'org1'`).Scan(&distinct); err != nil || distinct != writers*each {
			t.Fatalf("%d documents with a row, want %d (%v)", distinct, writers*each, err)
		}
	})
}
