package main

import (
	"encoding/json"
	"testing"

	"partnerapi/internal/banking"
)

// The sandbox deletion over HTTP, end to end against a running server
// behind --banking-prefix: a partner's CI with nothing but the API creates
// a draft, deletes it under the deployment's prefix as it calls every other
// route there, reads DELETED back, and its configured webhook gets exactly
// one signed DELETED delivery with the comment; a second deletion is
// refused and sends nothing.
func TestSandboxDeleteOverHTTPEndToEnd(t *testing.T) {
	partnerURL, got := signedWebhookReceiver(t, "hook-secret")
	const prefix = "/bank/fintech/api"
	ts := startServer(t, "--only", "banking", "--banking-prefix", prefix, "--banking-webhook-url", partnerURL,
		"--banking-webhook-secret", "hook-secret", "--banking-webhook-interval", "50ms", "--banking-webhook-allow-private")
	tok := "Bearer " + bankingToken(t, ts, banking.ScopePayDocRU)
	base := ts.urls["banking"] + prefix
	const id = "e0000000-0000-4000-8000-0000000000d1"
	if code, m := bankRequestJSON(t, "POST", base+"/v1/payments", tok, json.RawMessage(bankDoc(id, nil))); code != 201 || m["bankStatus"] != banking.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	del := base + "/sandbox/payments/" + id + "/delete"
	if code, m := bankRequestJSON(t, "POST", del, tok, map[string]any{"comment": "Удалён в CI"}); code != 200 ||
		m["bankStatus"] != banking.StatusDeleted || m["bankComment"] != "Удалён в CI" {
		t.Fatalf("delete under the prefix: %d %v", code, m)
	}
	if code, m := bankRequestJSON(t, "GET", base+"/v1/payments/"+id+"/state", tok, nil); code != 200 || m["bankStatus"] != banking.StatusDeleted {
		t.Fatalf("state: %d %v", code, m)
	}
	if code, m := bankRequestJSON(t, "POST", del, tok, nil); code != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("delete again: %d %v", code, m)
	}
	if m := nextWebhook(t, got); m["externalId"] != id || m["bankStatus"] != banking.StatusDeleted || m["bankComment"] != "Удалён в CI" {
		t.Fatalf("webhook %v, want the DELETED one of %s", m, id)
	}
	// Nothing more sent shows the refused deletion queued nothing and the
	// delivery was not repeated.
	noMoreWebhooks(t, got)
}
