package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankkeys"
)

// keyIdentityStore keeps the identity of each key the deployment signs or
// seals with (bankingsql.IdentityStore, identity_keys.go).
type keyIdentityStore interface {
	RecordKeyIdentity(ctx context.Context, name, present string) (string, error)
	MoveKeyIdentity(ctx context.Context, name, from, to string) (bool, error)
	SetKeyIdentity(ctx context.Context, name, identity string) error
}

// Record names of the keys, and what the recorded identity is.
const (
	keyRecordJWS     = "jws"            // the bank JWS key's kid (a hash of its certificate)
	keyRecordRS256   = "id_token_rs256" // the RS256 id-token key's kid (RFC 7638 thumbprint)
	keyRecordWebhook = "webhook"        // banking.WebhookKeyID of the newest webhook key
)

// presentKey is one key this process signs or seals with: its record
// name, how the operator gives it, and its identity; a webhook key list
// adds the ids of the older keys it still opens with.
type presentKey struct {
	name   string
	what   string // the key and where it is read from
	idName string // what id is: kid or key id
	id     string
	older  []string
}

// servedKeys lists the keys serve checks. A key made for this process
// alone (no flag and no data directory: an in-process bench) has nothing
// to agree with and is left out.
func (m *bankingModule) servedKeys(key *banking.BankKey, idTokens *banking.IDTokenSigner, webhook [][]byte, dataDir string) []presentKey {
	source := func(flagName, flagValue, file string) string {
		if flagValue != "" {
			return flagName + " " + flagValue
		}
		return fmt.Sprintf("%s, default %s in --data-dir %s", flagName, file, dataDir)
	}
	var keys []presentKey
	if m.jwsKey != "" || dataDir != "" {
		keys = append(keys, presentKey{keyRecordJWS, "bank JWS key (" + source("--banking-jws-key", m.jwsKey, bankkeys.BankKeyFile) + ")", "kid", key.Kid, nil})
	}
	if idTokens.Alg == banking.IDTokenRS256 && (m.idTokenRSA != "" || dataDir != "") {
		keys = append(keys, presentKey{keyRecordRS256, "RS256 id-token key (" + source("--banking-id-token-rsa-key", m.idTokenRSA, bankkeys.IDTokenRSAKeyFile) + ")", "kid", idTokens.Kid, nil})
	}
	if m.payments.webhookKey != "" || dataDir != "" {
		// The flag's value is the keys themselves, so only its name is shown.
		what := "newest webhook key (--banking-webhook-key)"
		if m.payments.webhookKey == "" {
			what = "newest webhook key (" + source("--banking-webhook-key", "", webhookKeyFile) + ")"
		}
		keys = append(keys, webhookPresentKey(what, webhook))
	}
	return keys
}

// webhookPresentKey is a webhook key list, newest first, as a presentKey:
// the newest key's id, and the older keys' ids it still opens with.
func webhookPresentKey(what string, keys [][]byte) presentKey {
	pk := presentKey{keyRecordWebhook, what, "key id", banking.WebhookKeyID(keys[0]), nil}
	for _, k := range keys[1:] {
		pk.older = append(pk.older, banking.WebhookKeyID(k))
	}
	return pk
}

// followRecord records k's identity when none is recorded, and follows a
// rotation in progress (the recorded identity is one of k's older keys) by
// moving the record to k's. It returns the recorded identity, and the one
// it moved the record from ("" when it did not); a recorded identity that
// is neither k's nor an older key's is left for the caller to judge.
func followRecord(ctx context.Context, store keyIdentityStore, k presentKey) (recorded, movedFrom string, err error) {
	recorded, err = store.RecordKeyIdentity(ctx, k.name, k.id)
	if err != nil || recorded == k.id || !slices.Contains(k.older, recorded) {
		return recorded, "", err
	}
	if _, err := store.MoveKeyIdentity(ctx, k.name, recorded, k.id); err != nil {
		return recorded, "", err
	}
	return k.id, recorded, nil
}

// checkKeyIdentities compares each present key with the identity the
// database recorded for it, recording it first when none is (the first
// start of a deployment, or of a build with this check). A key that differs
// stops serve: a replica whose data directory was not copied would sign
// under another kid, which partners pinning the bank's certificate refuse.
//
// The webhook record follows a rotation: a present list that holds the
// recorded key after a new first one (--banking-webhook-key NEW,OLD) moves
// the record to the new key, so dropping OLD after `webhook reseal` starts
// too. Only a list without the recorded key is refused, whether or not
// secrets are stored yet: a replica with other webhook keys is caught at
// its start rather than at the first secret it cannot open.
func checkKeyIdentities(ctx context.Context, store keyIdentityStore, keys []presentKey, log *slog.Logger) error {
	for _, k := range keys {
		recorded, movedFrom, err := followRecord(ctx, store, k)
		if err != nil {
			return fmt.Errorf("record the identity of the %s: %w", k.what, err)
		}
		if movedFrom != "" {
			log.Info("banking: webhook key rotation: the newest key is recorded as the deployment's", "from", movedFrom, "to", k.id)
		}
		if recorded == k.id {
			continue
		}
		return fmt.Errorf("the %s is not the one this database recorded for the deployment: recorded %s %s, present %s %s; "+
			"copy the key files from a running replica (or give every replica the same key flags), or, if the key was replaced on purpose, "+
			"run `partnerapi banking keys adopt` with the same key flags and data directory, then start again",
			k.what, k.idName, idPrefix(recorded), k.idName, idPrefix(k.id))
	}
	return nil
}

// idPrefix is what a message shows of a kid or key id: enough to tell
// two apart, no more.
func idPrefix(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}

// bankingKeysAdopt is `partnerapi banking keys adopt`: the operator, having
// replaced a key on purpose, records the present keys (the same flags and
// data directory serve is given) as the deployment's. It is a command run
// once rather than a serve flag, so that no replica left with the flag in
// its unit file skips the check for good. It prints the recorded
// identities, never a key.
func bankingKeysAdopt(stdio) bankingCmd {
	var m bankingModule
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&m.jwsKey, "banking-jws-key", "", "PEM file with the bank's JWS private key and certificate (default: "+bankkeys.BankKeyFile+" in the data directory)")
			fs.StringVar(&m.idTokenAlg, "banking-id-token-alg", banking.IDTokenGOST, "alg of id_tokens: gost34.10-2012 or RS256 (the RS256 key is recorded only with RS256)")
			fs.StringVar(&m.idTokenRSA, "banking-id-token-rsa-key", "", "PEM file with the RSA private key of RS256 id_tokens (default: "+bankkeys.IDTokenRSAKeyFile+" in the data directory)")
			fs.StringVar(&m.payments.webhookKey, "banking-webhook-key", "", "webhook keys, base64, comma-separated, newest first (default: "+webhookKeyFile+" in the data directory)")
		},
		withStore: func(ctx context.Context, id *banking.Identity, store storeConfig) (any, error) {
			records, ok := id.Store.(keyIdentityStore)
			if !ok {
				return nil, errors.New("banking keys adopt: the store keeps no key identities")
			}
			if store.DataDir == "" && (m.jwsKey == "" || m.payments.webhookKey == "") {
				return nil, errors.New("banking keys adopt: give --data-dir, or every key by its flag")
			}
			key, err := bankKey(m.jwsKey, store.DataDir)
			if err != nil {
				return nil, err
			}
			idTokens, err := idTokenSigner(m.idTokenAlg, m.idTokenRSA, store.DataDir, key)
			if err != nil {
				return nil, err
			}
			hookKeys, err := webhookKeys(m.payments.webhookKey, store.DataDir)
			if err != nil {
				return nil, err
			}
			out := map[string]string{}
			for _, k := range m.servedKeys(key, idTokens, hookKeys, store.DataDir) {
				if err := records.SetKeyIdentity(ctx, k.name, k.id); err != nil {
					return nil, err
				}
				out[k.name] = k.id
			}
			return out, nil
		},
	}
}

// followResealedKey moves the webhook record to the newest key after
// `banking webhook reseal`, when the recorded key is one of the older keys
// given, so that the processes may drop the old key before they were ever
// restarted with NEW,OLD. A recorded key not among them is left for serve
// to refuse.
func followResealedKey(ctx context.Context, store keyIdentityStore, flagValue, dataDir string) error {
	if flagValue == "" && dataDir == "" {
		return nil // keys of this process alone: nothing recorded for them
	}
	keys, err := webhookKeys(flagValue, dataDir)
	if err != nil {
		return err
	}
	_, _, err = followRecord(ctx, store, webhookPresentKey("", keys))
	return err
}
