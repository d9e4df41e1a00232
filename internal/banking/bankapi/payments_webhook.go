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
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
// (the target's Endpoint), which a failure pauses. A failure of ours before
// the request went out is a banking.NotSentError, which pauses no receiver.
func (s *WebhookSender) Send(ctx context.Context, ev banking.WebhookEvent) (banking.WebhookSent, error) {
	wb := webhookBody{ev.ExternalID, ev.BankStatus, banking.Comment(ev.BankComment), ev.EventTime.UTC().Format(time.RFC3339Nano)}
	body, err := json.Marshal(wb)
	if err != nil {
		return banking.WebhookSent{}, &banking.NotSentError{Err: err}
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
			return sent, &banking.NotSentError{Err: errors.New("no bank signing key for a jose webhook")}
		}
		payload, err := json.Marshal(joseWebhookBody{wb, ev.ClientID})
		if err != nil {
			return sent, &banking.NotSentError{Err: err}
		}
		jws, err := s.JWS.SignWebhook(payload)
		if err != nil {
			return sent, &banking.NotSentError{Err: err}
		}
		body, contentType = []byte(jws), joseContentType
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.URL, bytes.NewReader(body))
	if err != nil {
		return sent, &banking.NotSentError{Err: err}
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
		return sent, withURLHost(err, req.URL, target.Endpoint == banking.DefaultWebhookEndpoint)
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
// scheme and host, and with the addresses of our side dropped: the local
// address of a connection (net.OpError's Source) and the resolver a
// lookup asked (net.DNSError's Server), which are the bank's own network.
// With operators (the target is the deployment default) the receiver's
// resolved address (net.OpError's Addr) goes too: "dial tcp 10.1.2.3:8443:
// connect: connection refused" reads "dial tcp: connect: connection
// refused". The error is kept in the delivery log, which the partner reads
// (GET /v1/webhook/deliveries), and net/http's error quotes the whole URL
// and the dialled address: the operator's default URL, which Webhooks.Get
// does not show a partner, would give away its path and query, where
// receivers take their tokens (url.Error drops only a password), and the
// operator's internal address of its receiver. A partner's own receiver
// keeps its address, which is the partner's to know and helps it debug.
func withURLHost(err error, u *url.URL, operators bool) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = &url.Error{Op: ue.Op, URL: u.Scheme + "://" + u.Host, Err: ue.Err}
	}
	if clean := withoutAddrs(err, operators); clean != nil {
		return clean
	}
	return err
}

// withoutAddrs is err with the addresses withURLHost drops taken out of
// every net.OpError and net.DNSError in its chain, or nil when its chain
// holds neither. The net errors are rebuilt with the rest of their fields;
// a wrapper of another type, whose fields this cannot set (fmt.Errorf's,
// net/http's own), is replaced by an error of the same message with the
// wrapped ones' text swapped for their rebuilt text, which wraps the
// rebuilt ones.
func withoutAddrs(err error, operators bool) error {
	switch e := err.(type) {
	case nil:
		return nil
	case *net.OpError:
		c := *e
		c.Source = nil
		if operators {
			c.Addr = nil
		}
		if inner := withoutAddrs(e.Err, operators); inner != nil {
			c.Err = inner
		}
		return &c
	case *net.DNSError:
		c := *e
		c.Server = ""
		if inner := withoutAddrs(e.UnwrapErr, operators); inner != nil {
			c.UnwrapErr = inner
		}
		return &c
	case *url.Error:
		inner := withoutAddrs(e.Err, operators)
		if inner == nil {
			return nil
		}
		return &url.Error{Op: e.Op, URL: e.URL, Err: inner}
	case interface{ Unwrap() error }:
		return rewrapped(err, []error{e.Unwrap()}, operators)
	case interface{ Unwrap() []error }:
		// errors.Join of the dial guard's tries, one per address.
		return rewrapped(err, e.Unwrap(), operators)
	}
	return nil
}

// rewrapped is err, which wraps inner, rebuilt as withoutAddrs does, or nil
// when none of inner holds an address to drop.
func rewrapped(err error, inner []error, operators bool) error {
	msg, changed := err.Error(), false
	clean := make([]error, len(inner))
	for i, in := range inner {
		clean[i] = withoutAddrs(in, operators)
		if clean[i] == nil {
			clean[i] = in
			continue
		}
		msg = strings.Replace(msg, in.Error(), clean[i].Error(), 1)
		changed = true
	}
	if !changed {
		return nil
	}
	return &addrsDropped{msg: msg, errs: clean}
}

// addrsDropped is a wrapper error rebuilt by withoutAddrs.
type addrsDropped struct {
	msg  string
	errs []error
}

func (e *addrsDropped) Error() string   { return e.msg }
func (e *addrsDropped) Unwrap() []error { return e.errs }
