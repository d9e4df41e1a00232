package bankapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
)

var updateBankComment = flag.Bool("update-bank-comment", false, "rewrite testdata/payments_bank_comment.golden")

// TestBankCommentAnsweredNull checks that every answer carrying bankStatus
// also carries bankComment (reference §4: the 201 and the GET of a payment
// document and its /state; §11: a card-limit application and its /state),
// null when the bank has none, a string when it has one. A draft's answers
// are pinned whole in a golden file, which shows where the member sits.
func TestBankCommentAnsweredNull(t *testing.T) {
	e := newPayEnv(t)
	draft := newUUID(800)
	var golden bytes.Buffer
	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
	}{
		{"create", "POST", paymentsBase, "pay", payDoc(draft, nil), 201},
		{"get", "GET", paymentsBase + "/" + draft, "pay", "", 200},
		{"state", "GET", paymentsBase + "/" + draft + "/state", "pay", "", 200},
		{"invoice draft", "POST", paymentsBase + "/from-invoice", "inv", invoiceDraft(newUUID(801), nil), 201},
	} {
		st, m, raw := e.do(tc.method, tc.path, tc.token, tc.body)
		if v, ok := m["bankComment"]; st != tc.status || !ok || v != nil || m["bankStatus"] != "CREATED" {
			t.Fatalf("%s: %d %s", tc.name, st, raw)
		}
		golden.WriteString(tc.name + ":\n")
		if err := json.Indent(&golden, []byte(strings.TrimSpace(raw)), "", "  "); err != nil {
			t.Fatal(err)
		}
		golden.WriteString("\n")
	}
	const file = "testdata/payments_bank_comment.golden"
	if *updateBankComment {
		if err := os.WriteFile(file, golden.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(file); err != nil || !bytes.Equal(golden.Bytes(), want) {
		t.Fatalf("the answers differ from %s (%v):\n%s", file, err, golden.Bytes())
	}

	// A comment the bank made is a string in all three.
	late := newUUID(802)
	body := payDoc(late, map[string]any{"date": payNow.AddDate(0, 0, 30).Format("2006-01-02")})
	for _, path := range []string{"", "/" + late, "/" + late + "/state"} {
		method, b := "GET", ""
		if path == "" {
			method, b = "POST", body
		}
		st, m, raw := e.do(method, paymentsBase+path, "pay", b)
		if c, _ := m["bankComment"].(string); st/100 != 2 || m["bankStatus"] != "CHECKERROR" || !strings.Contains(c, "date") {
			t.Fatalf("%s %s: %d %s", method, path, st, raw)
		}
	}
}

// TestCardLimitBankCommentNull checks the card-limit answers of §11:
// bankComment is there, null, beside bankStatus.
func TestCardLimitBankCommentNull(t *testing.T) {
	e := newCardEnv(t, 2)
	const path = "/fintech/api/v1/business-cards/limits"
	id := "00000000-0000-4000-8000-000000000901"
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"create", "POST", path, limitBody("sbc-00001", id, "10"), 201},
		{"state", "GET", path + "/" + id + "/state", "", 200},
	} {
		st, raw := e.do(tc.method, tc.path, "application/json", tc.body)
		var m map[string]any
		_ = json.Unmarshal([]byte(raw), &m)
		if v, ok := m["bankComment"]; st != tc.status || !ok || v != nil || m["bankStatus"] != "CREATED" {
			t.Fatalf("%s: %d %s", tc.name, st, raw)
		}
	}
}
