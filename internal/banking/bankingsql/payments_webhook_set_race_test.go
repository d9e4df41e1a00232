package bankingsql

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestWebhookSetRaces runs concurrent PUT /webhook calls of one partner
// through banking.Webhooks against the real store. A webhook secret is shown
// once, in the answer that generated it, and the partner's receiver checks
// every delivery's HMAC with it, so a stored secret other than the one an
// answer promised makes every later webhook fail verification at the
// partner, silently. Two rules follow: of concurrent first settings without
// a secret exactly one answer may carry a generated secret, and it must be
// the stored one; and a change that keeps the secret (a new URL alone) must
// not write back the secret it read before a concurrent change replaced it.
func TestWebhookSetRaces(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		box, err := banking.NewSecretBox(bytes.Repeat([]byte{7}, 32))
		if err != nil {
			t.Fatal(err)
		}
		hooks := &banking.Webhooks{Store: NewPaymentStore(db), Box: box, URLs: banking.WebhookURLPolicy{AllowPrivate: true}}
		stored := func(clientID string) string {
			t.Helper()
			w, err := hooks.Store.GetPartnerWebhook(ctx, clientID)
			if err != nil {
				t.Fatal(err)
			}
			secret, err := box.Open(clientID, w.SealedSecret)
			if err != nil {
				t.Fatal(err)
			}
			return string(secret)
		}
		const rounds, writers = 10, 6

		for r := range rounds {
			client := fmt.Sprintf("first-%d", r)
			var wg sync.WaitGroup
			secrets := make([]string, writers)
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v, err := hooks.Set(ctx, client, fmt.Sprintf("https://hook%d.example/", i), nil, nil)
					if err != nil {
						t.Error(err)
						return
					}
					secrets[i] = v.Secret
				}()
			}
			wg.Wait()
			want, shown := stored(client), 0
			for i, s := range secrets {
				if s == "" {
					continue
				}
				shown++
				if s != want {
					t.Errorf("%s: answer %d generated a secret that is not the stored one", client, i)
				}
			}
			if shown != 1 {
				t.Errorf("%s: %d of %d concurrent first settings showed a generated secret, want 1", client, shown, writers)
			}
		}

		for r := range rounds {
			client := fmt.Sprintf("keep-%d", r)
			first := "first-secret-of-sixteen-or-more-" + client
			if _, err := hooks.Set(ctx, client, "https://old.example/", &first, nil); err != nil {
				t.Fatal(err)
			}
			next := "next-secret-of-sixteen-or-more-" + client
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var secret *string
					if i == writers/2 {
						secret = &next
					}
					if _, err := hooks.Set(ctx, client, fmt.Sprintf("https://new%d.example/", i), secret, nil); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if got := stored(client); got != next {
				t.Errorf("%s: stored secret %q after its change to %q was answered 200: a concurrent URL change wrote the old one back", client, got, next)
			}
		}

		// Key rotation: a process holding the new and the old key keeps
		// changing a partner's URL while `webhook reseal` moves the secret
		// under the new key. A URL change copies the sealed secret it read;
		// written after the reseal's swap, it would put the secret back
		// under the old key, which the operator then retires, and the
		// partner's webhooks could no longer be signed at all.
		rotated, err := banking.NewSecretBox(bytes.Repeat([]byte{9}, 32), bytes.Repeat([]byte{7}, 32))
		if err != nil {
			t.Fatal(err)
		}
		hooks2 := &banking.Webhooks{Store: hooks.Store, Box: rotated, URLs: hooks.URLs}
		for r := range rounds {
			client := fmt.Sprintf("rotate-%d", r)
			secret := "secret-under-the-old-key-" + client
			if _, err := hooks.Set(ctx, client, "https://old.example/", &secret, nil); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i == 0 {
						if rep, err := hooks2.Reseal(ctx); err != nil || len(rep.Failed) != 0 {
							t.Errorf("reseal: %+v %v", rep, err)
						}
						return
					}
					if _, err := hooks2.Set(ctx, client, fmt.Sprintf("https://new%d.example/", i), nil, nil); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			w, err := hooks.Store.GetPartnerWebhook(ctx, client)
			if err != nil {
				t.Fatal(err)
			}
			if !rotated.SealedByNewest(w.SealedSecret) {
				t.Errorf("%s: secret sealed under the old key after a reseal that succeeded: a URL change wrote back what it read before the swap", client)
			}
		}
	})
}
