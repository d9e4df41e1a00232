package assistant_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// basic is the Authorization value a client sends for user and password.
func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// TestIssueLegacyToken checks the password flow's credentials as the
// OAuth flow checks an authorization key: the client id as the user, its
// secret as the password, and a token of the client's own scope that
// lives the OAuth token's 30 minutes.
func TestIssueLegacyToken(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newService(t, assistant.Config{Now: func() time.Time { return now }})
	ctx := context.Background()
	c, err := s.CreateClient(ctx, assistant.ScopeB2B, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, auth string
		want       error // nil: a token
	}{
		{"good", basic(c.ClientID, c.ClientSecret), nil},
		{"scheme in lower case", "basic " + c.AuthorizationKey, nil},
		{"wrong password", basic(c.ClientID, c.ClientSecret+"x"), assistant.ErrCredentials},
		{"empty password", basic(c.ClientID, ""), assistant.ErrCredentials},
		{"unknown user", basic("c757a9c5-de04-498f-baa3-efcc54de7853", c.ClientSecret), assistant.ErrCredentials},
		{"no Authorization", "", assistant.ErrAuthHeader},
		{"not Base64", "Basic %%%", assistant.ErrAuthHeader},
		{"no colon", "Basic " + base64.StdEncoding.EncodeToString([]byte(c.ClientID)), assistant.ErrAuthHeader},
		{"empty user", basic("", c.ClientSecret), assistant.ErrAuthHeader},
		{"a bearer token", "Bearer " + c.AuthorizationKey, assistant.ErrAuthHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, exp, err := s.IssueLegacyToken(ctx, tt.auth, "192.0.2.1")
			if tt.want != nil {
				if !errors.Is(err, tt.want) || tok != "" {
					t.Fatalf("got %q, %v; want %v", tok, err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !exp.Equal(now.Add(30 * time.Minute)) {
				t.Errorf("expires %v, want 30 minutes from now", exp)
			}
			p, err := s.Authenticate(ctx, tok)
			if err != nil || p.ClientID != c.ClientID || p.Scope != assistant.ScopeB2B {
				t.Errorf("Authenticate = %+v %v, want the client with its scope", p, err)
			}
		})
	}
}

// TestIssueLegacyTokenRate shares the OAuth flow's per-client rate: the
// two flows are two doors to one client's tokens.
func TestIssueLegacyTokenRate(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newService(t, assistant.Config{Now: func() time.Time { return now }, TokenRate: 2})
	ctx := context.Background()
	c, err := s.CreateClient(ctx, assistant.ScopeCorp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IssueToken(ctx, "Basic "+c.AuthorizationKey, "72384bd5-0ca0-4cfd-9ac7-65d75258284c", "ASSISTANT_API_CORP", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IssueLegacyToken(ctx, basic(c.ClientID, c.ClientSecret), "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IssueLegacyToken(ctx, basic(c.ClientID, c.ClientSecret), "192.0.2.1"); !errors.Is(err, assistant.ErrTokenRate) {
		t.Fatalf("third token in a second: %v, want ErrTokenRate", err)
	}
	now = now.Add(time.Second)
	if _, _, err := s.IssueLegacyToken(ctx, basic(c.ClientID, c.ClientSecret), "192.0.2.1"); err != nil {
		t.Fatalf("a second later: %v", err)
	}
}
