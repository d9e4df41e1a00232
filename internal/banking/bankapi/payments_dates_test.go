package bankapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// Document dates are judged against the bank's calendar date
// (--banking-time-zone, Europe/Moscow by default), not UTC's: at 00:30 in
// Moscow, 21:30 UTC of the day before, the 10-day past limit, the
// future-date CHECKERROR and expirationDate all count from the Moscow day.
func TestPaymentsDatesInBankZone(t *testing.T) {
	halfPastMidnight := time.Date(2026, 11, 21, 21, 30, 0, 0, time.UTC) // 2026-11-22 00:30 in Moscow
	signBody, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})
	for i, tc := range []struct {
		name    string
		path    string // "" a payment order, else from-invoice
		date    string
		expires any // an invoice draft's expirationDate, signed at once; nil none
		status  int
		want    string // bankStatus of a 201/200, the field a 400 names otherwise
	}{
		{"order today−10", "", "2026-11-12", nil, 201, "CREATED"},
		{"order today−11 (UTC's today−10)", "", "2026-11-11", nil, 400, "date"},
		{"order today+9 (UTC's today+10)", "", "2026-12-01", nil, 201, "CREATED"},
		{"order today+10", "", "2026-12-02", nil, 201, "CHECKERROR"},
		{"draft today−11 (UTC's today−10)", "/from-invoice", "2026-11-11", nil, 400, "date"},
		{"draft today+9 (UTC's today+10)", "/from-invoice", "2026-12-01", nil, 201, "CREATED"},
		{"draft expired yesterday (UTC's today)", "/from-invoice", "2026-11-21", "2026-11-21", 400, "expirationDate"},
		{"draft expiring today", "/from-invoice", "2026-11-21", "2026-11-22", 200, "IMPLEMENTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPayEnv(t)
			e.svc.Config.Now = func() time.Time { return halfPastMidnight }
			id := newUUID(1200 + i)
			var st int
			var m map[string]any
			var raw string
			if tc.path == "" {
				st, m, raw = e.do("POST", paymentsBase, "pay", payDoc(id, map[string]any{"date": tc.date}))
			} else {
				st, m, raw = e.do("POST", paymentsBase+tc.path, "inv", invoiceDraft(id, map[string]any{"date": tc.date, "expirationDate": tc.expires}))
				if st == 201 && tc.expires != nil {
					st, m, raw = e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(signBody))
				}
			}
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			if st == 400 {
				if !strings.Contains(raw, tc.want) {
					t.Fatalf("refusal %s does not name %s", raw, tc.want)
				}
				return
			}
			if m["bankStatus"] != tc.want {
				t.Fatalf("%s, want %s", raw, tc.want)
			}
		})
	}
}
