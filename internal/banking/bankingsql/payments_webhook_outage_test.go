package bankingsql

import (
	"context"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// outageStore is the real payment store with a database outage switched on
// per method: a call of a method in fail returns err (the real error of a
// query on a stopped PostgreSQL) without reaching the database.
type outageStore struct {
	*PaymentStore
	err  error
	mu   sync.Mutex
	fail map[string]bool
}

func (s *outageStore) down(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail[method] {
		return s.err
	}
	return nil
}

func (s *outageStore) set(methods ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = map[string]bool{}
	for _, m := range methods {
		s.fail[m] = true
	}
}

func (s *outageStore) DueWebhooks(ctx context.Context, now time.Time, limit int, configuredOnly bool) ([]banking.WebhookEvent, error) {
	if err := s.down("DueWebhooks"); err != nil {
		return nil, err
	}
	return s.PaymentStore.DueWebhooks(ctx, now, limit, configuredOnly)
}

func (s *outageStore) RecordWebhookAttempt(ctx context.Context, id int64, a banking.WebhookAttempt, delivered bool, next time.Time) error {
	if err := s.down("RecordWebhookAttempt"); err != nil {
		return err
	}
	return s.PaymentStore.RecordWebhookAttempt(ctx, id, a, delivered, next)
}

func (s *outageStore) ReleaseWebhooks(ctx context.Context, evs []banking.WebhookEvent, next time.Time) error {
	if err := s.down("ReleaseWebhooks"); err != nil {
		return err
	}
	return s.PaymentStore.ReleaseWebhooks(ctx, evs, next)
}

func (s *outageStore) GetPartnerWebhook(ctx context.Context, clientID string) (banking.PartnerWebhook, error) {
	if err := s.down("GetPartnerWebhook"); err != nil {
		return banking.PartnerWebhook{}, err
	}
	return s.PaymentStore.GetPartnerWebhook(ctx, clientID)
}

// targetSender resolves each event's target as the real sender does (the
// partner's setting read from the store) and then "delivers" it, keeping
// what the partner received; the partner answers 204.
type targetSender struct {
	hooks    *banking.Webhooks
	received []banking.WebhookEvent
}

func (s *targetSender) Send(ctx context.Context, ev banking.WebhookEvent) (banking.WebhookSent, error) {
	if _, err := s.hooks.Target(ctx, ev.ClientID); err != nil {
		return banking.WebhookSent{}, err
	}
	s.received = append(s.received, ev)
	return banking.WebhookSent{Status: 204, Format: banking.WebhookFormatJSON}, nil
}

// A final-status event queued before a database outage reaches its partner
// after it, whichever of the dispatcher's store calls the outage breaks:
// once when the partner's answer was recorded, and when it could not be
// (the partner answered, then the record failed), sent again only after the
// claim's lease with the same externalId and eventTime, which the partner
// deduplicates by. An outage met while reading the partner's setting,
// before anything was sent, spends none of the event's attempts and pauses
// no partner: the event is sent at the next pass, as if nothing happened.
func TestWebhookDispatcherAcrossOutage(t *testing.T) {
	type run struct {
		fail    []string      // store methods down during the pass
		advance time.Duration // the clock moves this far before the pass
		wantErr bool          // the pass reports the outage
		sent    int           // events the partner receives in the pass
	}
	for _, tc := range []struct {
		name     string
		runs     []run
		received int // in all: more than one only when an answer went unrecorded
	}{
		{name: "claim fails", received: 1, runs: []run{
			{fail: []string{"DueWebhooks"}, wantErr: true},
			{sent: 1},
			{advance: 2 * time.Minute},
		}},
		{name: "the partner's answer is not recorded", received: 2, runs: []run{
			{fail: []string{"RecordWebhookAttempt"}, wantErr: true, sent: 1},
			{},                              // still under the claim's lease
			{advance: time.Minute, sent: 1}, // the lease ended: sent again
			{advance: 2 * time.Minute},
		}},
		{name: "the partner's setting cannot be read", received: 1, runs: []run{
			{fail: []string{"GetPartnerWebhook"}, wantErr: true},
			{sent: 1}, // released at once, not after a backoff or a pause
			{advance: 2 * time.Minute},
		}},
		{name: "neither the setting nor the release", received: 1, runs: []run{
			{fail: []string{"GetPartnerWebhook", "ReleaseWebhooks"}, wantErr: true},
			{},
			{advance: time.Minute, sent: 1},
			{advance: 2 * time.Minute},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
				ctx := context.Background()
				at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
				now := at.Add(time.Second)
				store := &outageStore{PaymentStore: NewPaymentStore(db), err: storetest.UnavailableError(t)}
				sp := implementedPayment(t, store, "e2000000-0000-4000-8000-000000000001", at)
				send := &targetSender{hooks: &banking.Webhooks{Store: store, Default: banking.WebhookTarget{URL: "https://partner.example/hook"}}}
				d := &banking.WebhookDispatcher{Outbox: store, Sender: send, Now: func() time.Time { return now }}
				for i, r := range tc.runs {
					now = now.Add(r.advance)
					store.set(r.fail...)
					before := len(send.received)
					_, err := d.RunOnce(ctx)
					if (err != nil) != r.wantErr || (err != nil && !sqldb.Unavailable(err)) {
						t.Fatalf("pass %d: %v, want an outage error %v", i, err, r.wantErr)
					}
					if got := len(send.received) - before; got != r.sent {
						t.Fatalf("pass %d sent %d, want %d", i, got, r.sent)
					}
				}
				if len(send.received) != tc.received {
					t.Fatalf("the partner received %d, want %d", len(send.received), tc.received)
				}
				for _, ev := range send.received {
					if ev.ExternalID != sp.Doc.ExternalID || !ev.EventTime.Equal(at) || ev.BankStatus != banking.StatusImplemented {
						t.Fatalf("received %+v, want %s IMPLEMENTED at %s every time", ev, sp.Doc.ExternalID, at)
					}
				}
				// One attempt, the delivered one: the outage spent none.
				log, err := store.WebhookLog(ctx, send.received[0].ID)
				if err != nil || len(log) != 1 || log[0].Attempt != 1 || log[0].HTTPStatus != 204 || log[0].Error != "" {
					t.Fatalf("delivery log %+v %v, want one delivered attempt", log, err)
				}
				var paused int
				if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM banking_webhook_pauses`).Scan(&paused); err != nil || paused != 0 {
					t.Fatalf("partners paused: %d %v", paused, err)
				}
			})
		})
	}
}
