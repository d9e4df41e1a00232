package banking

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"
)

// PartnerChannel is the channelInfo of documents a partner application
// creates through the API; the webhook of a document goes to that partner.
func PartnerChannel(clientID string) string { return "API:" + clientID }

// PartnerWebhook is a partner application's own webhook setting (reference
// §12 leaves the registration out; ours is `partnerapi banking webhook set`
// and PUT /v1/webhook). The secret is an HMAC key: it has to be recovered to
// sign each delivery, so it is stored sealed under the deployment's webhook
// key, never hashed and never in clear.
type PartnerWebhook struct {
	ClientID     string
	URL          string
	SealedSecret string // SecretBox.Seal output
	UpdatedAt    time.Time
}

// WebhookDelivery is one queued event of a partner with its attempts, as
// the delivery log shows it.
type WebhookDelivery struct {
	ID          int64
	ExternalID  string
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
	// GetPartnerWebhook returns the partner's setting or ErrNotFound.
	GetPartnerWebhook(ctx context.Context, clientID string) (PartnerWebhook, error)
	// PartnerDeliveries lists the newest events of documents the partner
	// created, newest first, each with its attempts.
	PartnerDeliveries(ctx context.Context, clientID string, limit int) ([]WebhookDelivery, error)
}

// SecretBox seals webhook secrets with AES-256-GCM under the deployment's
// webhook key. The partner's client_id is the associated data, so a sealed
// secret copied to another partner's row does not open.
type SecretBox struct{ aead cipher.AEAD }

// WebhookKeySize is the length of the webhook key in bytes.
const WebhookKeySize = 32

// NewSecretBox makes a box from a 32-byte key.
func NewSecretBox(key []byte) (*SecretBox, error) {
	if len(key) != WebhookKeySize {
		return nil, fmt.Errorf("webhook key must be %d bytes, got %d", WebhookKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &SecretBox{aead: aead}, nil
}

// sealedPrefix marks the format (AES-256-GCM, random 12-byte nonce) so a
// later format can be told apart.
const sealedPrefix = "v1:"

// Seal encrypts secret for clientID.
func (b *SecretBox) Seal(clientID string, secret []byte) string {
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := b.aead.Seal(nonce, nonce, secret, []byte(clientID))
	return sealedPrefix + base64.StdEncoding.EncodeToString(out)
}

// ErrSealedSecret means a stored secret does not open under this key (the
// key changed, or the row was tampered with).
var ErrSealedSecret = errors.New("banking: webhook secret does not open with this webhook key")

// Open decrypts a sealed secret of clientID.
func (b *SecretBox) Open(clientID, sealed string) ([]byte, error) {
	if len(sealed) < len(sealedPrefix) || sealed[:len(sealedPrefix)] != sealedPrefix {
		return nil, ErrSealedSecret
	}
	raw, err := base64.StdEncoding.DecodeString(sealed[len(sealedPrefix):])
	n := b.aead.NonceSize()
	if err != nil || len(raw) < n {
		return nil, ErrSealedSecret
	}
	secret, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(clientID))
	if err != nil {
		return nil, ErrSealedSecret
	}
	return secret, nil
}

// WebhookTarget is where one partner's events go and the key they are
// signed with.
type WebhookTarget struct {
	URL    string
	Secret []byte
}

// Webhooks manages partners' webhook settings and resolves each event's
// target: the partner's own setting, else the deployment default (flags).
type Webhooks struct {
	Store   WebhookSettingsStore
	Box     *SecretBox
	Default WebhookTarget // URL "": partners without a setting get nothing
	Now     func() time.Time
}

// WebhookView is a setting as the partner may see it: never the secret.
type WebhookView struct {
	URL       string    `json:"url,omitempty"`
	SecretSet bool      `json:"secretSet"`
	Source    string    `json:"source"` // partner, default or none
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
	// Secret is filled only in the answer that generated it.
	Secret string `json:"secret,omitempty"`
}

const (
	minWebhookSecret = 16
	maxWebhookSecret = 256
)

// ValidWebhookURL checks a partner's webhook URL: absolute http(s) with a
// host, no credentials, at most 2048 characters.
func ValidWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || len(raw) > 2048:
		return webhookFault("url", "адрес: абсолютный URL http(s) до 2048 символов")
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return webhookFault("url", "адрес: абсолютный URL http(s) до 2048 символов")
	case u.User != nil:
		return webhookFault("url", "адрес не должен содержать учётные данные")
	}
	return nil
}

func webhookFault(field, check string) error {
	return &Error{Kind: KindValidation, Message: "Объект Webhook не соответствует модели",
		FieldNames: []string{field}, Checks: []string{check}}
}

// Set stores clientID's webhook URL and secret. A nil secret keeps the one
// stored; when none is stored a random one is generated and returned in
// the view, the only time it is ever shown.
func (w *Webhooks) Set(ctx context.Context, clientID, rawURL string, secret *string) (WebhookView, error) {
	if err := ValidWebhookURL(rawURL); err != nil {
		return WebhookView{}, err
	}
	if secret != nil && (utf8.RuneCountInString(*secret) < minWebhookSecret || len(*secret) > maxWebhookSecret) {
		return WebhookView{}, webhookFault("secret", fmt.Sprintf("секрет: от %d до %d символов", minWebhookSecret, maxWebhookSecret))
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	set := PartnerWebhook{ClientID: clientID, URL: rawURL, UpdatedAt: now().UTC()}
	var generated string
	switch old, err := w.Store.GetPartnerWebhook(ctx, clientID); {
	case secret != nil:
		set.SealedSecret = w.Box.Seal(clientID, []byte(*secret))
	case err == nil:
		set.SealedSecret = old.SealedSecret
	case errors.Is(err, ErrNotFound):
		generated = NewClientSecret()
		set.SealedSecret = w.Box.Seal(clientID, []byte(generated))
	default:
		return WebhookView{}, err
	}
	if err := w.Store.SetPartnerWebhook(ctx, set); err != nil {
		return WebhookView{}, err
	}
	return WebhookView{URL: set.URL, SecretSet: true, Source: "partner", UpdatedAt: set.UpdatedAt, Secret: generated}, nil
}

// Get is clientID's setting as the partner sees it. The deployment
// default's URL is not shown: it is the operator's, not the partner's.
func (w *Webhooks) Get(ctx context.Context, clientID string) (WebhookView, error) {
	set, err := w.Store.GetPartnerWebhook(ctx, clientID)
	switch {
	case err == nil:
		return WebhookView{URL: set.URL, SecretSet: set.SealedSecret != "", Source: "partner", UpdatedAt: set.UpdatedAt}, nil
	case !errors.Is(err, ErrNotFound):
		return WebhookView{}, err
	case w.Default.URL != "":
		return WebhookView{SecretSet: len(w.Default.Secret) > 0, Source: "default"}, nil
	}
	return WebhookView{Source: "none"}, nil
}

// Target resolves where clientID's events go; ErrNoWebhookTarget when
// nowhere.
func (w *Webhooks) Target(ctx context.Context, clientID string) (WebhookTarget, error) {
	set, err := w.Store.GetPartnerWebhook(ctx, clientID)
	switch {
	case err == nil:
		secret, err := w.Box.Open(clientID, set.SealedSecret)
		if err != nil {
			return WebhookTarget{}, err
		}
		return WebhookTarget{URL: set.URL, Secret: secret}, nil
	case !errors.Is(err, ErrNotFound):
		return WebhookTarget{}, err
	case w.Default.URL != "":
		return w.Default, nil
	}
	return WebhookTarget{}, ErrNoWebhookTarget
}

// Deliveries is clientID's delivery log, newest first (limit 1..500,
// default 50).
func (w *Webhooks) Deliveries(ctx context.Context, clientID string, limit int) ([]WebhookDelivery, error) {
	if limit <= 0 {
		limit = 50
	}
	return w.Store.PartnerDeliveries(ctx, clientID, min(limit, 500))
}
