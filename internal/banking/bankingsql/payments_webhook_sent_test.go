package bankingsql

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// outboxIDs is what the dispatcher and the partner's delivery log read as
// the events' externalIds, each list sorted.
func outboxIDs(t *testing.T, s *PaymentStore, clientID string, now time.Time) (due, listed []string) {
	t.Helper()
	ctx := context.Background()
	evs, err := s.DueWebhooks(ctx, now, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		due = append(due, ev.ExternalID)
	}
	ds, err := s.PartnerDeliveries(ctx, clientID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		listed = append(listed, d.ExternalID)
	}
	sort.Strings(due)
	sort.Strings(listed)
	return due, listed
}

// A final status's event carries the externalId exactly as the partner sent
// it, whichever writer queued it — the create's batch writer, advance, or
// the materializer of a walked document — while its row stays keyed by the
// folded id. A partner writing lower case pays nothing: the row keeps no
// second copy.
func TestWebhookExternalIDAsSent(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name, id string
		// queue creates the document id and brings it to a final status.
		queue func(ctx context.Context, s *PaymentStore, sp *banking.StoredPayment) error
	}{
		{"walked at creation", "0A000000-0000-4000-8000-0000000000AB", func(ctx context.Context, s *PaymentStore, sp *banking.StoredPayment) error {
			return s.CreatePayment(ctx, sp, walkOf(at))
		}},
		{"processed at creation", "0B000000-0000-4000-8000-0000000000AB", func(ctx context.Context, s *PaymentStore, sp *banking.StoredPayment) error {
			return s.CreateProcessed(ctx, sp, at)
		}},
		{"refused at creation", "0C000000-0000-4000-8000-0000000000ab", func(ctx context.Context, s *PaymentStore, sp *banking.StoredPayment) error {
			return s.CreatePayment(ctx, sp, []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: banking.StatusRefusedByBank, At: at}})
		}},
		{"signed later by the folded id", "0D000000-0000-4000-8000-0000000000AB", func(ctx context.Context, s *PaymentStore, sp *banking.StoredPayment) error {
			if err := s.CreatePayment(ctx, sp, []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); err != nil {
				return err
			}
			_, err := s.AdvancePayment(ctx, sp.OrgID, strings.ToLower(sp.Doc.ExternalID), banking.StatusCreated, []banking.SignatureRole{banking.RoleSoleAuthority},
				walkOf(at.Add(time.Second)))
			return err
		}},
		{"lower case", "0e000000-0000-4000-8000-0000000000ab", func(ctx context.Context, s *PaymentStore, sp *banking.StoredPayment) error {
			return s.CreatePayment(ctx, sp, walkOf(at))
		}},
	}
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		var want []string
		for _, c := range cases {
			sp := storedPayment("org1", c.id)
			sp.Channel = banking.PartnerChannel("p1")
			if err := c.queue(ctx, s, sp); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			want = append(want, c.id)
		}
		sort.Strings(want)
		due, listed := outboxIDs(t, s, "p1", at.Add(time.Hour))
		if strings.Join(due, ",") != strings.Join(want, ",") || strings.Join(listed, ",") != strings.Join(want, ",") {
			t.Fatalf("dispatched %v, listed %v; want %v", due, listed, want)
		}
		for _, c := range cases {
			var key string
			var sent sql.NullString
			if err := db.R.QueryRow(`SELECT external_id, sent_external_id FROM banking_payment_webhooks WHERE org_id = 'org1' AND external_id = $1`,
				strings.ToLower(c.id)).Scan(&key, &sent); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if sent.Valid != (c.id != key) || sent.Valid && sent.String != c.id {
				t.Errorf("%s: row keyed %s keeps %+v", c.name, key, sent)
			}
		}
	})
}

// Migration 0012 on an outbox filled between the folding of keys and the
// column: an event queued under the folded key of an upper-case document
// (walked, so materialized after the migration, or queued by the create)
// is dispatched and listed with the partner's text; an event stored before
// keys were folded, under the partner's mixed-case text, keeps it; an
// event whose document is gone keeps its key.
func TestWebhookSentIDMigration(t *testing.T) {
	upTo11 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_payments", areaMigrationsUpTo(t, "payments", 11))
	}
	const (
		queued = "1A000000-0000-4000-8000-0000000000AB" // keyed folded, outbox row written
		walked = "1B000000-0000-4000-8000-0000000000AB" // keyed folded, walked, no outbox row yet
		legacy = "1C000000-0000-4000-8000-0000000000Ab" // keyed as sent, before folding
		gone   = "1d000000-0000-4000-8000-0000000000ab" // outbox row without a document
	)
	storetest.Each(t, upTo11, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		// The cursor of the walk outbox starts past documents written before
		// 0008's migration; the walked document here comes after it.
		for _, d := range []struct {
			key, text string
			walked    any
		}{{strings.ToLower(queued), queued, nil}, {strings.ToLower(walked), walked, int64(5)}, {legacy, legacy, nil}} {
			if _, err := db.W.Exec(`INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at, walked_at)
				VALUES ('org1', $1, 'PAY_DOC_RU', $2, 1, 'IMPLEMENTED', '', 'SOLE', 'API:p1', 5, 5, $3)`, d.key, `{"externalId":"`+d.text+`","amount":"0.01"}`, d.walked); err != nil {
				t.Fatal(err)
			}
		}
		for _, key := range []string{strings.ToLower(queued), legacy, gone} {
			if _, err := db.W.Exec(`INSERT INTO banking_payment_webhooks (org_id, external_id, status, comment, event_time, next_at, client_id)
				VALUES ('org1', $1, 'IMPLEMENTED', '', 5, 5, 'p1')`, key); err != nil {
				t.Fatal(err)
			}
		}
		if err := MigratePayments(ctx, db); err != nil {
			t.Fatal(err)
		}
		s := NewPaymentStore(db)
		want := []string{gone, queued, walked, legacy}
		sort.Strings(want)
		due, listed := outboxIDs(t, s, "p1", time.UnixMicro(10))
		if strings.Join(due, ",") != strings.Join(want, ",") || strings.Join(listed, ",") != strings.Join(want, ",") {
			t.Fatalf("dispatched %v, listed %v; want %v", due, listed, want)
		}
	})
}
