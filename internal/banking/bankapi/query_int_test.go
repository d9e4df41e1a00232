package bankapi

import (
	"net/url"
	"testing"

	"partnerapi/internal/banking"
)

// TestQueryIntegersAreCanonical holds the list endpoints' integer query
// parameters (business cards' page, the webhook delivery log's limit) to
// plain decimal: strconv.Atoi also reads a sign and leading zeros, so
// page=+2 and page=007 named pages 2 and 7, and one page had several
// addresses. Such a value is refused with the API's VALIDATION_FAULT, as
// page=x is; the canonical spelling of the same number is served.
func TestQueryIntegersAreCanonical(t *testing.T) {
	cards := newCardEnv(t, 250)
	hooks := newHookEnv(t, banking.WebhookTarget{})
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{"2", true},
		{"10", true},
		{"+2", false},
		{"007", false},
		{"02", false},
		{"00", false},
		{" 2", false},
		{"2 ", false},
		{"-2", false},
		{"0x2", false},
		{"2.0", false},
		{"1e1", false},
		{"\u0662", false}, // ARABIC-INDIC DIGIT TWO
		{"99999999999999999999999", false},
	} {
		q := url.QueryEscape(tc.value)
		t.Run("page="+q, func(t *testing.T) {
			code, body := cards.do("GET", "/fintech/api/v1/business-cards?page="+q, "", "")
			if tc.ok && code != 200 || !tc.ok && (code != 400 || cause(body) != "VALIDATION_FAULT") {
				t.Fatalf("page=%q: %d %q", tc.value, code, cause(body))
			}
		})
		t.Run("limit="+q, func(t *testing.T) {
			code, m, raw := hooks.do("GET", webhookBase+"/deliveries?limit="+q, "p1", "")
			if tc.ok && code != 200 || !tc.ok && (code != 400 || m["cause"] != "VALIDATION_FAULT") {
				t.Fatalf("limit=%q: %d %.200s", tc.value, code, raw)
			}
		})
	}
}
