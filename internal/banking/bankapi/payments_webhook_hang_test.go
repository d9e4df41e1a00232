package bankapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// A receiver that hangs on one webhook holds up only that one: the others
// of the batch are delivered meanwhile. Sent one at a time, every partner's
// webhooks waited behind a hanging endpoint for the sender's timeout each.
func TestWebhookHangingReceiverDelaysOnlyItsOwn(t *testing.T) {
	hung := newUUID(90)
	release := make(chan struct{})
	arrived := make(chan string, 16)
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]string
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		if m["externalId"] == hung {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		arrived <- m["externalId"]
		w.WriteHeader(http.StatusNoContent)
	}))
	defer partner.Close()
	defer close(release)

	// The hanging one first: the outbox hands events out oldest first.
	const others = 5
	var ids []string
	for i := range others + 1 {
		ids = append(ids, newUUID(90+i))
	}
	store := implementedPayments(t, ids...)
	disp := &banking.WebhookDispatcher{Outbox: store, Now: func() time.Time { return payNow },
		Sender: &WebhookSender{Targets: &banking.Webhooks{Store: store, Default: banking.WebhookTarget{URL: partner.URL, Secret: []byte("s")}}, URLs: loopbackURLs}}
	done := make(chan error, 1)
	go func() {
		_, err := disp.RunOnce(context.Background())
		done <- err
	}()
	deadline := time.After(5 * time.Second)
	for got := 0; got < others; got++ {
		select {
		case id := <-arrived:
			if id == hung {
				t.Fatal("the hanging receiver answered before it was released")
			}
		case <-deadline:
			t.Fatalf("%d of %d webhooks delivered while one receiver hangs: they wait behind it", got, others)
		}
	}
	release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
