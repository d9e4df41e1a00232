package bankapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// TestWebhookBankCommentNull checks that a final-status webhook of a
// document the bank made no comment on carries bankComment null, as the
// payment, its /state and card limits answer it (reference §12 lists
// bankComment in the body), in the JSON body, in the jose payload and in
// the delivery log; it was "" before.
func TestWebhookBankCommentNull(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string][]byte{} // by Content-Type
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies[r.Header.Get("Content-Type")] = body
		mu.Unlock()
		w.WriteHeader(204)
	}))
	defer receiver.Close()
	secret := "comment-null-secret-0001"
	e := newHookEnv(t, banking.WebhookTarget{URL: receiver.URL, Secret: []byte(secret)})
	// p1 takes jose bodies at its own setting; p3 has none and gets the
	// deployment default's json.
	if st, _, raw := e.do("PUT", webhookBase, "p1", `{"url":"`+receiver.URL+`","secret":"`+secret+`","format":"jose"}`); st != 200 {
		t.Fatal(raw)
	}
	joseID, jsonID := newUUID(810), newUUID(811)
	e.pay("p1", joseID)
	e.pay("p3", jsonID)
	key, err := banking.NewBankKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	disp := &banking.WebhookDispatcher{Outbox: e.store, Sender: &WebhookSender{Targets: e.hooks, URLs: loopbackURLs, JWS: key},
		Now: func() time.Time { return payNow }}
	if n, err := disp.RunOnce(context.Background()); err != nil || n != 2 {
		t.Fatalf("run: %d %v", n, err)
	}
	eventTime := payNow.Format(time.RFC3339Nano)

	want := `{"externalId":"` + jsonID + `","bankStatus":"IMPLEMENTED","bankComment":null,"eventTime":"` + eventTime + `"}`
	if got := string(bodies["application/json"]); got != want {
		t.Errorf("json body %s, want %s", got, want)
	}
	jws, err := gost.ParseJWS(string(bodies["application/jose"]))
	if err != nil {
		t.Fatalf("jose body %q: %v", bodies["application/jose"], err)
	}
	want = `{"externalId":"` + joseID + `","bankStatus":"IMPLEMENTED","bankComment":null,"eventTime":"` + eventTime + `","clientId":"partner-1"}`
	if got := string(jws.Payload); got != want {
		t.Errorf("jose payload %s, want %s", got, want)
	}

	for tok, id := range map[string]string{"p1": joseID, "p3": jsonID} {
		st, _, raw := e.do("GET", webhookBase+"/deliveries", tok, "")
		var out struct {
			Deliveries []map[string]json.RawMessage `json:"deliveries"`
		}
		if err := json.Unmarshal([]byte(raw), &out); st != 200 || err != nil || len(out.Deliveries) != 1 {
			t.Fatalf("%s deliveries: %d %s", tok, st, raw)
		}
		d := out.Deliveries[0]
		if c, ok := d["bankComment"]; !ok || string(c) != "null" || !strings.Contains(string(d["externalId"]), id) {
			t.Errorf("%s delivery bankComment %s in %s, want null", tok, c, raw)
		}
	}
}
