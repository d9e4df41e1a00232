package banking

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// SecretBox seals webhook secrets with AES-256-GCM under the deployment's
// webhook keys. The partner's client_id is the associated data, so a sealed
// secret copied to another partner's row does not open.
//
// It holds several keys so that the key can be rotated without a moment
// when stored secrets do not open: the first (newest) key seals, and every
// key opens. A sealed value names its key by id (v2:ID:...), so opening
// does not try each key; values sealed before ids existed (v1:...) are
// tried against every key.
type SecretBox struct{ keys []boxKey }

type boxKey struct {
	id   string
	aead cipher.AEAD
}

// WebhookKeySize is the length of a webhook key in bytes.
const WebhookKeySize = 32

// NewSecretBox makes a box from 32-byte keys, newest first.
func NewSecretBox(keys ...[]byte) (*SecretBox, error) {
	if len(keys) == 0 {
		return nil, errors.New("no webhook key")
	}
	b := &SecretBox{}
	for i, key := range keys {
		if len(key) != WebhookKeySize {
			return nil, fmt.Errorf("webhook key %d must be %d bytes, got %d", i+1, WebhookKeySize, len(key))
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		b.keys = append(b.keys, boxKey{id: WebhookKeyID(key), aead: aead})
	}
	return b, nil
}

// WebhookKeyID names a key in sealed values and in the rotation's output:
// 8 hex digits of a domain-separated SHA-256 of the key. It says which key
// sealed a value and nothing usable about the key itself.
func WebhookKeyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("partnerapi webhook key id\x00"), key...))
	return hex.EncodeToString(sum[:4])
}

// KeyID is the id of the newest key, the one that seals.
func (b *SecretBox) KeyID() string { return b.keys[0].id }

// Sealed formats: v1 (no key id, from before rotation) and v2 (key id).
const (
	sealedV1 = "v1:"
	sealedV2 = "v2:"
)

// Seal encrypts secret for clientID under the newest key.
func (b *SecretBox) Seal(clientID string, secret []byte) string {
	k := b.keys[0]
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := k.aead.Seal(nonce, nonce, secret, []byte(clientID))
	return sealedV2 + k.id + ":" + base64.StdEncoding.EncodeToString(out)
}

// ErrSealedSecret means a stored secret opens under none of the keys (its
// key was removed, or the row was tampered with).
var ErrSealedSecret = errors.New("banking: webhook secret does not open with the webhook keys")

// Open decrypts a sealed secret of clientID with whichever key sealed it.
func (b *SecretBox) Open(clientID, sealed string) ([]byte, error) {
	keyID, body, ok := "", "", false
	if body, ok = strings.CutPrefix(sealed, sealedV2); ok {
		keyID, body, ok = strings.Cut(body, ":")
	} else {
		body, ok = strings.CutPrefix(sealed, sealedV1)
	}
	if !ok {
		return nil, ErrSealedSecret
	}
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		return nil, ErrSealedSecret
	}
	for _, k := range b.keys {
		n := k.aead.NonceSize()
		if (keyID != "" && k.id != keyID) || len(raw) < n {
			continue
		}
		if secret, err := k.aead.Open(nil, raw[:n], raw[n:], []byte(clientID)); err == nil {
			return secret, nil
		}
	}
	return nil, ErrSealedSecret
}

// SealedByNewest reports whether sealed names the newest key, so the
// rotation can leave it as it is.
func (b *SecretBox) SealedByNewest(sealed string) bool {
	return strings.HasPrefix(sealed, sealedV2+b.keys[0].id+":")
}

// ResealReport is what a key rotation did.
type ResealReport struct {
	KeyID    string   `json:"keyId"`    // the newest key's id
	Resealed int      `json:"resealed"` // secrets moved to the newest key
	Current  int      `json:"current"`  // already under it
	Failed   []string `json:"failed,omitempty"`
}

// Reseal re-seals every stored partner secret under the newest key, so the
// older keys can then be retired. A secret that opens under none of the
// keys is listed in Failed (by client_id) and left as it is; a setting
// changed by its partner meanwhile was sealed by the newest key already or
// is taken again. The secrets pass through memory only.
func (w *Webhooks) Reseal(ctx context.Context) (ResealReport, error) {
	rep := ResealReport{KeyID: w.Box.KeyID()}
	sets, err := w.Store.PartnerWebhooks(ctx)
	if err != nil {
		return rep, err
	}
	for _, set := range sets {
		done := false
		// A few tries: the partner may change its setting during the
		// rotation, and each change is re-read.
		for try := 0; try < 3 && !done; try++ {
			if w.Box.SealedByNewest(set.SealedSecret) {
				rep.Current++
				done = true
				break
			}
			secret, err := w.Box.Open(set.ClientID, set.SealedSecret)
			if err != nil {
				break
			}
			swapped, err := w.Store.ReplaceWebhookSecret(ctx, set.ClientID, set.SealedSecret, w.Box.Seal(set.ClientID, secret))
			if err != nil {
				return rep, err
			}
			if swapped {
				rep.Resealed++
				done = true
				break
			}
			if set, err = w.Store.GetPartnerWebhook(ctx, set.ClientID); errors.Is(err, ErrNotFound) {
				done = true // deleted meanwhile: nothing left to re-seal
			} else if err != nil {
				return rep, err
			}
		}
		if !done {
			rep.Failed = append(rep.Failed, set.ClientID)
		}
	}
	return rep, nil
}
