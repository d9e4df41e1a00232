package bankapi

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// deserializationFields reads the fields of a DESERIALIZATION_FAULT answer
// and fails unless the member is there as a list (reference §13).
func deserializationFields(t *testing.T, status int, raw string) []string {
	t.Helper()
	var body struct {
		Cause  string    `json:"cause"`
		Fields *[]string `json:"fields"`
	}
	if err := json.Unmarshal([]byte(raw), &body); err != nil || status != 400 || body.Cause != "DESERIALIZATION_FAULT" {
		t.Fatalf("%d %s", status, raw)
	}
	if body.Fields == nil || *body.Fields == nil {
		t.Fatalf("no fields list: %s", raw)
	}
	return *body.Fields
}

// TestDeserializationFaultCarriesFields checks that every banking route
// that answers DESERIALIZATION_FAULT includes fields: the offending member
// for a wrong type or a syntax error within a member, [] when none is to
// blame, on the payment fast path's refusals as on encoding/json's.
func TestDeserializationFaultCarriesFields(t *testing.T) {
	pay := newHookEnv(t, banking.WebhookTarget{})
	cards := newCardEnv(t, 2)
	const limits = "/fintech/api/v1/business-cards/limits"
	id := newUUID(700)
	if st, _, raw := pay.do("POST", paymentsBase, "p1", payDoc(id, nil)); st != 201 {
		t.Fatalf("draft: %d %s", st, raw)
	}
	payDo := func(path, body string) func() (int, string) {
		return func() (int, string) { st, _, raw := pay.do("POST", path, "p1", body); return st, raw }
	}
	for _, tc := range []struct {
		name string
		do   func() (int, string)
		want []string
	}{
		{"payment not JSON", payDo(paymentsBase, `{"externalId":"`+newUUID(701)+`",`), []string{}},
		{"payment truncated in a member", payDo(paymentsBase, `{"externalId":`), []string{"externalId"}},
		{"payment syntax error in amount", payDo(paymentsBase, `{"externalId":"`+newUUID(702)+`","amount":1..5}`), []string{"amount"}},
		{"payment amount as string", payDo(paymentsBase, payDoc(newUUID(703), map[string]any{"amount": "100"})), []string{"amount"}},
		{"payment as an array", payDo(paymentsBase, `[]`), []string{}},
		{"payment as text", func() (int, string) {
			req, _ := http.NewRequest("POST", pay.srv.URL+paymentsBase, strings.NewReader(payDoc(newUUID(704), nil)))
			req.Header.Set("Authorization", "p1")
			req.Header.Set("Content-Type", "text/plain")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(raw)
		}, []string{}},
		{"sign signatures as string", payDo(paymentsBase+"/"+id+"/sign", `{"digestSignatures":"x"}`), []string{"digestSignatures"}},
		{"qr ids as number", payDo(paymentsBase+"/qr-confirmation", `{"externalDocIds":5}`), []string{"externalDocIds"}},
		{"webhook url as number", func() (int, string) { st, _, raw := pay.do("PUT", webhookBase, "p1", `{"url":5}`); return st, raw }, []string{"url"}},
		{"webhook not JSON", func() (int, string) { st, _, raw := pay.do("PUT", webhookBase, "p1", `{"url":`); return st, raw }, []string{"url"}},
		{"card limit not JSON", func() (int, string) { return cards.do("POST", limits, "application/json", `{`) }, []string{}},
		{"card limit as string", func() (int, string) {
			return cards.do("POST", limits, "application/json", `{"code":"NON_RENEW","businessCardId":"sbc-00001","externalId":"`+newUUID(705)+`","limit":"1"}`)
		}, []string{"limit"}},
		{"card limit code as number", func() (int, string) { return cards.do("POST", limits, "application/json", `{"code":1}`) }, []string{"code"}},
		{"card limit trailing data", func() (int, string) { return cards.do("POST", limits, "application/json", `{} {}`) }, []string{}},
		{"card limit not a JWS", func() (int, string) { return cards.do("POST", limits, "application/jose", `abc`) }, []string{}},
		// Bodies that are not UTF-8 (RFC 8259 §8.1) are refused, not
		// stored with U+FFFD where the partner sent other bytes.
		{"payment not UTF-8", payDo(paymentsBase, strings.Replace(payDoc(newUUID(706), map[string]any{"purpose": "Оплата BAD"}), "BAD", "\xff", 1)), []string{}},
		{"webhook not UTF-8", func() (int, string) {
			st, _, raw := pay.do("PUT", webhookBase, "p1", "{\"url\":\"https://partner.example/h\xff\"}")
			return st, raw
		}, []string{}},
		{"card limit not UTF-8", func() (int, string) {
			return cards.do("POST", limits, "application/json", "{\"code\":\"NON_RENEW\xff\"}")
		}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, raw := tc.do()
			if got := deserializationFields(t, st, raw); !slices.Equal(got, tc.want) {
				t.Fatalf("fields %q, want %q: %s", got, tc.want, raw)
			}
		})
	}
}
