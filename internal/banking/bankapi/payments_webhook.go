package bankapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"partnerapi/internal/banking"
)

// WebhookTargets resolves where a partner's events go (banking.Webhooks).
type WebhookTargets interface {
	Target(ctx context.Context, clientID string) (banking.WebhookTarget, error)
}

// WebhookSender posts final payment statuses to the partner that created
// the document (reference §12) as JSON {externalId, bankStatus,
// bankComment, eventTime}: to the partner's own URL, else the deployment's.
// The body is signed with HMAC-SHA256 under that target's secret in
// X-Signature, so the partner can tell our calls from forged ones;
// X-Event-Id (externalId and eventTime) is the dedup key. A partner whose
// setting asks for jose gets the compact JWS of that same JSON under the
// bank's key instead, as application/jose, with the partner's client_id
// added as clientId and typ banking.JWSTypeWebhook in the header: the
// bank's key signs API answers too, which any partner can get, so the
// receiver checks typ (no answer passes for a webhook) and clientId (no
// webhook of another partner does). X-Signature then covers the JWS, the
// body actually sent, so an HMAC check written for JSON bodies keeps
// passing.
type WebhookSender struct {
	Targets WebhookTargets
	// JWS is the bank's key signing jose bodies; without it an event of a
	// jose partner fails its attempt (and is retried) rather than going
	// out unsigned in a format the partner did not choose.
	JWS *banking.BankKey
	// URLs is the rule the connections follow (NewWebhookClient): its zero
	// value reaches only public addresses over https.
	URLs banking.WebhookURLPolicy
	// Client replaces NewWebhookClient(URLs) (tests of the sender alone).
	Client *http.Client

	once   sync.Once
	client *http.Client
}

// webhookBody is the JSON of a final-status webhook. bankComment is
// banking.Comment, null when the bank has none, as every other answer that
// carries bankStatus writes it, so a receiver reading the document and its
// webhook sees the same value.
type webhookBody struct {
	ExternalID  string          `json:"externalId"`
	BankStatus  string          `json:"bankStatus"`
	BankComment banking.Comment `json:"bankComment"`
	EventTime   string          `json:"eventTime"`
}

// joseWebhookBody is the JWS payload of a jose webhook: the JSON body and
// its recipient, the partner's client_id.
type joseWebhookBody struct {
	webhookBody
	ClientID string `json:"clientId"`
}

// WebhookSignature is the X-Signature value of body under secret.
func WebhookSignature(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Send posts ev and reports the format of the body, json or jose, which
// the delivery log records with the attempt, and the receiver it went to
// (the target's Endpoint), which a failure pauses.
func (s *WebhookSender) Send(ctx context.Context, ev banking.WebhookEvent) (banking.WebhookSent, error) {
	wb := webhookBody{ev.ExternalID, ev.BankStatus, banking.Comment(ev.BankComment), ev.EventTime.UTC().Format(time.RFC3339Nano)}
	body, err := json.Marshal(wb)
	if err != nil {
		return banking.WebhookSent{}, err
	}
	target, err := s.Targets.Target(ctx, ev.ClientID)
	if err != nil {
		return banking.WebhookSent{}, err
	}
	sent := banking.WebhookSent{Format: banking.WebhookFormatJSON, Endpoint: target.Endpoint}
	contentType := "application/json"
	if target.Format == banking.WebhookFormatJOSE {
		sent.Format = banking.WebhookFormatJOSE
		if s.JWS == nil {
			return sent, errors.New("no bank signing key for a jose webhook")
		}
		payload, err := json.Marshal(joseWebhookBody{wb, ev.ClientID})
		if err != nil {
			return sent, err
		}
		jws, err := s.JWS.SignWebhook(payload)
		if err != nil {
			return sent, err
		}
		body, contentType = []byte(jws), joseContentType
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.URL, bytes.NewReader(body))
	if err != nil {
		return sent, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Signature", WebhookSignature(target.Secret, body))
	req.Header.Set("X-Event-Id", ev.ExternalID+"/"+strconv.FormatInt(ev.EventTime.UnixMicro(), 10))
	s.once.Do(func() {
		s.client = s.Client
		if s.client == nil {
			s.client = NewWebhookClient(s.URLs)
		}
	})
	resp, err := s.client.Do(req)
	if err != nil {
		return sent, withURLHost(err, req.URL)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	sent.Status = resp.StatusCode
	if sent.Status < 200 || sent.Status > 299 {
		// A receiver shedding load says when to come back (429, 503);
		// the dispatcher waits that long within its bounds.
		sent.RetryAfter, sent.RetryAt = parseRetryAfter(resp.Header.Get("Retry-After"))
	}
	return sent, nil
}

// withURLHost returns a failed delivery's error with its URL cut to the
// scheme and host. The error is kept in the delivery log, which the
// partner reads (GET /v1/webhook/deliveries), and net/http's error quotes
// the whole URL: the operator's default URL, which Webhooks.Get does not
// show a partner, would give away its path and query, where receivers
// take their tokens (url.Error drops only a password).
func withURLHost(err error, u *url.URL) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return &url.Error{Op: ue.Op, URL: u.Scheme + "://" + u.Host, Err: ue.Err}
}
