package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/background"
	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// The webhook purger serve runs with --banking-webhook-retention: it
// deletes the events finished longer ago than the retention, except the
// outbox's newest row, says how many in one log line and records its
// success on /metrics; a retention the events have not reached deletes
// nothing.
func TestWebhookPurgerDeletesFinishedEvents(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keep   time.Duration
		purged int
	}{
		{name: "past the retention", keep: 24 * time.Hour, purged: 2},
		{name: "within the retention", keep: 72 * time.Hour, purged: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.SQLite(t)
			if err := bankingsql.MigratePayments(ctx, db); err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
			store := bankingsql.NewPaymentStore(db).WithClock(func() time.Time { return at })
			for i := range 3 {
				sp := &banking.StoredPayment{OrgID: "org1", Kind: banking.KindPayDoc, Kopecks: 100, Status: banking.StatusImplemented,
					Channel: banking.PartnerChannel("pa"), CreatedAt: at, UpdatedAt: at,
					Doc: banking.Payment{ExternalID: fmt.Sprintf("c0000000-0000-4000-8000-%012d", i), Amount: "1", Date: "2026-11-22", Purpose: "Оплата", PayerAccount: "40702810538833411733"}}
				if err := store.CreatePayment(ctx, sp, []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: banking.StatusImplemented, At: at}}); err != nil {
					t.Fatal(err)
				}
			}
			evs, err := store.DueWebhooks(ctx, at, 10, false)
			if err != nil || len(evs) != 3 {
				t.Fatalf("claimed %d %v", len(evs), err)
			}
			for _, ev := range evs {
				if err := store.RecordWebhookAttempt(ctx, ev.ID, banking.WebhookAttempt{Attempt: 1, At: at, HTTPStatus: 204}, true, time.Time{}); err != nil {
					t.Fatal(err)
				}
			}
			logs := &testenv.LogBuffer{}
			reg := prometheus.NewRegistry()
			health := background.NewMetrics(reg).Worker("banking-webhook-purge", slog.New(slog.NewTextHandler(logs, nil)))
			p := webhookPurger(&banking.WebhookRetention{Outbox: store, Keep: tc.keep}, health, 20*time.Millisecond, time.Minute)
			served := make(chan error, 1)
			go func() { served <- p.serve() }()
			count := func() int {
				var n int
				if err := db.R.QueryRow(`SELECT COUNT(*) FROM banking_payment_webhooks`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			eventually(t, 5*time.Second, "a successful run", func() bool {
				mfs, err := reg.Gather()
				for _, mf := range mfs {
					if mf.GetName() == "partnerapi_background_last_success_timestamp_seconds" {
						return err == nil && len(mf.GetMetric()) == 1
					}
				}
				return false
			})
			time.Sleep(100 * time.Millisecond) // a few more runs
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := p.stop(sctx); err != nil {
				t.Fatal(err)
			}
			if err := <-served; err != nil {
				t.Fatal(err)
			}
			if n := count(); n != 3-tc.purged {
				t.Fatalf("%d events left, want %d", n, 3-tc.purged)
			}
			lines := strings.Count(logs.String(), "purged finished webhook events")
			if tc.purged > 0 && (lines != 1 || !strings.Contains(logs.String(), fmt.Sprintf("count=%d", tc.purged))) {
				t.Fatalf("logs:\n%s\nwant one line of %d purged", logs.String(), tc.purged)
			}
			if tc.purged == 0 && lines != 0 {
				t.Fatalf("logs:\n%s\nwant no purge line", logs.String())
			}
		})
	}
}
