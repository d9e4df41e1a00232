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

// scriptSender answers with the scripted statuses in turn, each sent in the
// scripted format (json when the script is shorter).
type scriptSender struct {
	codes   []int
	formats []string
	sent    []banking.WebhookEvent
}

func (s *scriptSender) Send(_ context.Context, ev banking.WebhookEvent) (banking.WebhookSent, error) {
	s.sent = append(s.sent, ev)
	c := s.codes[0]
	s.codes = s.codes[1:]
	format := banking.WebhookFormatJSON
	if len(s.formats) > 0 {
		format, s.formats = s.formats[0], s.formats[1:]
	}
	if c == 0 {
		return banking.WebhookSent{Format: format}, errors.New("connection refused")
	}
	return banking.WebhookSent{Status: c, Format: format}, nil
}

func TestWebhookOutbox(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		now := at
		s := NewPaymentStore(db)
		mk := func(id string, final string) {
			sp := storedPayment("org1", id)
			sp.Status = final
			if err := s.CreatePayment(ctx, sp, []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: final, At: at}}); err != nil {
				t.Fatal(err)
			}
		}
		mk("e1000000-0000-4000-8000-000000000001", banking.StatusImplemented)
		mk("e1000000-0000-4000-8000-000000000002", banking.StatusImplemented)
		// Non-final statuses queue nothing.
		mk("e1000000-0000-4000-8000-000000000003", banking.StatusPartSigned)

		// Without a deployment default and without partner settings there
		// is nowhere to send: nothing is claimed, the events are parked; a
		// dispatcher with a default takes them at once.
		if due, err := s.DueWebhooks(ctx, now, 10, true); err != nil || len(due) != 0 {
			t.Fatalf("configured only, no settings: %d %v", len(due), err)
		}
		// A claimed event is not handed to a second dispatcher.
		claimed, err := s.DueWebhooks(ctx, now, 10, false)
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claim: %d %v", len(claimed), err)
		}
		if again, _ := s.DueWebhooks(ctx, now, 10, false); len(again) != 0 {
			t.Fatalf("claimed twice: %d", len(again))
		}
		now = now.Add(time.Minute) // the lease ends
		send := &scriptSender{codes: []int{503, 400, 0, 204}, formats: []string{banking.WebhookFormatJSON, banking.WebhookFormatJSON, banking.WebhookFormatJOSE, banking.WebhookFormatJOSE}}
		// PauseBase -1: the retry schedule of each event alone, not the
		// pause a 503 or no answer puts the partner in (TestWebhookPause).
		d := &banking.WebhookDispatcher{Outbox: s, Sender: send, BaseBackoff: time.Second, Now: func() time.Time { return now },
			Workers: 1, PauseBase: -1} // the script answers events in the order they are claimed
		if n, err := d.RunOnce(ctx); err != nil || n != 2 {
			t.Fatalf("first run: %d %v", n, err)
		}
		// 503 retries after the backoff; 400 gives up. Nothing is due yet.
		if n, _ := d.RunOnce(ctx); n != 0 {
			t.Fatalf("ran %d before backoff", n)
		}
		// A restart: a fresh store and dispatcher over the same database resume.
		now = now.Add(time.Second)
		d = &banking.WebhookDispatcher{Outbox: NewPaymentStore(db), Sender: send, BaseBackoff: time.Second, Now: func() time.Time { return now },
			Workers: 1, PauseBase: -1} // the script answers events in the order they are claimed
		if n, _ := d.RunOnce(ctx); n != 1 {
			t.Fatalf("after restart ran %d", n)
		}
		now = now.Add(2 * time.Second) // backoff doubled
		if n, _ := d.RunOnce(ctx); n != 1 {
			t.Fatalf("third attempt ran %d", n)
		}
		if n, _ := d.RunOnce(ctx); n != 0 {
			t.Fatalf("delivered event still due (%d)", n)
		}
		if len(send.sent) != 4 || send.sent[0].ExternalID != send.sent[3].ExternalID || !send.sent[0].EventTime.Equal(at) || send.sent[0].BankStatus != "IMPLEMENTED" {
			t.Fatalf("sent %+v", send.sent)
		}
		log, err := s.WebhookLog(ctx, send.sent[0].ID)
		if err != nil || len(log) != 3 || log[0].HTTPStatus != 503 || log[1].Error == "" || log[2].HTTPStatus != 204 {
			t.Fatalf("log %+v %v", log, err)
		}
		// Each attempt keeps the format it was sent in: the partner switched
		// to jose between the first attempt and the later ones.
		if log[0].Format != banking.WebhookFormatJSON || log[1].Format != banking.WebhookFormatJOSE || log[2].Format != banking.WebhookFormatJOSE {
			t.Fatalf("log formats %+v", log)
		}
		var states []string
		rows, _ := db.R.QueryContext(ctx, `SELECT state FROM banking_payment_webhooks ORDER BY id`)
		for rows.Next() {
			var st string
			_ = rows.Scan(&st)
			states = append(states, st)
		}
		rows.Close()
		if len(states) != 2 || states[0] != "DELIVERED" || states[1] != "FAILED" {
			t.Fatalf("states %v", states)
		}
	})
}
