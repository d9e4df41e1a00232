package banking

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ValidClientSecret reports whether s has the provider's client secret
// form: 40 characters of [A-Za-z0-9_-] (reference §3), what NewClientSecret
// makes.
func ValidClientSecret(s string) bool {
	if len(s) != ClientSecretSize {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// SecretExpiry is when a secret set at now expires under ClientSecretTTL;
// zero when secrets never expire.
func (id *Identity) SecretExpiry(now time.Time) time.Time {
	if id.ClientSecretTTL <= 0 {
		return time.Time{}
	}
	return now.Add(id.ClientSecretTTL)
}

// ClientSecretChange is a change-client-secret request (reference §3).
type ClientSecretChange struct {
	AccessToken     string
	ClientID        string
	ClientSecret    string
	NewClientSecret string
}

// ChangeClientSecret replaces a partner app's secret. The caller proves it
// is the app twice: with its current secret, and with a live access token
// issued to that app. The new secret is stored hashed and expires after
// ClientSecretTTL; the returned time is that expiry (zero: never). Errors
// are OAuthErrors: invalid_request for missing or malformed fields,
// invalid_client for a wrong or expired secret, invalid_grant for an access
// token that is not a live token of the app.
//
// The app's tokens stay valid (the provider is silent, README says why):
// its refresh tokens are bound to it and refresh only for whoever holds
// the new secret, so revoking them would add nothing against a thief of
// the old one and would sign every user of the partner out at each
// routine change; its access tokens live an hour at most, and the revoke
// endpoint takes a grant's access tokens with its refresh token.
func (id *Identity) ChangeClientSecret(ctx context.Context, r ClientSecretChange) (time.Time, error) {
	switch {
	case r.ClientID == "" || r.ClientSecret == "":
		return time.Time{}, oauthErr("invalid_request", "client_id and client_secret are required")
	case r.AccessToken == "":
		return time.Time{}, oauthErr("invalid_request", "access_token is required")
	case r.NewClientSecret == "":
		return time.Time{}, oauthErr("invalid_request", "new_client_secret is required")
	}
	app, err := id.AuthenticateClient(ctx, r.ClientID, r.ClientSecret)
	if err != nil {
		return time.Time{}, err
	}
	p, err := id.Authenticate(ctx, r.AccessToken)
	if err != nil && KindOf(err) != KindUnauthorized {
		return time.Time{}, err
	}
	if err != nil || p.PartnerID != app.ClientID {
		return time.Time{}, oauthErr("invalid_grant", "Unknown or expired access token")
	}
	if !ValidClientSecret(r.NewClientSecret) {
		return time.Time{}, oauthErr("invalid_request", "new_client_secret must be %d characters of A-Z, a-z, 0-9, _ and -", ClientSecretSize)
	}
	if r.NewClientSecret == r.ClientSecret {
		return time.Time{}, oauthErr("invalid_request", "new_client_secret must differ from client_secret")
	}
	expires := id.SecretExpiry(id.now())
	err = id.Store.ChangeAppSecret(ctx, app.ClientID, app.SecretHash, HashSecret(r.NewClientSecret), expires)
	if errors.Is(err, ErrNotFound) {
		// Another change with the same secret landed first.
		return time.Time{}, oauthErr("invalid_client", "Unknown client or wrong secret")
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("change client secret: %w", err)
	}
	return expires, nil
}
