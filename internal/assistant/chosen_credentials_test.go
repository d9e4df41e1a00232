package assistant_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// A client created with a chosen id and secret is issued tokens under the
// authorization key they make, and only under it; a chosen pair of another
// form, or an id already taken, creates nothing.
func TestCreateClientWithChosenCredentials(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, assistant.Config{})
	const id, secret = "6f1c2d3e-4b5a-4c6d-8e7f-901234567890", "00112233445566778899aabbccddeeff"
	creds, err := svc.CreateClientWith(ctx, id, secret, assistant.ScopeCorp, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := base64.StdEncoding.EncodeToString([]byte(id + ":" + secret))
	if creds.ClientID != id || creds.ClientSecret != secret || creds.AuthorizationKey != key {
		t.Fatalf("credentials %+v, want the chosen ones", creds)
	}
	if _, _, err := svc.IssueToken(ctx, "Basic "+key, "72384bd5-0ca0-4cfd-9ac7-65d75258284c", "GIGACHAT_API_CORP", "192.0.2.1"); err != nil {
		t.Errorf("token for the chosen key: %v", err)
	}
	wrong := base64.StdEncoding.EncodeToString([]byte(id + ":" + strings.ToUpper(secret)))
	if _, _, err := svc.IssueToken(ctx, "Basic "+wrong, "72384bd5-0ca0-4cfd-9ac7-65d75258284c", "GIGACHAT_API_CORP", "192.0.2.1"); err == nil {
		t.Error("a token for another secret of the chosen id")
	}
	for _, c := range []struct {
		name, id, secret string
		conflict         bool
	}{
		{"id taken", id, secret, true},
		{"id not a UUID", "ci-client", secret, false},
		{"secret of 31 characters", "", strings.Repeat("a", 31), false},
		{"secret of 129 characters", "", strings.Repeat("a", 129), false},
		{"secret with a colon", "", strings.Repeat("a", 32) + ":", false},
		{"secret with a space", "", strings.Repeat("a", 32) + " ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.CreateClientWith(ctx, c.id, c.secret, assistant.ScopeCorp, nil)
			if err == nil || errors.Is(err, assistant.ErrConflict) != c.conflict {
				t.Fatalf("CreateClientWith(%q, %q): %v, want a refusal (conflict %v)", c.id, c.secret, err, c.conflict)
			}
		})
	}
	for _, s := range []string{strings.Repeat("a", 32), strings.Repeat("Z9_-", 32), "6f1c2d3e-4b5a-4c6d-8e7f-901234567890"} {
		if !assistant.ChosenSecretValid(s) {
			t.Errorf("ChosenSecretValid(%q) = false", s)
		}
	}
}
