package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// outboxRow is what the pause may change of an outbox row, and what it
// must not.
type outboxRow struct {
	next     time.Time
	attempts int
	state    string
}

func outboxRows(t *testing.T, db *sqldb.DB, partner string) map[int64]outboxRow {
	t.Helper()
	rows, err := db.R.QueryContext(context.Background(), `SELECT id, next_at, attempts, state FROM banking_payment_webhooks WHERE client_id = $1`, partner)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]outboxRow{}
	for rows.Next() {
		var id, next int64
		var r outboxRow
		if err := rows.Scan(&id, &next, &r.attempts, &r.state); err != nil {
			t.Fatal(err)
		}
		r.next = time.UnixMicro(next).UTC()
		out[id] = r
	}
	return out
}

// The store's side of a partner's pause, on both databases: the pause
// moves the partner's pending events due before its end, and only those,
// to its end without an attempt; it doubles per failure outside a pause,
// not per failure during one; claims skip the paused partner, new events
// included; a delivery resets it; a release frees only the claim's own
// lease; a new setting of the partner ends its pause.
func TestWebhookPauseStore(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		now := at.Add(time.Hour)
		queueEvents(t, s, "pa", 4, at)
		queueEvents(t, s, "pb", 2, at)
		// pa has a webhook of its own, its pause its own; pb's events go
		// to the deployment default.
		if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: "pa", URL: "https://pa.example/hook", SealedSecret: "x", UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		// One of pa's events retries after the pause would end: it stays.
		var late int64
		for id := range outboxRows(t, db, "pa") {
			late = max(late, id)
		}
		if _, err := db.W.ExecContext(ctx, `UPDATE banking_payment_webhooks SET next_at = $1, attempts = 3 WHERE id = $2`, micros(now.Add(time.Hour)), late); err != nil {
			t.Fatal(err)
		}
		before := outboxRows(t, db, "pa")

		steps := []struct {
			name      string
			at        time.Duration // after now
			wantUntil time.Duration // after now
		}{
			{"first failure", 0, 5 * time.Second},
			{"failure during the pause", time.Second, 5 * time.Second},
			{"failure after it", 6 * time.Second, 6*time.Second + 10*time.Second},
			{"third in a row", 20 * time.Second, 20*time.Second + 20*time.Second},
		}
		for _, st := range steps {
			until, _, err := s.PauseWebhookPartner(ctx, "pa", now.Add(st.at), 5*time.Second, 30*time.Second)
			if err != nil || !until.Equal(now.Add(st.wantUntil)) {
				t.Fatalf("%s: pause until %v %v, want %v", st.name, until, err, now.Add(st.wantUntil))
			}
			for id, r := range outboxRows(t, db, "pa") {
				want := before[id]
				if id != late {
					want.next = until
				}
				if r != want {
					t.Fatalf("%s: event %d %+v, want %+v", st.name, id, r, want)
				}
			}
		}
		// The cap: a fifth failure in a row pauses for max, 30 s.
		if until, _, err := s.PauseWebhookPartner(ctx, "pa", now.Add(time.Minute), 5*time.Second, 30*time.Second); err != nil || !until.Equal(now.Add(90*time.Second)) {
			t.Fatalf("capped pause until %v %v", until, err)
		}
		// The partner's view of it: when it ends and after how many
		// failures in a row (four: the one during the first pause did
		// not count); a partner never paused has none.
		if p, err := s.WebhookPause(ctx, "pa"); err != nil || !p.Until.Equal(now.Add(90*time.Second)) || p.Failures != 4 {
			t.Fatalf("pa's pause read back as %+v %v", p, err)
		}
		if p, err := s.WebhookPause(ctx, "never"); err != nil || p != (banking.WebhookPause{}) {
			t.Fatalf("an unpaused partner's pause: %+v %v", p, err)
		}

		// A failure long after the last pause ended (more than max) is a
		// new outage: its pause starts at base again.
		later := now.Add(2 * time.Hour)
		for i, st := range []struct{ at, want time.Duration }{{0, 5 * time.Second}, {10 * time.Second, 20 * time.Second}, {51 * time.Second, 56 * time.Second}} {
			if until, _, err := s.PauseWebhookPartner(ctx, "pd", later.Add(st.at), 5*time.Second, 30*time.Second); err != nil || !until.Equal(later.Add(st.want)) {
				t.Fatalf("pd pause %d until %v %v, want %v", i, until, err, later.Add(st.want))
			}
		}

		// A claim meanwhile hands out the other partner's events only; a
		// new event of the paused partner is moved to the pause's end.
		queueEvents(t, s, "pc", 1, at) // another partner, claimed too
		if _, err := db.W.ExecContext(ctx, `UPDATE banking_payment_webhooks SET client_id = 'pa' WHERE client_id = 'pc'`); err != nil {
			t.Fatal(err)
		}
		claimAt := now.Add(61 * time.Second)
		evs, err := s.DueWebhooks(ctx, claimAt, 10, false)
		if err != nil || len(evs) != 2 || evs[0].ClientID != "pb" || evs[1].ClientID != "pb" {
			t.Fatalf("claim during pa's pause: %+v %v", evs, err)
		}
		for id, r := range outboxRows(t, db, "pa") {
			if id != late && !r.next.Equal(now.Add(90*time.Second)) {
				t.Errorf("pa's event %d due at %v during the pause", id, r.next)
			}
		}

		// A release frees the claim's own events, due at the time given,
		// with no attempt; one whose lease is not the claim's any more
		// (it ended and another dispatcher claimed the event) stays.
		stale := evs[1]
		stale.Lease = stale.Lease.Add(-time.Second)
		if err := s.ReleaseWebhooks(ctx, []banking.WebhookEvent{evs[0], stale}, claimAt); err != nil {
			t.Fatal(err)
		}
		pb := outboxRows(t, db, "pb")
		if r := pb[evs[0].ID]; !r.next.Equal(claimAt) || r.attempts != 0 {
			t.Errorf("released %+v", r)
		}
		if r := pb[evs[1].ID]; !r.next.Equal(evs[1].Lease) {
			t.Errorf("another claim's event released: %+v", r)
		}

		// A delivery ends the doubling: the next failure pauses for base.
		if err := s.RecordWebhookAttempt(ctx, evs[0].ID, banking.WebhookAttempt{Attempt: 1, At: claimAt, HTTPStatus: 204}, true, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordWebhookAttempt(ctx, late, banking.WebhookAttempt{Attempt: 4, At: claimAt, HTTPStatus: 204}, true, time.Time{}); err != nil {
			t.Fatal(err)
		}
		until, _, err := s.PauseWebhookPartner(ctx, "pa", now.Add(2*time.Minute), 5*time.Second, 30*time.Second)
		if err != nil || !until.Equal(now.Add(2*time.Minute+5*time.Second)) {
			t.Fatalf("pause after a delivery until %v %v", until, err)
		}

		// A new setting (the partner names another receiver) ends the
		// pause: the events it moved are due at once.
		set := now.Add(2*time.Minute + time.Second)
		if err := s.SetPartnerWebhook(ctx, banking.PartnerWebhook{ClientID: "pa", URL: "https://new.example/hook", SealedSecret: "x", UpdatedAt: set}); err != nil {
			t.Fatal(err)
		}
		waiting := 0
		for _, r := range outboxRows(t, db, "pa") {
			if r.state == "PENDING" {
				waiting++
				if !r.next.Equal(set) {
					t.Errorf("after a new setting an event is due at %v, want %v", r.next, set)
				}
			}
		}
		evs, err = s.DueWebhooks(ctx, set, 10, false)
		claimed := 0
		for _, ev := range evs {
			if ev.ClientID == "pa" {
				claimed++
			}
		}
		if err != nil || claimed != waiting || waiting == 0 {
			t.Fatalf("claim after a new setting: %d of %d, %v", claimed, waiting, err)
		}
	})
}
