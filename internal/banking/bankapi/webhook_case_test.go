package bankapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// A partner that writes its externalIds in upper case gets them back as it
// wrote them in every webhook, although the store keys documents by the
// folded id: in the JSON body and in the JOSE payload, in X-Event-Id, and
// in its delivery log; whether the final status came with the create or
// with a /sign addressed by the lower-case id.
func TestWebhookExternalIDCase(t *testing.T) {
	type received struct{ format, eventID, externalID string }
	var mu sync.Mutex
	var got []received
	key, err := banking.NewBankKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		payload, format := body, banking.WebhookFormatJSON
		if r.Header.Get("Content-Type") == "application/jose" {
			jws, err := gost.ParseJWS(string(body))
			if err != nil || jws.Verify(key.Cert) != nil {
				t.Errorf("jose webhook %s: %v", body, err)
			} else {
				payload, format = jws.Payload, banking.WebhookFormatJOSE
			}
		}
		var m map[string]string
		if err := json.Unmarshal(payload, &m); err != nil {
			t.Errorf("webhook payload %s: %v", payload, err)
		}
		mu.Lock()
		got = append(got, received{format, r.Header.Get("X-Event-Id"), m["externalId"]})
		mu.Unlock()
		w.WriteHeader(204)
	}))
	defer partner.Close()

	e := newHookEnv(t, banking.WebhookTarget{})
	for tok, format := range map[string]string{"p1": banking.WebhookFormatJSON, "p2": banking.WebhookFormatJOSE} {
		body := `{"url":"` + partner.URL + `/` + tok + `","secret":"partner-secret-0000001","format":"` + format + `"}`
		if st, _, raw := e.do("PUT", webhookBase, tok, body); st != 200 {
			t.Fatalf("%s's setting: %s", tok, raw)
		}
	}
	signBody, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})
	cases := []struct {
		name, token, id string
		final           func(id string)
	}{
		{"json, signed at creation", "p1", "4A000000-0000-4000-8000-0000000000AB", func(id string) { e.pay("p1", id) }},
		{"json, signed by the lower case", "p1", "4B000000-0000-4000-8000-0000000000aB", func(id string) {
			if st, _, raw := e.do("POST", paymentsBase, "p1", payDoc(id, nil)); st != 201 {
				t.Fatalf("create: %d %s", st, raw)
			}
			if st, m, raw := e.do("POST", paymentsBase+"/"+strings.ToLower(id)+"/sign", "p1", string(signBody)); st != 200 || m["bankStatus"] != "IMPLEMENTED" {
				t.Fatalf("sign: %d %s", st, raw)
			}
		}},
		{"jose, signed at creation", "p2", "4C000000-0000-4000-8000-0000000000AB", func(id string) { e.pay("p2", id) }},
	}
	for _, c := range cases {
		c.final(c.id)
	}
	disp := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: e.hooks, URLs: loopbackURLs, JWS: key},
		ConfiguredOnly: true, Now: func() time.Time { return payNow }}
	if n, err := disp.RunOnce(context.Background()); err != nil || n != len(cases) {
		t.Fatalf("run: %d %v", n, err)
	}
	byID := map[string]received{}
	for _, r := range got {
		byID[r.externalID] = r
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ok := byID[c.id]
			wantFormat := map[string]string{"p1": banking.WebhookFormatJSON, "p2": banking.WebhookFormatJOSE}[c.token]
			if !ok || r.format != wantFormat || !strings.HasPrefix(r.eventID, c.id+"/") {
				t.Fatalf("received %+v, want %s in %s", got, c.id, wantFormat)
			}
			st, m, raw := e.do("GET", webhookBase+"/deliveries", c.token, "")
			ds, _ := m["deliveries"].([]any)
			var listed []string
			for _, d := range ds {
				listed = append(listed, d.(map[string]any)["externalId"].(string))
			}
			if st != 200 || !slices.Contains(listed, c.id) {
				t.Fatalf("%s's deliveries %v (%d %s), want %s", c.token, listed, st, raw, c.id)
			}
		})
	}
}
