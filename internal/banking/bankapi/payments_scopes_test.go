package bankapi

import (
	"net/http"
	"slices"
	"testing"
)

// TestPaymentScopes holds every payment route to the scopes of reference §2:
// creating a payment order, reading it, signing it and its QR confirmation
// take PAY_DOC_RU; each invoice draft its own invoice scope; the state any
// of the four. A token without the route's scope is 403
// ACTION_ACCESS_EXCEPTION before its body is read; a token with it gets
// past the check (here to the body's or the document's own error).
func TestPaymentScopes(t *testing.T) {
	e := newPayEnv(t)
	id := newUUID(900)
	tokens := []string{"pay", "inv-only", "inv-any", "inv-budget", "cards"}
	for _, tc := range []struct {
		method, path string
		allowed      []string
	}{
		{"POST", paymentsBase, []string{"pay"}},
		{"POST", paymentsBase + "/from-invoice", []string{"inv-only"}},
		{"POST", paymentsBase + "/from-invoice-any", []string{"inv-any"}},
		{"POST", paymentsBase + "/from-invoice-budget", []string{"inv-budget"}},
		{"POST", paymentsBase + "/qr-confirmation", []string{"pay"}},
		{"GET", paymentsBase + "/" + id, []string{"pay"}},
		{"POST", paymentsBase + "/" + id + "/sign", []string{"pay"}},
		{"GET", paymentsBase + "/" + id + "/state", []string{"pay", "inv-only", "inv-any", "inv-budget"}},
	} {
		for _, tok := range tokens {
			t.Run(tc.method+" "+tc.path[len(paymentsBase):]+" "+tok, func(t *testing.T) {
				st, m, raw := e.do(tc.method, tc.path, tok, "{}")
				if slices.Contains(tc.allowed, tok) {
					if st == http.StatusForbidden || st == http.StatusUnauthorized {
						t.Fatalf("token %s refused: %d %s", tok, st, raw)
					}
					return
				}
				if st != http.StatusForbidden || m["cause"] != "ACTION_ACCESS_EXCEPTION" {
					t.Fatalf("token %s: %d %s, want 403 ACTION_ACCESS_EXCEPTION", tok, st, raw)
				}
			})
		}
	}
}
