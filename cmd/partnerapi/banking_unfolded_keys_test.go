package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/storetest"
)

// serve warns at start of the payment documents migration 0013 left keyed
// in the partner's case, naming the first ten and counting all, and says
// nothing when there are none.
func TestReportUnfoldedPaymentKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		wants []string // in the log
	}{
		{"none", 0, nil},
		{"one", 1, []string{"level=WARN", "count=1", "org1/6A000000-0000-4000-8000-0000000000A0"}},
		{"twelve", 12, []string{"count=12", "org1/6A000000-0000-4000-8000-0000000000A9", "banking_payment_unfolded_keys"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.SQLite(t)
			if err := bankingsql.MigratePayments(ctx, db); err != nil {
				t.Fatal(err)
			}
			for i := range tc.n {
				key := fmt.Sprintf("6A000000-0000-4000-8000-0000000000A%X", i)
				if _, err := db.W.Exec(`INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at)
					VALUES ('org1', $1, 'PAY_DOC_RU', '{}', 1, 'CREATED', '', '', 'API:p1', 1, 1)`, key); err != nil {
					t.Fatal(err)
				}
				if _, err := db.W.Exec(`INSERT INTO banking_payment_unfolded_keys (org_id, external_id) VALUES ('org1', $1)`, key); err != nil {
					t.Fatal(err)
				}
			}
			var buf bytes.Buffer
			if err := reportUnfoldedPaymentKeys(ctx, db, slog.New(slog.NewTextHandler(&buf, nil))); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if tc.wants == nil && out != "" {
				t.Fatalf("logged %q with no unfolded key", out)
			}
			for _, w := range tc.wants {
				if !strings.Contains(out, w) {
					t.Fatalf("log %q lacks %q", out, w)
				}
			}
			if strings.Contains(out, "0000000000AA") {
				t.Fatalf("log names more than ten documents: %q", out)
			}
		})
	}
}
