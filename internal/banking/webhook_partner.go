package banking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// PartnerChannel is the channelInfo of documents a partner application
// creates through the API; the webhook of a document goes to that partner.
func PartnerChannel(clientID string) string { return "API:" + clientID }

// PartnerOfChannel is the partner of a document's channelInfo, as its
// outbox rows carry it: the client_id of an API channel, any other channel
// as it is.
func PartnerOfChannel(channel string) string {
	clientID, _ := strings.CutPrefix(channel, PartnerChannel(""))
	return clientID
}

// PartnerWebhook is a partner application's own webhook setting (reference
// §12 leaves the registration out; ours is `partnerapi banking webhook set`
// and PUT /v1/webhook). The secret is an HMAC key: it has to be recovered to
// sign each delivery, so it is stored sealed under the deployment's webhook
// key (SecretBox), never hashed and never in clear.
type PartnerWebhook struct {
	ClientID     string
	URL          string
	SealedSecret string // SecretBox.Seal output
	// Format is the body's format, WebhookFormatJSON or WebhookFormatJOSE;
	// empty reads as JSON, the format of every setting made before it.
	Format    string
	UpdatedAt time.Time
}

// The formats of a webhook body. JSON is the payload as it is; JOSE is the
// compact JWS of that same payload under the bank's key (reference §12
// allows signing as JWS, §9.6), for partners that verify the bank's
// signature rather than trust a shared HMAC secret alone.
const (
	WebhookFormatJSON = "json"
	WebhookFormatJOSE = "jose"
)

// WebhookDelivery is one queued event of a partner with its attempts, as
// the delivery log shows it.
type WebhookDelivery struct {
	ID          int64
	ExternalID  string // as the partner sent it, like WebhookEvent's
	BankStatus  string
	BankComment string
	EventTime   time.Time
	State       string // PENDING, PARKED (no URL to send to yet), DELIVERED or FAILED
	Attempts    int
	NextAt      time.Time // zero unless PENDING
	DeliveredAt time.Time // zero unless DELIVERED
	LastError   string
	Log         []WebhookAttempt
}

// WebhookSettingsStore keeps partners' webhook settings and answers their
// delivery logs.
type WebhookSettingsStore interface {
	// SetPartnerWebhook creates or replaces the partner's setting.
	SetPartnerWebhook(ctx context.Context, w PartnerWebhook) error
	// UpdatePartnerWebhook reads clientID's setting (found is false when
	// it has none), lets fn make the new one from it and stores that, in
	// one transaction run one at a time with every other update of
	// clientID's setting, so a concurrent change is neither lost nor
	// written over with the value it replaced. An error from fn stores
	// nothing and is returned as it is.
	UpdatePartnerWebhook(ctx context.Context, clientID string, fn func(old PartnerWebhook, found bool) (PartnerWebhook, error)) error
	// DeletePartnerWebhook removes the partner's setting, reporting
	// whether there was one.
	DeletePartnerWebhook(ctx context.Context, clientID string) (bool, error)
	// GetPartnerWebhook returns the partner's setting or ErrNotFound.
	GetPartnerWebhook(ctx context.Context, clientID string) (PartnerWebhook, error)
	// PartnerDeliveries lists the newest events of documents the partner
	// created, newest first, each with its attempts.
	PartnerDeliveries(ctx context.Context, clientID string, limit int) ([]WebhookDelivery, error)
	// PartnerWebhooks lists every partner's setting (the key rotation
	// re-seals their secrets).
	PartnerWebhooks(ctx context.Context) ([]PartnerWebhook, error)
	// ReplaceWebhookSecret swaps clientID's sealed secret from old to new
	// and reports whether it did: false when the setting changed meanwhile.
	ReplaceWebhookSecret(ctx context.Context, clientID, old, new string) (bool, error)
	// WebhookPause is endpoint's last pause of deliveries (the zero
	// value when it was never paused): when it ends and how many failed
	// deliveries in a row led to it. endpoint is a partner's ClientID,
	// for its own webhook, or DefaultWebhookEndpoint.
	WebhookPause(ctx context.Context, endpoint string) (WebhookPause, error)
}

// WebhookPause is a pause of a partner's deliveries after its receiver
// did not answer or answered 429/503 (WebhookDispatcher).
type WebhookPause struct {
	Until    time.Time
	Failures int
}

// WebhookTarget is where one partner's events go and the key they are
// signed with.
type WebhookTarget struct {
	URL    string
	Secret []byte
	// Format is the body's format; empty is JSON (the deployment default
	// has no format of its own).
	Format string
	// Endpoint is the receiver as pauses know it (WebhookEvent.Endpoint):
	// the partner's ClientID for its own webhook, DefaultWebhookEndpoint
	// for the deployment's. Target sets it; empty in Webhooks.Default.
	Endpoint string
}

// Webhooks manages partners' webhook settings and resolves each event's
// target: the partner's own setting, else the deployment default (flags).
type Webhooks struct {
	Store   WebhookSettingsStore
	Box     *SecretBox
	Default WebhookTarget // URL "": partners without a setting get nothing
	// URLs is the rule for partners' URLs; its zero value admits https
	// to public addresses only.
	URLs WebhookURLPolicy
	Now  func() time.Time
	// LookupTimeout bounds Target's read of a partner's setting; 0 means
	// webhookStoreTimeout, the bound of the dispatcher's other store calls.
	LookupTimeout time.Duration
	// Gate is the maintenance switch and rate limit of the partner's
	// webhook operations, the API's one Gate (nil: off).
	Gate *Gate
}

// WebhookView is a setting as the partner may see it: never the secret.
type WebhookView struct {
	URL       string `json:"url,omitempty"`
	SecretSet bool   `json:"secretSet"`
	Source    string `json:"source"` // partner, default or none
	// Format is the body's format, absent when no URL receives anything.
	Format    string    `json:"format,omitempty"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
	// Secret is filled only in the answer that generated it.
	Secret string `json:"secret,omitempty"`
	// PausedUntil is set while the partner's deliveries are paused: its
	// receiver did not answer, or answered 429 or 503, FailedInARow
	// times in a row (the pause doubles with each). Setting the webhook
	// again ends the pause.
	PausedUntil  time.Time `json:"pausedUntil,omitzero"`
	FailedInARow int       `json:"failedInARow,omitempty"`
}

const (
	minWebhookSecret = 16
	maxWebhookSecret = 256
)

func webhookFault(field, check string) error {
	return &Error{Kind: KindValidation, Message: "Объект Webhook не соответствует модели",
		FieldNames: []string{field}, Checks: []string{check}}
}

// webhookFormat is the stored format as a partner sees it: a setting made
// before formats existed has none and is sent as JSON.
func webhookFormat(f string) string {
	if f == "" {
		return WebhookFormatJSON
	}
	return f
}

// Set stores clientID's webhook URL, secret and body format. A nil secret
// keeps the one stored; when none is stored a random one is generated and
// returned in the view, the only time it is ever shown. A nil format keeps
// the one stored, JSON when none is, like the secret, so a partner
// changing its URL does not change what its receiver has to parse.
func (w *Webhooks) Set(ctx context.Context, clientID, rawURL string, secret, format *string) (WebhookView, error) {
	if err := w.URLs.Check(ctx, rawURL); err != nil {
		return WebhookView{}, err
	}
	// Both bounds count characters, as the contract's minLength and
	// maxLength do: a secret of 256 Cyrillic letters is 512 bytes and is
	// taken, as a client validating against the contract expects.
	if secret != nil {
		if n := utf8.RuneCountInString(*secret); n < minWebhookSecret || n > maxWebhookSecret {
			return WebhookView{}, webhookFault("secret", fmt.Sprintf("секрет: от %d до %d символов", minWebhookSecret, maxWebhookSecret))
		}
	}
	if format != nil && *format != WebhookFormatJSON && *format != WebhookFormatJOSE {
		return WebhookView{}, webhookFault("format", "формат: json или jose")
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	// The stored setting is read and replaced in one serialised update:
	// read apart from the write, a URL change that keeps the secret could
	// write back the secret a concurrent change had just replaced, and two
	// first settings could each generate and show a secret of which only
	// the last written is stored. Either way the partner's receiver would
	// check webhooks with a secret the bank no longer signs with.
	var set PartnerWebhook
	var generated string
	err := w.Store.UpdatePartnerWebhook(ctx, clientID, func(old PartnerWebhook, found bool) (PartnerWebhook, error) {
		// Microseconds are what PostgreSQL and the SQLite store keep, so
		// this answer's updatedAt is the one every later GET answers.
		set = PartnerWebhook{ClientID: clientID, URL: rawURL, UpdatedAt: now().UTC().Truncate(time.Microsecond)}
		generated = ""
		switch {
		case secret != nil:
			set.SealedSecret = w.Box.Seal(clientID, []byte(*secret))
		case found:
			set.SealedSecret = old.SealedSecret
		default:
			generated = NewClientSecret()
			set.SealedSecret = w.Box.Seal(clientID, []byte(generated))
		}
		set.Format = webhookFormat(old.Format)
		if format != nil {
			set.Format = *format
		}
		return set, nil
	})
	if err != nil {
		return WebhookView{}, err
	}
	return WebhookView{URL: set.URL, SecretSet: true, Source: "partner", Format: set.Format, UpdatedAt: set.UpdatedAt, Secret: generated}, nil
}

// Delete removes clientID's own webhook setting, its secret with it, so its
// events go where a partner without one's go: to the deployment's default
// URL when the operator set one, else they wait unsent until it sets one
// again (the dispatcher reads the target at each attempt, so events
// already queued follow). Deleting a
// setting that does not exist is no error: the partner's wish, no setting
// of its own, holds either way.
func (w *Webhooks) Delete(ctx context.Context, clientID string) error {
	_, err := w.Store.DeletePartnerWebhook(ctx, clientID)
	return err
}

// Get is clientID's setting as the partner sees it. The deployment
// default's URL is not shown: it is the operator's, not the partner's.
func (w *Webhooks) Get(ctx context.Context, clientID string) (WebhookView, error) {
	var view WebhookView
	endpoint := clientID
	set, err := w.Store.GetPartnerWebhook(ctx, clientID)
	switch {
	case err == nil:
		view = WebhookView{URL: set.URL, SecretSet: set.SealedSecret != "", Source: "partner", Format: webhookFormat(set.Format), UpdatedAt: set.UpdatedAt}
	case !errors.Is(err, ErrNotFound):
		return WebhookView{}, err
	case w.Default.URL != "":
		view = WebhookView{SecretSet: len(w.Default.Secret) > 0, Source: "default", Format: webhookFormat(w.Default.Format)}
		// Its events go to the deployment's URL, paused as one
		// receiver whoever's events it failed.
		endpoint = DefaultWebhookEndpoint
	default:
		return WebhookView{Source: "none"}, nil
	}
	// A partner whose events stop arriving sees why here: its receiver
	// failed and the bank waits before trying it again.
	pause, err := w.Store.WebhookPause(ctx, endpoint)
	if err != nil {
		return WebhookView{}, err
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	if pause.Until.After(now()) {
		view.PausedUntil, view.FailedInARow = pause.Until.UTC(), pause.Failures
	}
	return view, nil
}

// Target resolves where clientID's events go and in which format;
// ErrNoWebhookTarget when nowhere. The dispatcher calls it for every
// attempt, so a changed setting applies from the next attempt on.
func (w *Webhooks) Target(ctx context.Context, clientID string) (WebhookTarget, error) {
	// Bounded apart from the send that follows it, which the sender's own
	// timeout bounds: a store that stopped answering fails the lookup, and
	// the event is released unsent, instead of holding its worker.
	bound := w.LookupTimeout
	if bound <= 0 {
		bound = webhookStoreTimeout
	}
	lctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	set, err := w.Store.GetPartnerWebhook(lctx, clientID)
	if err != nil && ctx.Err() == nil && lctx.Err() != nil {
		err = fmt.Errorf("%w (%s): %w", ErrWebhookStoreStalled, bound, err)
	}
	switch {
	case err == nil:
		secret, err := w.Box.Open(clientID, set.SealedSecret)
		if err != nil {
			// Sealed under keys this process does not hold: a replica
			// started without the others' --banking-webhook-key (its data
			// directory not copied). Nothing is sent, so it is no failed
			// delivery: the event goes back for a process holding the key,
			// spending none of its attempts and pausing no receiver, which
			// every replica would honour.
			return WebhookTarget{}, &TargetLookupError{Err: fmt.Errorf("partner %s: %w", clientID, err)}
		}
		return WebhookTarget{URL: set.URL, Secret: secret, Format: webhookFormat(set.Format), Endpoint: clientID}, nil
	case !errors.Is(err, ErrNotFound):
		return WebhookTarget{}, &TargetLookupError{Err: err}
	case w.Default.URL != "":
		t := w.Default
		t.Endpoint = DefaultWebhookEndpoint
		return t, nil
	}
	return WebhookTarget{}, ErrNoWebhookTarget
}

// TargetLookupError is a partner's webhook setting that could not be read
// from the store (the database unavailable for a moment, say), or whose
// secret opens under none of this process's webhook keys. Nothing was
// sent, so it is no failed delivery of the event: the dispatcher records no
// attempt and pauses no partner for it, and the event is tried again.
type TargetLookupError struct{ Err error }

func (e *TargetLookupError) Error() string { return "webhook target: " + e.Err.Error() }
func (e *TargetLookupError) Unwrap() error { return e.Err }

// NotSentError is a delivery try that failed on our side before anything
// was sent to the receiver: the body could not be made or signed (a jose
// target and no bank key to sign with, say) or the request not built. It
// says nothing of the receiver, so the dispatcher pauses no endpoint for
// it: the endpoint may be the deployment default, and pausing it would
// hold back every other partner's events that go there, for a fault of
// ours in one partner's. Unlike a TargetLookupError it is recorded as an
// attempt of the event, with no HTTP status and its message as the error,
// so the partner's delivery log shows why nothing arrived, and it is
// retried by the normal backoff: it spends the attempt, so a deployment
// misconfigured for good fails the event after MaxAttempts instead of
// trying it again at every pass. Its message is Err's, unchanged.
type NotSentError struct{ Err error }

func (e *NotSentError) Error() string { return e.Err.Error() }
func (e *NotSentError) Unwrap() error { return e.Err }

// Deliveries is clientID's delivery log, newest first (limit 1..500,
// default 50).
func (w *Webhooks) Deliveries(ctx context.Context, clientID string, limit int) ([]WebhookDelivery, error) {
	if limit <= 0 {
		limit = 50
	}
	return w.Store.PartnerDeliveries(ctx, clientID, min(limit, 500))
}

// leftToOthers is an event released unsent because its partner's secret
// opens under none of this process's webhook keys (a replica started
// without the others' keys). Unlike a failing store it does not stop the
// worker: the pass goes on and reports err when it ends.
type leftToOthers struct{ err error }

func (e *leftToOthers) Error() string { return e.err.Error() }
func (e *leftToOthers) Unwrap() error { return e.err }
