package bankapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
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
// X-Event-Id (externalId and eventTime) is the dedup key.
type WebhookSender struct {
	Targets WebhookTargets
	// URLs is the rule the connections follow (NewWebhookClient): its zero
	// value reaches only public addresses over https.
	URLs banking.WebhookURLPolicy
	// Client replaces NewWebhookClient(URLs) (tests of the sender alone).
	Client *http.Client

	once   sync.Once
	client *http.Client
}

type webhookBody struct {
	ExternalID  string `json:"externalId"`
	BankStatus  string `json:"bankStatus"`
	BankComment string `json:"bankComment"`
	EventTime   string `json:"eventTime"`
}

// WebhookSignature is the X-Signature value of body under secret.
func WebhookSignature(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func (s *WebhookSender) Send(ctx context.Context, ev banking.WebhookEvent) (int, error) {
	body, err := json.Marshal(webhookBody{ev.ExternalID, ev.BankStatus, ev.BankComment, ev.EventTime.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return 0, err
	}
	target, err := s.Targets.Target(ctx, ev.ClientID)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
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
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, nil
}
