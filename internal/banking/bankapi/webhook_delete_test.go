package bankapi

import (
	"context"
	"errors"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
)

// TestWebhookSettingDelete: DELETE /v1/webhook removes the calling
// partner's own setting, and only its own: 204, after which GET and the
// dispatcher's target are those of a partner that never set one (the
// deployment's default URL when there is one, else none), read from the
// file by a store opened anew, so the removal was committed; 204 again
// when nothing is set; another partner's setting stays; a token without a
// payment scope is 403 and no token 401, the setting left as it was.
// Before, no route removed a setting: a partner could not stop webhooks.
func TestWebhookSettingDelete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		def    banking.WebhookTarget
		source string
	}{
		{"no default", banking.WebhookTarget{}, "none"},
		{"deployment default", banking.WebhookTarget{URL: "https://default.example/hook", Secret: []byte("default-secret-of-the-operator")}, "default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newHookEnv(t, tc.def)
			for _, tok := range []string{"p1", "p2"} {
				if st, _, raw := e.do("PUT", webhookBase, tok, `{"url":"https://`+tok+`.example/hook"}`); st != 200 {
					t.Fatalf("set %s: %d %s", tok, st, raw)
				}
			}
			if st, m, raw := e.do("DELETE", webhookBase, "cards", ""); st != 403 || m["cause"] != "ACTION_ACCESS_EXCEPTION" {
				t.Fatalf("without a payment scope: %d %s", st, raw)
			}
			if st, m, raw := e.do("DELETE", webhookBase, "", ""); st != 401 || m["cause"] != "UNAUTHORIZED" {
				t.Fatalf("without a token: %d %s", st, raw)
			}
			if st, m, _ := e.do("GET", webhookBase, "p1", ""); st != 200 || m["source"] != "partner" {
				t.Fatalf("refused deletes changed the setting: %d %v", st, m)
			}
			for i := range 2 {
				if st, _, raw := e.do("DELETE", webhookBase, "p1", ""); st != 204 || raw != "" {
					t.Fatalf("delete %d: %d %q, want 204 with no body", i+1, st, raw)
				}
			}
			if st, m, raw := e.do("GET", webhookBase, "p1", ""); st != 200 || m["source"] != tc.source || m["url"] != nil {
				t.Fatalf("after delete: %d %s, want source %s", st, raw, tc.source)
			}
			if _, err := bankingsql.NewPaymentStore(e.db).GetPartnerWebhook(context.Background(), "partner-1"); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("stored setting after delete: %v", err)
			}
			target, err := e.hooks.Target(context.Background(), "partner-1")
			if tc.def.URL == "" && !errors.Is(err, banking.ErrNoWebhookTarget) || tc.def.URL != "" && (err != nil || target.URL != tc.def.URL) {
				t.Fatalf("target after delete: %+v %v", target, err)
			}
			if st, m, _ := e.do("GET", webhookBase, "p2", ""); st != 200 || m["url"] != "https://p2.example/hook" {
				t.Fatalf("the other partner's setting: %d %v", st, m)
			}
		})
	}
}
