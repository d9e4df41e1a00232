package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"partnerapi/internal/banking"
)

// The partner applications' commands of `partnerapi banking`: app create,
// app scopes and app secret, which register an application and set its
// scopes and client_secret, and offer sign, which puts an account under its
// offer; banking_cli.go holds the command table and the rest.

func init() {
	bankingCommands["app create"] = appCreateCmd
	bankingCommands["app scopes"] = appScopesCmd
	bankingCommands["app secret"] = appSecretCmd
	bankingCommands["offer sign"] = offerSignCmd
}

// appCreateCmd is `banking app create`: a new partner application, its
// client_secret chosen or new, printed once.
func appCreateCmd(stdio) bankingCmd {
	var a banking.PartnerApp
	var uris, scopes, chosen string
	var days int
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&a.Name, "name", "", "application name")
			fs.StringVar(&a.ClientID, "client-id", "", "client_id (default: a new uuid)")
			fs.StringVar(&uris, "redirect-uri", "", "space-separated registered redirect URIs")
			registerAppScopes(fs, &scopes)
			registerClientSecretDays(fs, &days)
			registerChosenClientSecret(fs, &chosen)
		},
		run: func(ctx context.Context, id *banking.Identity) (any, error) {
			// The login page shows the name to the user it asks for
			// consent; a nameless app would ask for it anonymously.
			if a.Name == "" {
				return nil, errors.New("--name is required")
			}
			if err := setClientSecretDays(id, days); err != nil {
				return nil, err
			}
			if a.ClientID == "" {
				a.ClientID = banking.NewUUID()
			}
			a.RedirectURIs = strings.Fields(uris)
			for _, u := range a.RedirectURIs {
				if err := banking.ValidRedirectURI(u); err != nil {
					return nil, fmt.Errorf("--redirect-uri: %w", err)
				}
			}
			a.Scopes = banking.ParseScopes(scopes)
			secret, err := clientSecret(chosen)
			if err != nil {
				return nil, err
			}
			a.SecretHash, a.SecretExpiresAt = banking.HashSecret(secret), id.SecretExpiry(time.Now())
			if err := id.Store.CreateApp(ctx, a); err != nil {
				return nil, err
			}
			return map[string]string{"client_id": a.ClientID, "client_secret": secret,
				"client_secret_expires_at": secretExpiryText(a.SecretExpiresAt), "scopes": scopesText(a.Scopes)}, nil
		},
	}
}

// appScopesCmd is `banking app scopes`: the scopes authorize grants an app.
func appScopesCmd(stdio) bankingCmd {
	var client, scopes string
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&client, "client", "", "partner client_id")
			registerAppScopes(fs, &scopes)
		},
		run: func(ctx context.Context, id *banking.Identity) (any, error) {
			if client == "" {
				return nil, errors.New("--client is required")
			}
			list := banking.ParseScopes(scopes)
			if err := id.Store.SetAppScopes(ctx, client, list); err != nil {
				return nil, flagNotFound("--client", client, "partner application", err)
			}
			return map[string]string{"client_id": client, "scopes": scopesText(list)}, nil
		},
	}
}

// appSecretCmd is `banking app secret`: a new client_secret, chosen or
// random, printed once.
func appSecretCmd(stdio) bankingCmd {
	var client, chosen string
	var days int
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&client, "client", banking.SandboxClientID, "partner client_id")
			registerClientSecretDays(fs, &days)
			registerChosenClientSecret(fs, &chosen)
		},
		run: func(ctx context.Context, id *banking.Identity) (any, error) {
			if err := setClientSecretDays(id, days); err != nil {
				return nil, err
			}
			secret, err := clientSecret(chosen)
			if err != nil {
				return nil, err
			}
			expires := id.SecretExpiry(time.Now())
			if err := id.Store.SetAppSecret(ctx, client, banking.HashSecret(secret), expires); err != nil {
				return nil, flagNotFound("--client", client, "partner application", err)
			}
			return map[string]string{"client_id": client, "client_secret": secret,
				"client_secret_expires_at": secretExpiryText(expires)}, nil
		},
	}
}

// offerSignCmd is `banking offer sign`: an account under an app's offer.
func offerSignCmd(stdio) bankingCmd {
	var client, account string
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&client, "client", "", "partner client_id")
			fs.StringVar(&account, "account", "", "account number")
		},
		run: func(ctx context.Context, id *banking.Identity) (any, error) {
			if client == "" || account == "" {
				return nil, errors.New("--client and --account are required")
			}
			if _, err := id.Store.GetApp(ctx, client); err != nil {
				return nil, flagNotFound("--client", client, "partner application", err)
			}
			if _, err := id.Store.GetAccount(ctx, account); err != nil {
				return nil, flagNotFound("--account", account, "account", err)
			}
			if err := id.Store.SignOffer(ctx, client, account); err != nil {
				return nil, err
			}
			return map[string]string{"client_id": client, "account": account}, nil
		},
	}
}

// registerAppScopes adds --scopes, the scopes an app is registered for, to
// fs; app create and app scopes share it so both read the list alike.
func registerAppScopes(fs *flag.FlagSet, scopes *string) {
	fs.StringVar(scopes, "scopes", "", "space-separated scopes the app may be granted (reference §2); empty: unrestricted")
}

// scopesText is how the CLI prints an app's scopes: the list, or "all" for
// an unrestricted app, so an empty string is never mistaken for "none".
func scopesText(scopes []string) string {
	if len(scopes) == 0 {
		return "all"
	}
	return strings.Join(scopes, " ")
}

// registerClientSecretDays adds --banking-client-secret-days, the lifetime
// of the client secrets a command sets, to fs; serve has the same flag for
// change-client-secret.
func registerClientSecretDays(fs *flag.FlagSet, days *int) {
	fs.IntVar(days, "banking-client-secret-days", int(banking.ClientSecretLifetime/(24*time.Hour)),
		"days a client secret set by change-client-secret or the CLI lives (the provider's 40); 0: secrets never expire")
}

// setClientSecretDays applies --banking-client-secret-days to id.
func setClientSecretDays(id *banking.Identity, days int) error {
	if days < 0 {
		return fmt.Errorf("--banking-client-secret-days must be 0 (never expire) or more, got %d", days)
	}
	id.ClientSecretTTL = time.Duration(days) * 24 * time.Hour
	return nil
}

// registerChosenClientSecret adds --client-secret to fs: a team's CI holds
// its test app's client_secret in its configuration, as it holds the
// provider's, so the app it makes on a fresh server must take that secret
// (as PARTNERAPI_CLIENT_SECRET it stays out of the process list).
func registerChosenClientSecret(fs *flag.FlagSet, secret *string) {
	fs.StringVar(secret, "client-secret", "", "client_secret to set, 40 characters of A-Z a-z 0-9 _ - as the provider's (default: a new random one)")
}

// clientSecret is the chosen secret when there is one, checked as
// change-client-secret checks a partner's new secret, else a new one.
func clientSecret(chosen string) (string, error) {
	if chosen == "" {
		return banking.NewClientSecret(), nil
	}
	if !banking.ValidClientSecret(chosen) {
		return "", fmt.Errorf("--client-secret must be %d characters of A-Z, a-z, 0-9, _ and - (the provider's form; e.g. openssl rand -hex 20)", banking.ClientSecretSize)
	}
	return chosen, nil
}

// secretExpiryText is how the CLI prints a secret's expiry: RFC 3339 in
// UTC, or "never", so whoever provisions an app sees when it will stop
// working instead of finding out then.
func secretExpiryText(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
