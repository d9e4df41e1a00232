package bankapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

var updateHistory = flag.Bool("update-history", false, "rewrite testdata/payments_history.golden")

// TestPaymentHistoryOverHTTP follows a draft signed in two steps through
// GET …/history: each answer lists every move so far, oldest first, with
// its time and bankComment (null without one); the whole walk is pinned in
// a golden file. Another organisation's token and a token without a
// payment scope are refused as for /state.
func TestPaymentHistoryOverHTTP(t *testing.T) {
	e := newPayEnv(t)
	id := newUUID(901)
	path := paymentsBase + "/" + id + "/history"
	var golden bytes.Buffer
	step := func(name string, wantLast string, wantLen int) {
		t.Helper()
		st, m, raw := e.do("GET", path, "inv", "") // an invoice scope reads it, as /state
		h, _ := m["history"].([]any)
		if st != 200 || m["externalId"] != id || len(h) != wantLen {
			t.Fatalf("%s: %d %s, want %d moves", name, st, raw, wantLen)
		}
		last := h[len(h)-1].(map[string]any)
		if last["bankStatus"] != wantLast || last["at"] != payNow.UTC().Format("2006-01-02T15:04:05Z07:00") {
			t.Fatalf("%s: last move %v, want %s at %v", name, last, wantLast, payNow)
		}
		for _, mv := range h {
			if _, ok := mv.(map[string]any)["bankComment"]; !ok {
				t.Fatalf("%s: move without bankComment: %v", name, mv)
			}
		}
		golden.WriteString(name + ":\n")
		if err := json.Indent(&golden, []byte(strings.TrimSpace(raw)), "", "  "); err != nil {
			t.Fatal(err)
		}
		golden.WriteString("\n")
	}
	if st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(id, nil)); st != 201 || m["bankStatus"] != "CREATED" {
		t.Fatalf("create: %d %s", st, raw)
	}
	step("draft", banking.StatusCreated, 1)
	sign := func(uuid string) {
		b, _ := json.Marshal(map[string]any{"digestSignatures": sigs(uuid)})
		if st, _, raw := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(b)); st != 200 {
			t.Fatalf("sign: %d %s", st, raw)
		}
	}
	sign(banking.SandboxCertFirst)
	step("first signature", banking.StatusPartSigned, 2)
	sign(banking.SandboxCertSecond)
	step("second signature", banking.StatusImplemented, 2+len(banking.ProcessingPath))

	const file = "testdata/payments_history.golden"
	if *updateHistory {
		if err := os.WriteFile(file, golden.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(file); err != nil || !bytes.Equal(golden.Bytes(), want) {
		t.Fatalf("the answers differ from %s (%v):\n%s", file, err, golden.Bytes())
	}

	for _, tc := range []struct {
		name, token, id string
		status          int
		cause           string
	}{
		{"another organisation", "pay2", id, 404, "DATA_NOT_FOUND_EXCEPTION"},
		{"unknown document", "pay", newUUID(902), 404, "DATA_NOT_FOUND_EXCEPTION"},
		{"id in upper case", "pay", strings.ToUpper(id), 200, ""},
		{"no payment scope", "cards", id, 403, ""},
	} {
		st, m, raw := e.do("GET", paymentsBase+"/"+tc.id+"/history", tc.token, "")
		if st != tc.status || (tc.cause != "" && m["cause"] != tc.cause) || (st == 200 && m["externalId"] != id) {
			t.Fatalf("%s: %d %s, want %d %s", tc.name, st, raw, tc.status, tc.cause)
		}
	}
}
