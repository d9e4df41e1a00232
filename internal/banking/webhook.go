package banking

import (
	"context"
	"errors"
	"sync"
	"time"
)

// WebhookEvent is one queued final-status notification (reference §12).
// The outbox row is written in the transaction that sets the final status.
type WebhookEvent struct {
	ID          int64     `json:"-"`
	OrgID       string    `json:"-"`
	ClientID    string    `json:"-"`          // the partner whose channel created the document
	ExternalID  string    `json:"externalId"` // as the partner sent it, not the store's folded key: the receiver matches its own document by it
	BankStatus  string    `json:"bankStatus"`
	BankComment string    `json:"bankComment"`
	EventTime   time.Time `json:"eventTime"`
	Attempts    int       `json:"-"`
}

// WebhookAttempt is one delivery try as the log records it.
type WebhookAttempt struct {
	Attempt    int
	At         time.Time
	HTTPStatus int // 0: no answer
	Error      string
	// Format is the body format the attempt sent, WebhookFormatJSON or
	// WebhookFormatJOSE, so a partner who switched formats can tell which
	// attempts carried which; empty when the attempt failed before a
	// target, and with it a format, was known (and in rows logged before
	// the format was recorded).
	Format string
}

// WebhookOutbox is the durable queue of final-status events.
type WebhookOutbox interface {
	// DueWebhooks claims pending events whose next attempt is due at now
	// for a lease, so that no other dispatcher sends them meanwhile. With
	// configuredOnly (the deployment has no default URL) it returns only
	// events of partners that have their own webhook setting; the others
	// are parked until their partner sets one.
	DueWebhooks(ctx context.Context, now time.Time, limit int, configuredOnly bool) ([]WebhookEvent, error)
	// RecordWebhookAttempt logs an attempt and sets the event's state:
	// delivered, retry at next, or given up (next zero and !delivered).
	RecordWebhookAttempt(ctx context.Context, id int64, a WebhookAttempt, delivered bool, next time.Time) error
	// WebhookLog lists the attempts of an event, oldest first.
	WebhookLog(ctx context.Context, id int64) ([]WebhookAttempt, error)
}

// WebhookSender posts one event; it returns the HTTP status (0 when there
// was no answer), the body format it sent (WebhookFormatJSON or
// WebhookFormatJOSE; empty when it failed before choosing one) and a
// transport error. ErrNoWebhookTarget means the event's partner has nowhere
// to receive it: no attempt is recorded and the event waits for its lease
// to end.
type WebhookSender interface {
	Send(ctx context.Context, ev WebhookEvent) (status int, format string, err error)
}

// ErrNoWebhookTarget is a WebhookSender's answer for an event whose partner
// has no webhook URL, neither its own nor the deployment's.
var ErrNoWebhookTarget = errors.New("banking: partner has no webhook URL")

// retryableStatus: the codes the bank retries on (reference §12); others
// end the delivery.
var retryableStatus = map[int]bool{408: true, 409: true, 429: true, 500: true, 502: true, 503: true, 504: true, 507: true, 508: true, 509: true}

// WebhookDispatcher drains the outbox with exponential backoff. State lives
// in the store, so a restart resumes where the last process stopped.
type WebhookDispatcher struct {
	Outbox      WebhookOutbox
	Sender      WebhookSender
	MaxAttempts int           // 0 means 10
	BaseBackoff time.Duration // 0 means 5s; doubles per attempt
	MaxBackoff  time.Duration // 0 means 1h
	Now         func() time.Time
	// ConfiguredOnly: there is no deployment default URL, so only events
	// of partners with their own setting are taken from the outbox.
	ConfiguredOnly bool
	// Workers is how many deliveries run at once; 0 means webhookWorkers.
	// A test whose sender answers from a script in order sets 1.
	Workers int
}

func (d *WebhookDispatcher) backoff(attempt int) time.Duration {
	base, max := d.BaseBackoff, d.MaxBackoff
	if base == 0 {
		base = 5 * time.Second
	}
	if max == 0 {
		max = time.Hour
	}
	b := base
	for i := 1; i < attempt && b < max; i++ {
		b *= 2
	}
	return min(b, max)
}

// webhookWorkers is how many deliveries of a claimed batch are under way
// at once. One at a time, a receiver that hangs until the sender's timeout
// (10 s) held up every other partner's webhooks behind it: under a soak
// with one answer in five hanging, 62 of 1 403 events were tried in the
// minute and a half the soak ran; eight at a time, 768 attempts reached the
// receiver in three minutes (of 3 494 events queued).
const webhookWorkers = 8

// webhookBatch is how many due events one pass claims. The store leases
// them for a minute, after which another dispatcher (a second process on
// the same PostgreSQL) may claim and send them again, so a batch must end
// within the lease even when every receiver hangs until the sender's
// timeout: 32 events over 8 workers are four rounds, 40 s.
const webhookBatch = 32

// RunOnce delivers the due events once each and reports how many it tried.
func (d *WebhookDispatcher) RunOnce(ctx context.Context) (int, error) {
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	evs, err := d.Outbox.DueWebhooks(ctx, now(), webhookBatch, d.ConfiguredOnly)
	if err != nil {
		return 0, err
	}
	workers := d.Workers
	if workers <= 0 {
		workers = webhookWorkers
	}
	next := make(chan WebhookEvent)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for ev := range next {
				if errs[w] == nil {
					errs[w] = d.deliver(ctx, ev, now)
				}
			}
		})
	}
	for _, ev := range evs {
		if ctx.Err() != nil {
			// Stopping: the claimed events not handed out come back when
			// their lease ends.
			break
		}
		next <- ev
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return len(evs), nil
}

// deliver sends one event and records the attempt.
func (d *WebhookDispatcher) deliver(ctx context.Context, ev WebhookEvent, now func() time.Time) error {
	maxAttempts := d.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = 10
	}
	status, format, serr := d.Sender.Send(ctx, ev)
	if errors.Is(serr, ErrNoWebhookTarget) {
		return nil
	}
	a := WebhookAttempt{Attempt: ev.Attempts + 1, At: now(), HTTPStatus: status, Format: format}
	if serr != nil {
		a.Error = serr.Error()
	}
	delivered := serr == nil && status >= 200 && status < 300
	var next time.Time
	if !delivered && a.Attempt < maxAttempts && (serr != nil || retryableStatus[status]) {
		next = a.At.Add(d.backoff(a.Attempt))
	}
	return d.Outbox.RecordWebhookAttempt(ctx, ev.ID, a, delivered, next)
}

// Run drains the outbox every interval until ctx ends.
func (d *WebhookDispatcher) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_, _ = d.RunOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
