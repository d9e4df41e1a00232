package bankapi

import (
	"encoding/json"
	"strings"
	"sync/atomic"
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
	signBody, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole), "payerAccount": banking.SandboxAccount})
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

// A stored draft dated more than 10 days before the bank's today (§5.6, the
// create's rule) gets 400 WORKFLOW_FAULT naming its date at /sign and at
// QR confirmation, a payment order's and an invoice draft's alike.
func TestPaymentsLapsedDraft(t *testing.T) {
	signBody, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole), "payerAccount": banking.SandboxAccount})
	for i, tc := range []struct {
		name   string
		path   string        // "" a payment order dated 2026-11-20, else from-invoice dated 2026-11-22
		later  time.Duration // after payNow (2026-11-22 12:00 UTC)
		qr     bool
		status int
	}{
		{"order signed on its tenth day", "", 8 * 24 * time.Hour, false, 200},
		{"order signed on its eleventh day", "", 9 * 24 * time.Hour, false, 400},
		{"order confirmed by QR on its eleventh day", "", 9 * 24 * time.Hour, true, 400},
		{"draft signed on its tenth day", "/from-invoice", 10 * 24 * time.Hour, false, 200},
		{"draft signed on its eleventh day", "/from-invoice", 11 * 24 * time.Hour, false, 400},
		{"draft QR on its tenth day", "/from-invoice", 10 * 24 * time.Hour, true, 201},
		{"draft QR on its eleventh day", "/from-invoice", 11 * 24 * time.Hour, true, 400},
		{"draft signed at 00:30 of its eleventh day in Moscow", "/from-invoice", 10*24*time.Hour + 9*time.Hour + 30*time.Minute, false, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPayEnv(t)
			var later atomic.Int64
			e.svc.Config.Now = func() time.Time { return payNow.Add(time.Duration(later.Load())) }
			id := newUUID(1400 + i)
			date := "2026-11-20"
			var st int
			var raw string
			if tc.path == "" {
				st, _, raw = e.do("POST", paymentsBase, "pay", payDoc(id, nil))
			} else {
				date = "2026-11-22"
				st, _, raw = e.do("POST", paymentsBase+tc.path, "inv", invoiceDraft(id, nil))
			}
			if st != 201 {
				t.Fatalf("create: %d %s", st, raw)
			}
			later.Store(int64(tc.later))
			var m map[string]any
			if tc.qr {
				st, m, raw = e.do("POST", paymentsBase+"/qr-confirmation", "pay", `{"externalDocIds":["`+id+`"]}`)
			} else {
				st, m, raw = e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(signBody))
			}
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			if st == 400 && (m["cause"] != "WORKFLOW_FAULT" || !strings.Contains(m["message"].(string), "(date "+date)) {
				t.Fatalf("refusal %s", raw)
			}
			want := "CREATED"
			if st == 200 {
				want = "IMPLEMENTED"
			}
			if g := e.get(id); g["bankStatus"] != want {
				t.Fatalf("status after: %v, want %s", g["bankStatus"], want)
			}
		})
	}
}
