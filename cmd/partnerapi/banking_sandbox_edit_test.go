package main

import (
	"encoding/json"
	"testing"

	"partnerapi/internal/banking"
)

// The sandbox edit over HTTP, end to end against a running server behind
// --banking-prefix: a partner's CI with nothing but the API creates a
// document its checks put in CHECKERROR, corrects it under the deployment's
// prefix, reads CREATED back from GET, signs it with the sandbox
// certificate, and its configured webhook gets exactly one delivery, the
// IMPLEMENTED one; a second edit is refused and sends nothing.
func TestSandboxEditOverHTTPEndToEnd(t *testing.T) {
	partnerURL, got := signedWebhookReceiver(t, "hook-secret")
	const prefix = "/bank/fintech/api"
	ts := startServer(t, "--only", "banking", "--banking-prefix", prefix, "--banking-webhook-url", partnerURL,
		"--banking-webhook-secret", "hook-secret", "--banking-webhook-interval", "50ms", "--banking-webhook-allow-private")
	tok := "Bearer " + bankingToken(t, ts, banking.ScopePayDocRU)
	base := ts.urls["banking"] + prefix
	const id = "e0000000-0000-4000-8000-0000000000e1"
	// 02 outside a budget payment fails a logical control: CHECKERROR.
	if code, m := bankRequestJSON(t, "POST", base+"/v1/payments", tok, json.RawMessage(bankDoc(id, map[string]any{"operationCode": "02"}))); code != 201 ||
		m["bankStatus"] != banking.StatusCheckError {
		t.Fatalf("create: %d %v", code, m)
	}
	edit := base + "/sandbox/payments/" + id + "/edit"
	code, edited := bankRequest(t, "POST", edit, tok, json.RawMessage(bankDoc(id, nil)))
	if _, get := bankRequest(t, "GET", base+"/v1/payments/"+id, tok, nil); code != 200 || string(edited) != string(get) {
		t.Fatalf("edit under the prefix: %d %s, GET %s", code, edited, get)
	}
	var m map[string]any
	_ = json.Unmarshal(edited, &m)
	if m["bankStatus"] != banking.StatusCreated || m["bankComment"] != nil {
		t.Fatalf("edited %v, want CREATED without a comment", m)
	}
	if code, m := bankRequestJSON(t, "POST", edit, tok, json.RawMessage(bankDoc(id, nil))); code != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("edit again: %d %v", code, m)
	}
	sign := map[string]any{"digestSignatures": []any{map[string]any{"base64Encoded": "MIIB", "certificateUuid": banking.SandboxCertSole}}}
	if code, m := bankRequestJSON(t, "POST", base+"/v1/payments/"+id+"/sign", tok, sign); code != 200 || m["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("sign: %d %v", code, m)
	}
	if m := nextWebhook(t, got); m["externalId"] != id || m["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("webhook %v, want the IMPLEMENTED one of %s", m, id)
	}
	noMoreWebhooks(t, got)
}
