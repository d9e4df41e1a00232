package bankingsql

import (
	"context"
	"errors"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Partners' webhook settings and delivery logs: upsert, one partner never
// sees another's, and the outbox hands out events with their partner.
func TestPartnerWebhookStoreConformance(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		if _, err := s.GetPartnerWebhook(ctx, "p1"); !errors.Is(err, banking.ErrNotFound) {
			t.Fatalf("missing setting: %v", err)
		}
		for _, w := range []banking.PartnerWebhook{
			{ClientID: "p1", URL: "https://one.example/hook", SealedSecret: "v1:aaa", UpdatedAt: at},
			{ClientID: "p1", URL: "https://one.example/hook2", SealedSecret: "v1:bbb", UpdatedAt: at.Add(time.Second)},
			{ClientID: "p2", URL: "https://two.example/hook", SealedSecret: "v1:ccc", UpdatedAt: at},
		} {
			if err := s.SetPartnerWebhook(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.GetPartnerWebhook(ctx, "p1")
		if err != nil || got.URL != "https://one.example/hook2" || got.SealedSecret != "v1:bbb" || !got.UpdatedAt.Equal(at.Add(time.Second)) {
			t.Fatalf("p1 after update: %+v %v", got, err)
		}

		// Documents of three partners reach a final status; p3 has no setting.
		mk := func(id, partner string) {
			sp := storedPayment("org1", id)
			sp.Channel, sp.Status = banking.PartnerChannel(partner), banking.StatusImplemented
			if err := s.CreatePayment(ctx, sp, []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: banking.StatusImplemented, At: at}}); err != nil {
				t.Fatal(err)
			}
		}
		mk("a1000000-0000-4000-8000-000000000001", "p1")
		mk("a1000000-0000-4000-8000-000000000002", "p2")
		mk("a1000000-0000-4000-8000-000000000003", "p1")
		mk("a1000000-0000-4000-8000-000000000004", "p3")

		// Without a deployment default only configured partners' events are
		// claimed; p3's waits unclaimed.
		due, err := s.DueWebhooks(ctx, at, 10, true)
		if err != nil || len(due) != 3 {
			t.Fatalf("configured only: %d %v", len(due), err)
		}
		partners := map[string]int{}
		for _, ev := range due {
			partners[ev.ClientID]++
		}
		if partners["p1"] != 2 || partners["p2"] != 1 {
			t.Fatalf("partners %v", partners)
		}
		// p3's event is parked, not re-read on every tick...
		if ds, err := s.PartnerDeliveries(ctx, "p3", 10); err != nil || len(ds) != 1 || ds[0].State != "PARKED" {
			t.Fatalf("p3 parked: %+v %v", ds, err)
		}
		if due, err := s.DueWebhooks(ctx, at.Add(30*time.Second), 10, true); err != nil || len(due) != 0 {
			t.Fatalf("parked event re-read: %+v %v", due, err)
		}
		// ...until p3 sets a webhook, which wakes it at once.
		if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: "p3", URL: "https://three.example/", SealedSecret: "v1:d", UpdatedAt: at.Add(30 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		due, err = s.DueWebhooks(ctx, at.Add(30*time.Second), 10, true)
		if err != nil || len(due) != 1 || due[0].ClientID != "p3" {
			t.Fatalf("woken: %+v %v", due, err)
		}
		// One attempt on a p1 event shows in p1's log only.
		ds, err := s.PartnerDeliveries(ctx, "p1", 10)
		if err != nil || len(ds) != 2 || ds[0].ExternalID != "a1000000-0000-4000-8000-000000000003" {
			t.Fatalf("p1 deliveries: %+v %v", ds, err)
		}
		p1ev := ds[0].ID
		if err := s.RecordWebhookAttempt(ctx, p1ev, banking.WebhookAttempt{Attempt: 1, At: at, HTTPStatus: 503, Format: banking.WebhookFormatJSON}, false, at.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordWebhookAttempt(ctx, p1ev, banking.WebhookAttempt{Attempt: 2, At: at.Add(time.Second), HTTPStatus: 204, Format: banking.WebhookFormatJOSE}, true, time.Time{}); err != nil {
			t.Fatal(err)
		}
		ds, err = s.PartnerDeliveries(ctx, "p1", 10)
		if err != nil || len(ds) != 2 {
			t.Fatal(err)
		}
		d := ds[0]
		if d.State != "DELIVERED" || d.Attempts != 2 || !d.DeliveredAt.Equal(at.Add(time.Second)) || !d.NextAt.IsZero() ||
			len(d.Log) != 2 || d.Log[0].HTTPStatus != 503 || d.Log[1].HTTPStatus != 204 || d.BankStatus != banking.StatusImplemented ||
			d.Log[0].Format != banking.WebhookFormatJSON || d.Log[1].Format != banking.WebhookFormatJOSE {
			t.Fatalf("delivered entry %+v", d)
		}
		if len(ds[1].Log) != 0 || ds[1].State != "PENDING" {
			t.Fatalf("untouched entry %+v", ds[1])
		}
		if ds, err := s.PartnerDeliveries(ctx, "p1", 1); err != nil || len(ds) != 1 {
			t.Fatalf("limit: %d %v", len(ds), err)
		}
		ds, err = s.PartnerDeliveries(ctx, "p2", 10)
		if err != nil || len(ds) != 1 || ds[0].ExternalID != "a1000000-0000-4000-8000-000000000002" || len(ds[0].Log) != 0 {
			t.Fatalf("p2 deliveries: %+v %v", ds, err)
		}
		if ds, err := s.PartnerDeliveries(ctx, "nobody", 10); err != nil || len(ds) != 0 {
			t.Fatalf("unknown partner: %+v %v", ds, err)
		}
	})
}

// The body format is stored with the setting, read back as set, and a
// setting written without one (as every setting before the column was)
// reads as json.
func TestPartnerWebhookFormatStore(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		for _, tc := range []struct {
			name, format, want string
		}{
			{name: "no format", format: "", want: banking.WebhookFormatJSON},
			{name: "jose", format: banking.WebhookFormatJOSE, want: banking.WebhookFormatJOSE},
			{name: "json again", format: banking.WebhookFormatJSON, want: banking.WebhookFormatJSON},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: "p1", URL: "https://one.example/hook", SealedSecret: "v1:a",
					Format: tc.format, UpdatedAt: at}); err != nil {
					t.Fatal(err)
				}
				got, err := s.GetPartnerWebhook(ctx, "p1")
				if err != nil || got.Format != tc.want {
					t.Fatalf("get: %+v %v", got, err)
				}
				all, err := s.PartnerWebhooks(ctx)
				if err != nil || len(all) != 1 || all[0].Format != tc.want {
					t.Fatalf("list: %+v %v", all, err)
				}
			})
		}
	})
}

// TestPartnerWebhookDeleteStore: DeletePartnerWebhook removes the one
// partner's setting, committed (a store opened anew on the database finds
// none), reports whether there was one, and leaves the others'.
func TestPartnerWebhookDeleteStore(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
		for _, id := range []string{"p1", "p2"} {
			if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: id, URL: "https://" + id + ".example/hook", SealedSecret: "v1:x", UpdatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		for i, want := range []bool{true, false} {
			if found, err := s.DeletePartnerWebhook(ctx, "p1"); err != nil || found != want {
				t.Fatalf("delete %d: %v %v, want %v", i+1, found, err, want)
			}
		}
		if _, err := NewPaymentStore(db).GetPartnerWebhook(ctx, "p1"); !errors.Is(err, banking.ErrNotFound) {
			t.Fatalf("p1 after delete: %v", err)
		}
		if got, err := NewPaymentStore(db).GetPartnerWebhook(ctx, "p2"); err != nil || got.URL != "https://p2.example/hook" {
			t.Fatalf("p2 after p1's delete: %+v %v", got, err)
		}
	})
}
