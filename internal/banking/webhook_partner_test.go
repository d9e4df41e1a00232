package banking

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestSecretBox(t *testing.T) {
	box, err := NewSecretBox(bytes.Repeat([]byte{7}, WebhookKeySize))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSecretBox(bytes.Repeat([]byte{8}, WebhookKeySize))
	sealed := box.Seal("p1", []byte("partner-secret-value"))
	if strings.Contains(sealed, "partner-secret-value") || sealed == box.Seal("p1", []byte("partner-secret-value")) {
		t.Fatalf("sealing is not randomised encryption: %q", sealed)
	}
	if got, err := box.Open("p1", sealed); err != nil || string(got) != "partner-secret-value" {
		t.Fatalf("open: %q %v", got, err)
	}
	tampered := sealed[:len(sealed)-2] + "AA"
	for name, tc := range map[string]struct {
		box            *SecretBox
		client, sealed string
	}{
		"another partner's row": {box, "p2", sealed},
		"another key":           {other, "p1", sealed},
		"tampered":              {box, "p1", tampered},
		"not sealed":            {box, "p1", "partner-secret-value"},
		"short":                 {box, "p1", "v1:AAAA"},
	} {
		if _, err := tc.box.Open(tc.client, tc.sealed); !errors.Is(err, ErrSealedSecret) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewSecretBox([]byte("short")); err == nil {
		t.Fatal("short key accepted")
	}
}

// memWebhookStore is an in-memory WebhookSettingsStore for the service's
// rules; the SQL store has its own conformance suite.
type memWebhookStore map[string]PartnerWebhook

func (m memWebhookStore) SetPartnerWebhook(_ context.Context, w PartnerWebhook) error {
	m[w.ClientID] = w
	return nil
}

// UpdatePartnerWebhook needs no lock here: the service's tests call it
// from one goroutine.
func (m memWebhookStore) UpdatePartnerWebhook(_ context.Context, id string, fn func(PartnerWebhook, bool) (PartnerWebhook, error)) error {
	old, found := m[id]
	w, err := fn(old, found)
	if err != nil {
		return err
	}
	m[id] = w
	return nil
}

func (m memWebhookStore) GetPartnerWebhook(_ context.Context, id string) (PartnerWebhook, error) {
	if w, ok := m[id]; ok {
		return w, nil
	}
	return PartnerWebhook{}, ErrNotFound
}

func (m memWebhookStore) DeletePartnerWebhook(_ context.Context, id string) (bool, error) {
	_, ok := m[id]
	delete(m, id)
	return ok, nil
}

func (m memWebhookStore) PartnerDeliveries(context.Context, string, int) ([]WebhookDelivery, error) {
	return nil, nil
}

func (m memWebhookStore) PartnerWebhooks(context.Context) ([]PartnerWebhook, error) {
	var out []PartnerWebhook
	for _, w := range m {
		out = append(out, w)
	}
	return out, nil
}

func (m memWebhookStore) ReplaceWebhookSecret(_ context.Context, id, old, new string) (bool, error) {
	w, ok := m[id]
	if !ok || w.SealedSecret != old {
		return false, nil
	}
	w.SealedSecret = new
	m[id] = w
	return true, nil
}

// WebhookPause: the service's tests never pause a partner.
func (m memWebhookStore) WebhookPause(context.Context, string) (WebhookPause, error) {
	return WebhookPause{}, nil
}

func TestWebhooksTargets(t *testing.T) {
	box, _ := NewSecretBox(bytes.Repeat([]byte{1}, WebhookKeySize))
	store := memWebhookStore{}
	w := &Webhooks{Store: store, Box: box}
	ctx := context.Background()
	if _, err := w.Target(ctx, "p1"); !errors.Is(err, ErrNoWebhookTarget) {
		t.Fatalf("no setting, no default: %v", err)
	}
	for _, bad := range []string{"", "partner.example/hook", "mailto:a@b", "https://", "https://u:p@x.example/"} {
		if _, err := w.Set(ctx, "p1", bad, nil, nil); KindOf(err) != KindValidation {
			t.Errorf("url %q: %v", bad, err)
		}
	}
	long := strings.Repeat("s", 257)
	if _, err := w.Set(ctx, "p1", "https://x.example/", &long, nil); KindOf(err) != KindValidation {
		t.Errorf("long secret: %v", err)
	}
	v, err := w.Set(ctx, "p1", "https://x.example/", nil, nil)
	if err != nil || len(v.Secret) < minWebhookSecret {
		t.Fatalf("generated: %+v %v", v, err)
	}
	tg, err := w.Target(ctx, "p1")
	if err != nil || tg.URL != "https://x.example/" || string(tg.Secret) != v.Secret {
		t.Fatalf("target %+v %v", tg, err)
	}
	// With a default, partners without a setting use it; p1 keeps its own.
	w.Default = WebhookTarget{URL: "https://operator.example/", Secret: []byte("op")}
	if tg, _ := w.Target(ctx, "p2"); tg.URL != "https://operator.example/" {
		t.Fatalf("default %+v", tg)
	}
	if tg, _ := w.Target(ctx, "p1"); tg.URL != "https://x.example/" {
		t.Fatalf("own %+v", tg)
	}
	// A key change makes the stored secret unusable rather than wrong.
	w.Box, _ = NewSecretBox(bytes.Repeat([]byte{2}, WebhookKeySize))
	if _, err := w.Target(ctx, "p1"); !errors.Is(err, ErrSealedSecret) {
		t.Fatalf("after key change: %v", err)
	}
}

// The body format is validated, defaults to json, is kept when a later
// Set omits it, and reaches the target the dispatcher resolves per attempt.
func TestWebhooksFormat(t *testing.T) {
	box, _ := NewSecretBox(bytes.Repeat([]byte{1}, WebhookKeySize))
	w := &Webhooks{Store: memWebhookStore{}, Box: box}
	ctx := context.Background()
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name   string
		format *string
		fault  bool
		want   string
	}{
		{name: "first set without a format is json", want: WebhookFormatJSON},
		{name: "jose", format: str("jose"), want: WebhookFormatJOSE},
		{name: "omitted keeps jose", want: WebhookFormatJOSE},
		{name: "upper case is not a format", format: str("JOSE"), fault: true},
		{name: "empty is not a format", format: str(""), fault: true},
		{name: "xml", format: str("xml"), fault: true},
		{name: "back to json", format: str("json"), want: WebhookFormatJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := w.Set(ctx, "p1", "https://x.example/", nil, tc.format)
			if tc.fault {
				var e *Error
				if !errors.As(err, &e) || e.Kind != KindValidation || len(e.FieldNames) != 1 || e.FieldNames[0] != "format" {
					t.Fatalf("want a validation fault naming format, got %v", err)
				}
				return
			}
			if err != nil || v.Format != tc.want {
				t.Fatalf("set: %+v %v", v, err)
			}
			if g, err := w.Get(ctx, "p1"); err != nil || g.Format != tc.want {
				t.Fatalf("get: %+v %v", g, err)
			}
			if tg, err := w.Target(ctx, "p1"); err != nil || tg.Format != tc.want {
				t.Fatalf("target: %+v %v", tg, err)
			}
		})
	}
}
