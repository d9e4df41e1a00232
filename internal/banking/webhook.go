package banking

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	// CreatedAt is when the event was queued, from which MaxAge counts;
	// zero (events queued before it was recorded) reads as EventTime.
	CreatedAt time.Time `json:"-"`
	Attempts  int       `json:"-"`
	// Endpoint is the receiver the event goes to, as pauses know it
	// (PauseWebhookPartner): its partner's ClientID when the partner has
	// a webhook of its own, else DefaultWebhookEndpoint, the deployment's
	// URL, which every partner without one shares. Empty reads as
	// ClientID.
	Endpoint string `json:"-"`
	// Probe: the event's endpoint failed last (it was paused and has not
	// answered since). A batch sends one probe of an endpoint at a time
	// until one gets an answer, so a receiver still down is tried once
	// per pause, whatever the number of partners whose events go there.
	Probe bool `json:"-"`
	// Lease is when the claim that handed the event out ends; it tells
	// that claim apart from a later one, so ReleaseWebhooks frees only
	// its own.
	Lease time.Time `json:"-"`
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
	// NotSent marks a try that failed on our side before any request went
	// out (NotSentError), though its target and format were known. It is
	// not stored: it tells the outbox that the attempt, were its event
	// finished meanwhile by a later claim, put nothing on the wire worth
	// a row in that event's log.
	NotSent bool
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
	// An event no longer in the outbox (purged while a very late attempt
	// was under way) gets nothing recorded, and no error; an event already
	// finished by a later claim keeps its state (a late delivery excepted,
	// which turns a failed event delivered) and logs the attempt only if
	// it sent a request.
	RecordWebhookAttempt(ctx context.Context, id int64, a WebhookAttempt, delivered bool, next time.Time) error
	// WebhookLog lists the attempts of an event, oldest first.
	WebhookLog(ctx context.Context, id int64) ([]WebhookAttempt, error)
	// PauseWebhookPartner records that a delivery to endpoint (an
	// event's Endpoint: a partner's own webhook, or the deployment's
	// default that the partners without one share) got no answer or a
	// 429/503 at now. Unless the endpoint is paused already, its pause
	// begins, lasting base after its first such failure in a row and
	// doubling per further one up to max (a delivered event resets the
	// count, and so does a failure more than max after the last pause
	// ended: a new outage). The pending events that go to the endpoint,
	// whichever partner's, due before the pause ends are moved to its end
	// with no attempt counted, and claims hand out none of them until
	// then. It returns the pause's end, and whether this failure opened
	// the outage (the first in a row): only such a failure is a failed
	// attempt of its event; the others are the same outage seen again.
	PauseWebhookPartner(ctx context.Context, endpoint string, now time.Time, base, max time.Duration) (until time.Time, opened bool, err error)
	// ReleaseWebhooks gives claimed, unsent events back, due at next,
	// with no attempt counted; an event no longer under the lease its
	// claim set is left alone.
	ReleaseWebhooks(ctx context.Context, evs []WebhookEvent, next time.Time) error
	// ExpireParkedWebhooks fails for good up to limit of the events
	// parked for want of a URL (DueWebhooks with configuredOnly) that
	// were queued before queuedBefore and whose park is over at now, each
	// with a delivery log entry of no HTTP status and reason as its error
	// that spends no attempt; it returns how many. No claim hands those
	// events out, so MaxAge reaches them only through it.
	ExpireParkedWebhooks(ctx context.Context, now, queuedBefore time.Time, reason string, limit int) (int, error)
	// PurgeWebhooks deletes, in one transaction, up to limit of the
	// finished events (delivered or failed for good) that finished before
	// finishedBefore, oldest finish first, with their delivery log: an
	// event that finished lately holds back none that finished earlier.
	// An event pending, parked or under a claim is never deleted, nor is
	// the outbox's newest row, so that no id is ever handed out twice. It
	// returns how many it deleted, and whether it found limit of them
	// (more may be due).
	PurgeWebhooks(ctx context.Context, finishedBefore time.Time, limit int) (deleted int, more bool, err error)
}

// WebhookSender posts one event; it returns what it sent where (WebhookSent)
// and a transport error. ErrNoWebhookTarget means the event's partner has
// nowhere to receive it: no attempt is recorded and the event waits for
// its lease to end.
type WebhookSender interface {
	Send(ctx context.Context, ev WebhookEvent) (WebhookSent, error)
}

// WebhookSent is the outcome of one delivery try.
type WebhookSent struct {
	// Status is the receiver's HTTP status, 0 when there was no answer.
	Status int
	// Format is the body format sent, WebhookFormatJSON or
	// WebhookFormatJOSE; empty when the try failed before choosing one.
	Format string
	// Endpoint is the receiver the try went to (WebhookTarget.Endpoint),
	// as the partner's setting read for this try named it; empty when
	// unknown, and then the event's Endpoint, named at its claim, is
	// taken. A partner that set or changed its webhook since the claim
	// has its try sent to the new URL, so a failure is charged to that
	// receiver's pause, not to the one the claim named.
	Endpoint string
	// RetryAfter and RetryAt are the receiver's Retry-After (RFC 9110
	// §10.2.3) on a failed try: a delay in seconds, or the HTTP date it
	// names; both zero when it sent none or one of neither form. The
	// retry and the receiver's pause wait at least that long, within
	// MaxBackoff and PauseMax (retryAfterWait).
	RetryAfter time.Duration
	RetryAt    time.Time
}

// retryAfterWait is how long from at the receiver's Retry-After asks the
// next try to wait (0 for none or a date past), so that a receiver that
// sheds load with a 429 or 503 is not called back before it said it could
// take the call; reference §12 leaves the schedule to the sender.
func retryAfterWait(sent WebhookSent, at time.Time) time.Duration {
	if !sent.RetryAt.IsZero() {
		return max(sent.RetryAt.Sub(at), 0)
	}
	return max(sent.RetryAfter, 0)
}

// DefaultWebhookEndpoint is the Endpoint of the events that go to the
// deployment's default URL (their partners have no webhook of their own):
// one receiver, paused as one, whoever's events it failed. The asterisk
// keeps it apart from every client ID.
const DefaultWebhookEndpoint = "*default"

// endpointOf is ev's Endpoint, its partner's when the store named none.
func endpointOf(ev WebhookEvent) string {
	if ev.Endpoint == "" {
		return ev.ClientID
	}
	return ev.Endpoint
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
	// PerEndpoint is how many deliveries to one receiver (an event's
	// Endpoint, which several partners may share) run at once; 0 means
	// webhookPerEndpoint.
	PerEndpoint int
	// PauseBase and PauseMax set a partner's pause after a delivery that
	// got no answer or a 429/503: PauseBase after the first in a row
	// (0 means webhookPauseBase), doubling per further one up to PauseMax
	// (0 means webhookPauseMax). A negative PauseBase pauses no partner,
	// for tests of one event's retry schedule alone.
	PauseBase, PauseMax time.Duration
	// PassTimeout bounds a pass (RunOnce) as a whole, 0 meaning
	// webhookPassTimeout; StoreTimeout bounds each of its store calls, 0
	// meaning webhookStoreTimeout. A database that takes the connection
	// and never answers then fails the pass, which is reported and tried
	// again, instead of holding every delivery behind it for good.
	PassTimeout, StoreTimeout time.Duration
	// MaxAge is how long after it was queued (CreatedAt) an event may
	// still be sent; 0 means no limit. It counts from the queueing, not
	// from EventTime, the status's own time, so that an event queued now
	// about an older status is not expired at once. Reference §12 has the
	// partner poll a payment's state when no webhook came within 24 h,
	// so a status that arrives later tells it nothing it has not read,
	// and an event whose receiver never comes back would otherwise stay
	// pending for good (probes spend no attempt). A claimed event past it
	// is failed, with an entry in its delivery log saying so, instead of
	// sent; so is a parked one (ExpireParkedWebhooks), which no claim
	// hands out.
	MaxAge time.Duration
	// Stopping is closed when the process begins to stop (nil: never):
	// see stopped.
	Stopping <-chan struct{}
}

func (d *WebhookDispatcher) backoff(attempt int) time.Duration {
	base, max := d.BaseBackoff, d.longestBackoff()
	if base == 0 {
		base = 5 * time.Second
	}
	b := base
	for i := 1; i < attempt && b < max; i++ {
		b *= 2
	}
	return min(b, max)
}

// longestBackoff is MaxBackoff, 0 meaning an hour: the longest wait before
// a retry, a receiver's Retry-After included.
func (d *WebhookDispatcher) longestBackoff() time.Duration {
	if d.MaxBackoff == 0 {
		return time.Hour
	}
	return d.MaxBackoff
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

// webhookStoreTimeout bounds one store call of a pass: the claim, a
// delivery's record, pause or release, the partner's setting read before
// a send. A claim of a batch takes milliseconds, and SQLite gives up on a
// lock after its busy_timeout (10 s) by itself; a database that accepted
// the connection and then stopped answering (a PostgreSQL whose disk
// stalled, a network that drops packets without a reset) would otherwise
// hold the pass, and every delivery after it, until the process ended.
const webhookStoreTimeout = 15 * time.Second

// webhookPassTimeout bounds a pass as a whole: its claim, the start window
// (webhookStartWindow), the last delivery's send (the sender's timeout,
// 10 s) and its store calls fit within it with room to spare, so only a
// pass that something holds past every other bound reaches it.
const webhookPassTimeout = 2 * time.Minute

// ErrWebhookStoreStalled is the error of a pass whose store did not answer
// within its bound. It wraps context.DeadlineExceeded, as the serve loop's
// health report (background.Worker) reads a deadline: the database could
// not be used for now, and the next pass tries again.
var ErrWebhookStoreStalled = fmt.Errorf("webhook outbox: the store did not answer in time: %w", context.DeadlineExceeded)

// inStore runs one store call of a pass under its own bound. When the
// bound ends the call, the error says so whatever the driver made of the
// cancellation (SQLite's "interrupted", say), so that it reads as the
// database not answering rather than as a fault of ours.
func (d *WebhookDispatcher) inStore(ctx context.Context, call func(ctx context.Context) error) error {
	bound := d.StoreTimeout
	if bound <= 0 {
		bound = webhookStoreTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	err := call(sctx)
	if err != nil && ctx.Err() == nil && sctx.Err() != nil {
		return fmt.Errorf("%w (%s): %w", ErrWebhookStoreStalled, bound, err)
	}
	return err
}

// RunOnce claims the due events and delivers them, round-robin across
// partners with at most PerEndpoint to one receiver under way at once, and
// reports how many it tried. A receiver whose delivery gets no answer or a
// 429/503 is paused (PauseWebhookPartner): the events bound for it not yet
// started, whichever partner's, are released unsent to the pause's end. The pass ends within PassTimeout and
// each store call within StoreTimeout: past either it fails with an error
// that is ErrWebhookStoreStalled, and what it claimed comes back when the
// claim's lease ends.
func (d *WebhookDispatcher) RunOnce(ctx context.Context) (int, error) {
	bound := d.PassTimeout
	if bound <= 0 {
		bound = webhookPassTimeout
	}
	pass, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	n, err := d.runPass(pass)
	if err != nil && ctx.Err() == nil && pass.Err() != nil && !errors.Is(err, ErrWebhookStoreStalled) {
		err = fmt.Errorf("%w (the pass ran past %s): %w", ErrWebhookStoreStalled, bound, err)
	}
	return n, err
}

func (d *WebhookDispatcher) runPass(ctx context.Context) (int, error) {
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	claimedAt := now()
	if d.ConfiguredOnly && d.MaxAge > 0 {
		// The events of partners with nowhere to send to are parked, never
		// claimed: those past the limit are failed here, or they would
		// stay in the outbox for good.
		if err := d.inStore(ctx, func(ctx context.Context) error {
			_, err := d.Outbox.ExpireParkedWebhooks(ctx, claimedAt, claimedAt.Add(-d.MaxAge), d.expiredReason(), webhookExpireBatch)
			return err
		}); err != nil {
			return 0, err
		}
	}
	var evs []WebhookEvent
	err := d.inStore(ctx, func(ctx context.Context) (err error) {
		evs, err = d.Outbox.DueWebhooks(ctx, claimedAt, webhookBatch, d.ConfiguredOnly)
		return err
	})
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	if evs, err = d.expire(ctx, evs, claimedAt); err != nil || len(evs) == 0 {
		return 0, err
	}
	workers := d.Workers
	if workers <= 0 {
		workers = webhookWorkers
	}
	perEndpoint := d.PerEndpoint
	if perEndpoint <= 0 {
		perEndpoint = webhookPerEndpoint
	}
	q := newBatchQueue(evs, perEndpoint, claimedAt.Add(webhookStartWindow))
	errs := make([]error, workers)
	tried := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				ev, ok := q.next(ctx, d.Stopping, now)
				if !ok {
					return
				}
				tried[w]++
				answered, err := d.deliver(ctx, q, ev, now)
				q.done(ev, answered)
				if left := (*leftToOthers)(nil); errors.As(err, &left) {
					// Released for a process that can open its secret:
					// the store works, so this worker goes on with the
					// batch, and the pass reports the first such event.
					if errs[w] == nil {
						errs[w] = left.err
					}
					continue
				}
				if err != nil {
					// The store failed: what is left comes back when its
					// lease ends, as when stopping.
					errs[w] = errors.Join(errs[w], err)
					return
				}
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil || stopped(d.Stopping) {
		errs = append(errs, d.releaseUnstarted(ctx, q, now))
	}
	if ctx.Err() != nil {
		return 0, errors.Join(append(errs, ctx.Err())...)
	}
	// What the start window left unsent is due again at once rather than
	// when its lease ends.
	errs = append(errs, d.inStore(ctx, func(ctx context.Context) error { return d.Outbox.ReleaseWebhooks(ctx, q.late, now()) }))
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tried {
		n += t
	}
	return n, nil
}

// expire fails the claimed events older than MaxAge at now, each with an
// entry in its delivery log (no HTTP status, the error naming the limit)
// that spends no attempt, and returns the others. The age is read from
// the events a claim hands out, so the limit costs no scan of the outbox:
// an event waiting out its receiver's pause is failed when its next
// attempt falls due, at the latest at the first probe after the limit.
func (d *WebhookDispatcher) expire(ctx context.Context, evs []WebhookEvent, now time.Time) ([]WebhookEvent, error) {
	if d.MaxAge <= 0 {
		return evs, nil
	}
	live := evs[:0:0]
	var expired []WebhookEvent
	for _, ev := range evs {
		if now.Sub(queuedAt(ev)) > d.MaxAge {
			expired = append(expired, ev)
		} else {
			live = append(live, ev)
		}
	}
	reason := d.expiredReason()
	for _, ev := range expired {
		a := WebhookAttempt{Attempt: ev.Attempts, At: now, Error: reason}
		if err := d.inStore(ctx, func(ctx context.Context) error {
			return d.Outbox.RecordWebhookAttempt(ctx, ev.ID, a, false, time.Time{})
		}); err != nil {
			// The rest of the batch comes back when its lease ends.
			return nil, err
		}
	}
	return live, nil
}

// expiredReason is the error of an expired event's last log entry.
func (d *WebhookDispatcher) expiredReason() string {
	return "expired after " + shortDuration(d.MaxAge)
}

// webhookExpireBatch is how many parked events a pass fails at most: a
// transaction of a few hundred small updates, so that a backlog of expired
// events is cleared over a few passes without holding the outbox long.
const webhookExpireBatch = 256

// queuedAt is when ev was queued: its CreatedAt, else (an event queued
// before that was recorded) its EventTime.
func queuedAt(ev WebhookEvent) time.Time {
	if ev.CreatedAt.IsZero() {
		return ev.EventTime
	}
	return ev.CreatedAt
}

// shortDuration is d as a person writes it: 24h rather than 24h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// deliver sends one event and records the attempt; when the outcome pauses
// its receiver (Endpoint) it takes the receiver's other events out of the
// batch, records the pause and releases them to its end, and counts the
// attempt only when this failure opened the receiver's outage. It reports
// whether the receiver answered (anything but no answer or a 429/503). A
// try that failed on our side before sending (NotSentError) pauses nothing
// and is recorded and retried as any other failed attempt.
func (d *WebhookDispatcher) deliver(ctx context.Context, q *batchQueue, ev WebhookEvent, now func() time.Time) (answered bool, err error) {
	maxAttempts := d.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = 10
	}
	sent, serr := d.Sender.Send(ctx, ev)
	status, format := sent.Status, sent.Format
	if errors.Is(serr, ErrNoWebhookTarget) {
		return false, nil
	}
	if lookup := (*TargetLookupError)(nil); errors.As(serr, &lookup) {
		// Our store failed before anything was sent: recorded as an
		// attempt, a database that is busy for a moment would spend one of
		// the event's attempts and pause its partner. The event is due
		// again at once if the store takes the release, else when its
		// lease ends; the error stops this worker as a failed record does.
		rerr := d.inStore(ctx, func(ctx context.Context) error {
			return d.Outbox.ReleaseWebhooks(ctx, []WebhookEvent{ev}, now())
		})
		if rerr == nil && errors.Is(serr, ErrSealedSecret) {
			// A secret sealed under keys this process lacks: the store
			// works, and the event waits for a replica holding them.
			return false, &leftToOthers{err: serr}
		}
		return false, errors.Join(serr, rerr)
	}
	// A cancelled ctx is this process stopping, not the receiver failing;
	// nor is a failure of ours before anything was sent, whose status 0
	// says the receiver was never asked, not that it did not answer.
	notSent := errors.As(serr, new(*NotSentError))
	pause := d.PauseBase >= 0 && pausesPartner(status) && !notSent && ctx.Err() == nil
	a := WebhookAttempt{Attempt: ev.Attempts + 1, At: now(), HTTPStatus: status, Format: format, NotSent: notSent}
	if serr != nil {
		a.Error = serr.Error()
	}
	delivered := serr == nil && status >= 200 && status < 300
	var next time.Time
	wait := retryAfterWait(sent, a.At)
	if !delivered && a.Attempt < maxAttempts && (serr != nil || retryableStatus[status]) {
		next = a.At.Add(max(d.backoff(a.Attempt), min(wait, d.longestBackoff())))
	}
	// A try that was never sent reports false, as answered means only
	// that the receiver was heard from: the batch then frees its slot
	// without marking the receiver up, so, were it on probation after a
	// pause, its next probe, which does reach it, still goes alone rather
	// than all of them at once to a receiver that may still be down. No
	// pause comes of false; only the pause below counts a receiver down.
	answered = !pausesPartner(status) && !notSent
	if !pause {
		return answered, d.inStore(ctx, func(ctx context.Context) error { return d.Outbox.RecordWebhookAttempt(ctx, ev.ID, a, delivered, next) })
	}
	// The receiver the try went to, which is the claim's unless the
	// partner's setting changed since. Its events are taken out of the
	// batch before anything is written, so that no worker starts another
	// one bound for it meanwhile.
	endpoint := sent.Endpoint
	if endpoint == "" {
		endpoint = endpointOf(ev)
	}
	rest := q.pause(endpoint)
	pauseBase, pauseMax := d.PauseBase, d.PauseMax
	if pauseBase == 0 {
		pauseBase = webhookPauseBase
	}
	if pauseMax == 0 {
		pauseMax = webhookPauseMax
	}
	// The receiver's own Retry-After lengthens the pause it opens, up to
	// the longest pause.
	pauseBase = max(pauseBase, min(wait, pauseMax))
	var until time.Time
	var opened bool
	err = d.inStore(ctx, func(ctx context.Context) (err error) {
		until, opened, err = d.Outbox.PauseWebhookPartner(ctx, endpoint, a.At, pauseBase, max(pauseBase, pauseMax))
		return err
	})
	if err != nil {
		return false, err
	}
	if opened {
		// The failure that found the endpoint down is one of the event's
		// attempts; its next is not before the pause ends.
		if !next.IsZero() && next.Before(until) {
			next = until
		}
		err = d.inStore(ctx, func(ctx context.Context) error { return d.Outbox.RecordWebhookAttempt(ctx, ev.ID, a, false, next) })
		if err != nil {
			return false, err
		}
	} else {
		// The endpoint was down already: this delivery was the probe
		// after its pause, or ran beside the one that found it down. It
		// says nothing about the event, so it spends none of the event's
		// attempts (a receiver down for hours would otherwise use them
		// all up on probes, one event after another, and fail events its
		// return would have taken): the event waits for the pause's end
		// with the endpoint's others, and the pause, longer each time,
		// is what the failure changed.
		rest = append(rest, ev)
	}
	return false, d.inStore(ctx, func(ctx context.Context) error { return d.Outbox.ReleaseWebhooks(ctx, rest, until) })
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
