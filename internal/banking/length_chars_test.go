package banking

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestWebhookSecretLengthInCharacters: the webhook secret's bounds count
// characters, as the contract's minLength and maxLength do, so a secret of
// 256 two-byte letters (512 bytes) is taken and one of 257 is refused.
func TestWebhookSecretLengthInCharacters(t *testing.T) {
	box, _ := NewSecretBox(bytes.Repeat([]byte{1}, WebhookKeySize))
	w := &Webhooks{Store: memWebhookStore{}, Box: box}
	ctx := context.Background()
	atLimit := strings.Repeat("ж", maxWebhookSecret)
	if _, err := w.Set(ctx, "p1", "https://x.example/", &atLimit, nil); err != nil {
		t.Errorf("a secret of %d characters (%d bytes): %v", maxWebhookSecret, len(atLimit), err)
	}
	over := atLimit + "ж"
	if _, err := w.Set(ctx, "p1", "https://x.example/", &over, nil); KindOf(err) != KindValidation {
		t.Errorf("a secret of %d characters: %v, want a validation fault", maxWebhookSecret+1, err)
	}
}

// TestLimitChangeLengthsInCharacters: businessCardId and number are
// bounded at 64 characters, the contract's maxLength, not at 64 bytes of
// their UTF-8.
func TestLimitChangeLengthsInCharacters(t *testing.T) {
	body := func(card, number string) []byte {
		b, _ := json.Marshal(map[string]any{"code": "NON_RENEW", "businessCardId": card, "externalId": "4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2a",
			"limit": json.Number("1"), "number": number})
		return b
	}
	atLimit := strings.Repeat("ж", maxLimitText)
	if _, err := ParseLimitChange(body(atLimit, atLimit)); err != nil {
		t.Errorf("businessCardId and number of %d characters (%d bytes): %v", maxLimitText, len(atLimit), err)
	}
	for _, tc := range []struct{ field, card, number string }{
		{"businessCardId", atLimit + "ж", "1"},
		{"number", "c1", atLimit + "ж"},
	} {
		_, err := ParseLimitChange(body(tc.card, tc.number))
		e, ok := err.(*Error)
		if !ok || e.Kind != KindValidation || len(e.FieldNames) != 1 || e.FieldNames[0] != tc.field {
			t.Errorf("%s of %d characters: %v, want a validation fault naming it", tc.field, maxLimitText+1, err)
		}
	}
	card := Card{ID: atLimit, PAN: "4000000000000002", ExpiryDate: "2030-01-31", Status: CardActive, AccountNumber: "40702810000000000001"}
	if err := card.Validate(); err != nil {
		t.Errorf("a card id of %d characters: %v", maxLimitText, err)
	}
}
