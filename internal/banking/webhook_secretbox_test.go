package banking

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// sealV1 seals the way the box did before keys had ids, to prove such
// stored values still open and get re-sealed.
func sealV1(b *SecretBox, clientID, secret string) string {
	k := b.keys[0]
	nonce := bytes.Repeat([]byte{9}, k.aead.NonceSize())
	return sealedV1 + base64.StdEncoding.EncodeToString(k.aead.Seal(nonce, nonce, []byte(secret), []byte(clientID)))
}

func TestSecretBoxKeys(t *testing.T) {
	oldKey, newKey, strayKey := bytes.Repeat([]byte{1}, WebhookKeySize), bytes.Repeat([]byte{2}, WebhookKeySize), bytes.Repeat([]byte{3}, WebhookKeySize)
	oldBox, _ := NewSecretBox(oldKey)
	newBox, _ := NewSecretBox(newKey)
	both, err := NewSecretBox(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if both.KeyID() != WebhookKeyID(newKey) || both.KeyID() == WebhookKeyID(oldKey) || len(both.KeyID()) != 8 {
		t.Fatalf("key ids %s %s %s", both.KeyID(), WebhookKeyID(newKey), WebhookKeyID(oldKey))
	}
	underOld, underNew, legacy := oldBox.Seal("p1", []byte("secret-one")), both.Seal("p1", []byte("secret-one")), sealV1(oldBox, "p1", "secret-one")
	if !strings.HasPrefix(underNew, "v2:"+WebhookKeyID(newKey)+":") || !both.SealedByNewest(underNew) || both.SealedByNewest(underOld) || both.SealedByNewest(legacy) {
		t.Fatalf("sealed forms %q %q", underNew, underOld)
	}
	for _, tc := range []struct {
		name   string
		box    *SecretBox
		sealed string
		opens  bool
	}{
		{"new box, old key's value", both, underOld, true},
		{"new box, new key's value", both, underNew, true},
		{"new box, value from before key ids", both, legacy, true},
		{"old key alone, new key's value", oldBox, underNew, false},
		{"new key alone, old key's value", newBox, underOld, false},
		{"new key alone, value from before key ids", newBox, legacy, false},
		{"id of a key that is not given", both, "v2:00000000:" + strings.SplitN(underNew, ":", 3)[2], false},
		{"no key id", both, "v2:" + strings.SplitN(underNew, ":", 3)[2], false},
	} {
		got, err := tc.box.Open("p1", tc.sealed)
		if tc.opens && (err != nil || string(got) != "secret-one") {
			t.Errorf("%s: %q %v", tc.name, got, err)
		}
		if !tc.opens && !errors.Is(err, ErrSealedSecret) {
			t.Errorf("%s: opened: %q %v", tc.name, got, err)
		}
	}
	if _, err := NewSecretBox(newKey, strayKey[:5]); err == nil {
		t.Fatal("a short second key accepted")
	}
	if _, err := NewSecretBox(); err == nil {
		t.Fatal("a box without keys")
	}
}

// A rotation re-seals every stored secret under the newest key, so the
// old key can go; secrets keep their value, and one sealed by a key that
// is not given is reported, not lost.
func TestWebhooksReseal(t *testing.T) {
	oldKey, newKey, strayKey := bytes.Repeat([]byte{4}, WebhookKeySize), bytes.Repeat([]byte{5}, WebhookKeySize), bytes.Repeat([]byte{6}, WebhookKeySize)
	oldBox, _ := NewSecretBox(oldKey)
	stray, _ := NewSecretBox(strayKey)
	store := memWebhookStore{}
	ctx := context.Background()
	w := &Webhooks{Store: store, Box: oldBox, URLs: WebhookURLPolicy{}}
	secrets := map[string]string{"p1": "partner-one-secret-01", "p2": "partner-two-secret-02"}
	for id, s := range secrets {
		if _, err := w.Set(ctx, id, "https://"+id+".example/hook", &s, nil); err != nil {
			t.Fatal(err)
		}
	}
	store["p3"] = PartnerWebhook{ClientID: "p3", URL: "https://p3.example/", SealedSecret: sealV1(oldBox, "p3", "partner-three-secret")}
	secrets["p3"] = "partner-three-secret"
	store["lost"] = PartnerWebhook{ClientID: "lost", URL: "https://lost.example/", SealedSecret: stray.Seal("lost", []byte("x"))}

	w.Box, _ = NewSecretBox(newKey, oldKey)
	rep, err := w.Reseal(ctx)
	if err != nil || rep.Resealed != 3 || rep.Current != 0 || len(rep.Failed) != 1 || rep.Failed[0] != "lost" || rep.KeyID != WebhookKeyID(newKey) {
		t.Fatalf("reseal: %+v %v", rep, err)
	}
	// Again: nothing left to move.
	if rep, err := w.Reseal(ctx); err != nil || rep.Resealed != 0 || rep.Current != 3 {
		t.Fatalf("second reseal: %+v %v", rep, err)
	}
	out, _ := json.Marshal(rep)
	for _, k := range [][]byte{oldKey, newKey} {
		if bytes.Contains(out, []byte(base64.StdEncoding.EncodeToString(k))) {
			t.Fatalf("a key in the report: %s", out)
		}
	}
	// The old key retired: every secret opens under the new key alone.
	w.Box, _ = NewSecretBox(newKey)
	for id, s := range secrets {
		tg, err := w.Target(ctx, id)
		if err != nil || string(tg.Secret) != s || !w.Box.SealedByNewest(store[id].SealedSecret) {
			t.Errorf("%s after rotation: %q %v", id, tg.Secret, err)
		}
	}
}

// A partner that sets a new secret while the rotation runs keeps it: the
// swap is conditional on the value the rotation read.
func TestWebhooksResealKeepsConcurrentSet(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{7}, WebhookKeySize), bytes.Repeat([]byte{8}, WebhookKeySize)
	oldBox, _ := NewSecretBox(oldKey)
	both, _ := NewSecretBox(newKey, oldKey)
	inner := memWebhookStore{"p1": {ClientID: "p1", URL: "https://p1.example/", SealedSecret: oldBox.Seal("p1", []byte("before-the-rotation"))}}
	racing := &racingStore{memWebhookStore: inner, onList: func() {
		inner["p1"] = PartnerWebhook{ClientID: "p1", URL: "https://p1.example/", SealedSecret: both.Seal("p1", []byte("set-during-rotation"))}
	}}
	w := &Webhooks{Store: racing, Box: both}
	rep, err := w.Reseal(context.Background())
	if err != nil || rep.Resealed != 0 || rep.Current != 1 {
		t.Fatalf("reseal %+v %v", rep, err)
	}
	if tg, _ := w.Target(context.Background(), "p1"); string(tg.Secret) != "set-during-rotation" {
		t.Fatalf("the partner's new secret was overwritten: %q", tg.Secret)
	}
}

// racingStore changes a setting right after the rotation has listed them.
type racingStore struct {
	memWebhookStore
	onList func()
}

func (r *racingStore) PartnerWebhooks(ctx context.Context) ([]PartnerWebhook, error) {
	out, err := r.memWebhookStore.PartnerWebhooks(ctx)
	r.onList()
	return out, err
}
