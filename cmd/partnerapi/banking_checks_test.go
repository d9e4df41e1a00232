package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// --banking-checksum-failures through the real server: by default a payee
// INN with a wrong check digit is stored in CHECKERROR; with reject it is a
// 400 VALIDATION_FAULT; a wrong value stops serve.
func TestBankingChecksumFailuresFlag(t *testing.T) {
	doc := func(id string) string {
		b, _ := json.Marshal(map[string]any{"externalId": id, "date": time.Now().UTC().Format(time.DateOnly), "amount": 1,
			"operationCode": "01", "priority": "5", "purpose": "Оплата", "payerName": "ООО", "payerInn": banking.SandboxOrgINN,
			"payerAccount": banking.SandboxAccount, "payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
			"payeeName": "АО", "payeeInn": "7707083894", "payeeBankBic": "049805746", "payeeAccount": "40602810700000000025"})
		return string(b)
	}
	for _, tc := range []struct {
		flags  []string
		status int
		want   string // bankStatus or cause
	}{
		{nil, 201, "CHECKERROR"},
		{[]string{"--banking-checksum-failures", "reject"}, 400, "VALIDATION_FAULT"},
	} {
		ts := startServer(t, tc.flags...)
		tok := bankingToken(t, ts, "PAY_DOC_RU")
		req, _ := http.NewRequest("POST", ts.urls["banking"]+"/fintech/api/v1/payments", strings.NewReader(doc("d0000000-0000-4000-8000-000000000001")))
		req.Header.Set("Authorization", tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		got := m["bankStatus"]
		if resp.StatusCode >= 400 {
			got = m["cause"]
		}
		if resp.StatusCode != tc.status || got != tc.want || !strings.Contains(fmt.Sprint(m["bankComment"], m["fieldNames"]), "payeeInn") {
			t.Fatalf("%v: %d %v", tc.flags, resp.StatusCode, m)
		}
	}
	err := serve(context.Background(), []string{"--data-dir", t.TempDir(), "--only", "banking", "--banking-addr", "127.0.0.1:0",
		"--banking-checksum-failures", "maybe"}, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, nil)
	if err == nil || !strings.Contains(err.Error(), "--banking-checksum-failures") {
		t.Fatalf("bad value: %v", err)
	}
}
