package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/gost"
)

// formatHook is one request the partner's receiver got.
type formatHook struct {
	contentType, signature string
	body                   []byte
}

// formatPayment creates a fully signed sandbox payment, which reaches its
// final status at once and so queues one webhook.
func formatPayment(t *testing.T, ts *testServer, tok, id string) {
	t.Helper()
	body := map[string]any{"externalId": id, "date": time.Now().UTC().Format(time.DateOnly), "amount": 1, "operationCode": "01", "priority": "5",
		"purpose": "Оплата", "payerName": "ООО", "payerInn": banking.SandboxOrgINN, "payerAccount": banking.SandboxAccount,
		"payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
		"payeeName": "АО", "payeeBankBic": "049805746", "payeeAccount": "40602810700000000025",
		"digestSignatures": []map[string]string{{"base64Encoded": "MIIB", "certificateUuid": banking.SandboxCertSole}}}
	if st, out := bankRequest(t, "POST", ts.urls["banking"]+"/fintech/api/v1/payments", tok, body); st != 201 {
		t.Fatalf("create: %d %s", st, out)
	}
}

// checkJoseWebhook checks what sets a jose webhook apart from the bank's
// other JWS: typ banking.JWSTypeWebhook in the header, and a payload that
// is the json format's body (json) with its recipient, the sandbox partner
// whose token made the document, added as clientId.
func checkJoseWebhook(t *testing.T, jws *gost.JWS, json []byte) {
	t.Helper()
	if jws.Header.Typ != banking.JWSTypeWebhook {
		t.Errorf("typ %q, want %q", jws.Header.Typ, banking.JWSTypeWebhook)
	}
	want := append(bytes.TrimSuffix(bytes.Clone(json), []byte("}")), []byte(`,"clientId":"`+banking.SandboxClientID+`"}`)...)
	if !bytes.Equal(jws.Payload, want) {
		t.Fatalf("JWS payload %s, want %s", jws.Payload, want)
	}
}

// deliveredJSON is the JSON body the json format sends for the partner's
// event of id, built from the delivery log in the field order of the
// golden request (internal/banking/bankapi/testdata/webhook_final_status.golden).
func deliveredJSON(t *testing.T, ts *testServer, tok, id string) []byte {
	t.Helper()
	st, out := bankRequest(t, "GET", ts.urls["banking"]+"/fintech/api/v1/webhook/deliveries", tok, nil)
	var log struct {
		Deliveries []struct {
			ExternalID string `json:"externalId"`
			BankStatus string `json:"bankStatus"`
			// banking.Comment writes an empty comment back as null, as
			// the webhook body carries it.
			BankComment banking.Comment `json:"bankComment"`
			EventTime   string          `json:"eventTime"`
		} `json:"deliveries"`
	}
	if err := json.Unmarshal(out, &log); st != 200 || err != nil {
		t.Fatalf("deliveries: %d %v %s", st, err, out)
	}
	for _, d := range log.Deliveries {
		if d.ExternalID == id {
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("no delivery of %s: %s", id, out)
	return nil
}

// attemptFormat waits until the partner's delivery log records an attempt
// for the event of id and returns the format that attempt's entry shows.
func attemptFormat(t *testing.T, ts *testServer, tok, id string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, out := bankRequest(t, "GET", ts.urls["banking"]+"/fintech/api/v1/webhook/deliveries", tok, nil)
		var log struct {
			Deliveries []struct {
				ExternalID string `json:"externalId"`
				Log        []struct {
					Format string `json:"format"`
				} `json:"log"`
			} `json:"deliveries"`
		}
		if err := json.Unmarshal(out, &log); st != 200 || err != nil {
			t.Fatalf("deliveries: %d %v %s", st, err, out)
		}
		for _, d := range log.Deliveries {
			if d.ExternalID == id && len(d.Log) > 0 {
				return d.Log[len(d.Log)-1].Format
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recorded attempt for %s: %s", id, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A partner's webhook format, end to end on a real server: json (the
// default) sends the JSON body as before; jose sends the JWS of that same
// JSON and its recipient under the bank's key, typed as a webhook, verifiable with the certificate the CLI
// prints and still HMAC-signed over the body sent; anything else is a
// VALIDATION_FAULT naming format; and the setting survives a restart.
func TestBankingWebhookFormat(t *testing.T) {
	const secret = "format-partner-secret-01"
	got := make(chan formatHook, 8)
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- formatHook{contentType: r.Header.Get("Content-Type"), signature: r.Header.Get("X-Signature"), body: body}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer partner.Close()
	dir := t.TempDir()
	hook := func(ts *testServer) string { return ts.urls["banking"] + "/fintech/api/v1/webhook" }
	receive := func(t *testing.T) formatHook {
		t.Helper()
		select {
		case h := <-got:
			return h
		case <-time.After(10 * time.Second):
			t.Fatal("no webhook in 10s")
			return formatHook{}
		}
	}
	// check compares what the receiver got with what format must send.
	check := func(t *testing.T, ts *testServer, tok, id, format string) {
		t.Helper()
		h := receive(t)
		if h.signature != bankapi.WebhookSignature([]byte(secret), h.body) {
			t.Errorf("X-Signature %q is not the HMAC of the body sent", h.signature)
		}
		want := deliveredJSON(t, ts, tok, id)
		// The delivery log names the format the attempt sent.
		if got := attemptFormat(t, ts, tok, id); got != format {
			t.Errorf("delivery log format %q, want %q", got, format)
		}
		switch format {
		case banking.WebhookFormatJSON:
			if h.contentType != "application/json" || !bytes.Equal(h.body, want) {
				t.Fatalf("json webhook %q %s, want %s", h.contentType, h.body, want)
			}
		case banking.WebhookFormatJOSE:
			if h.contentType != "application/jose" {
				t.Fatalf("jose webhook content type %q", h.contentType)
			}
			jws, err := gost.ParseJWS(string(h.body))
			if err != nil {
				t.Fatalf("jose webhook %s: %v", h.body, err)
			}
			cert := bankingJWSCertificate(t, "--data-dir", dir)
			if err := jws.Verify(cert); err != nil {
				t.Fatalf("JWS does not verify with the printed certificate: %v", err)
			}
			if jws.Header.Kid != banking.BankCertificateID(cert) {
				t.Errorf("kid %q, want the certificate's %q", jws.Header.Kid, banking.BankCertificateID(cert))
			}
			checkJoseWebhook(t, jws, want)
		}
	}

	steps := []struct {
		name    string
		set     map[string]any // PUT body; nil: no PUT
		status  int
		format  string // the format GET shows and the next webhook has
		payment string // a payment created after the PUT; "": none
	}{
		{name: "default is json", set: map[string]any{"url": partner.URL, "secret": secret}, status: 200, format: "json",
			payment: "d0000000-0000-4000-8000-000000000001"},
		{name: "jose", set: map[string]any{"url": partner.URL, "format": "jose"}, status: 200, format: "jose",
			payment: "d0000000-0000-4000-8000-000000000002"},
		{name: "format omitted keeps jose", set: map[string]any{"url": partner.URL}, status: 200, format: "jose"},
		{name: "xml", set: map[string]any{"url": partner.URL, "format": "xml"}, status: 400, format: "jose"},
		{name: "upper case", set: map[string]any{"url": partner.URL, "format": "JOSE"}, status: 400, format: "jose"},
		{name: "empty", set: map[string]any{"url": partner.URL, "format": ""}, status: 400, format: "jose"},
	}
	t.Run("first start", func(t *testing.T) {
		ts := startServer(t, "--only", "banking", "--data-dir", dir, "--banking-webhook-interval", "50ms", "--banking-webhook-allow-private")
		ts.dataDir = dir // the later --data-dir is the one served; the CLI helpers read ts.dataDir
		tok := "Bearer " + bankingToken(t, ts, "PAY_DOC_RU")
		for _, step := range steps {
			t.Run(step.name, func(t *testing.T) {
				st, m := bankRequestJSON(t, "PUT", hook(ts), tok, step.set)
				if st != step.status {
					t.Fatalf("PUT %v: %d %v", step.set, st, m)
				}
				if st == 400 && (m["cause"] != "VALIDATION_FAULT" || !strings.Contains(fmt.Sprint(m["fieldNames"]), "format")) {
					t.Fatalf("PUT %v: want VALIDATION_FAULT naming format, got %v", step.set, m)
				}
				if st, m := bankRequestJSON(t, "GET", hook(ts), tok, nil); st != 200 || m["format"] != step.format {
					t.Fatalf("GET: %d %v, want format %s", st, m, step.format)
				}
				if step.payment != "" {
					formatPayment(t, ts, tok, step.payment)
					check(t, ts, tok, step.payment, step.format)
				}
			})
		}
	})
	// The setting is in the store: the restarted server sends jose, and
	// the CLI reads and changes it on the same data directory.
	t.Run("after a restart", func(t *testing.T) {
		ts := startServer(t, "--only", "banking", "--data-dir", dir, "--banking-webhook-interval", "50ms", "--banking-webhook-allow-private")
		ts.dataDir = dir // the later --data-dir is the one served; the CLI helpers read ts.dataDir
		tok := "Bearer " + bankingToken(t, ts, "PAY_DOC_RU")
		if st, m := bankRequestJSON(t, "GET", hook(ts), tok, nil); st != 200 || m["format"] != "jose" {
			t.Fatalf("GET after restart: %d %v", st, m)
		}
		if show, err := webhookCLI(t, dir, "show", "--client-id", banking.SandboxClientID); err != nil || show["format"] != "jose" {
			t.Fatalf("CLI show: %v %v", show, err)
		}
		formatPayment(t, ts, tok, "d0000000-0000-4000-8000-000000000003")
		check(t, ts, tok, "d0000000-0000-4000-8000-000000000003", "jose")

		if _, err := webhookCLI(t, dir, "set", "--client-id", banking.SandboxClientID, "--url", partner.URL, "--format", "xml",
			"--banking-webhook-allow-private"); err == nil || !strings.Contains(err.Error(), "format") {
			t.Fatalf("CLI bad format: %v", err)
		}
		set, err := webhookCLI(t, dir, "set", "--client-id", banking.SandboxClientID, "--url", partner.URL, "--format", "json",
			"--banking-webhook-allow-private")
		if err != nil || set["format"] != "json" {
			t.Fatalf("CLI set json: %v %v", set, err)
		}
		// Read at delivery time: the next event after the switch is JSON.
		formatPayment(t, ts, tok, "d0000000-0000-4000-8000-000000000004")
		check(t, ts, tok, "d0000000-0000-4000-8000-000000000004", "json")
	})
	select {
	case h := <-got:
		t.Fatalf("unexpected webhook %q %s", h.contentType, h.body)
	case <-time.After(200 * time.Millisecond):
	}
}
