package bankapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestCardLimitNumber: reference §11 lists number among the members of a
// limit application's 201, as §4 does for a payment order, whose number the
// bank assigns when the partner sends none. So an application sent without
// a number is answered with the bank's: the organisation's next one, counted
// from 1, which a refused application does not use up and one that brings
// its own number leaves to the next; a number the partner sent is answered
// as sent.
func TestCardLimitNumber(t *testing.T) {
	e := newCardEnv(t, 10) // sbc-00001 ACTIVE, sbc-00002 BLOCKED
	const path = "/fintech/api/v1/business-cards/limits"
	ext := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", 300+i) }
	withNumber := func(body, n string) string { return strings.Replace(body, `{`, `{"number":`+n+`,`, 1) }
	for i, tc := range []struct {
		name, body string
		code       int
		number     string // the 201's number
	}{
		{"first without number", limitBody("sbc-00001", ext(1), "10"), 201, "1"},
		{"second without number, signed", limitBody("sbc-00001", ext(2), "10", sole), 201, "2"},
		{"own number", withNumber(limitBody("sbc-00001", ext(3), "10"), `"A-17"`), 201, "A-17"},
		{"null number is none", withNumber(limitBody("sbc-00001", ext(4), "10"), `null`), 201, "3"},
		{"empty number is none", withNumber(limitBody("sbc-00001", ext(5), "10"), `""`), 201, "4"},
		{"refused: blocked card", limitBody("sbc-00002", ext(6), "10"), 400, ""},
		{"refused: duplicate externalId", limitBody("sbc-00001", ext(1), "10"), 400, ""},
		{"refused: unknown card", limitBody("nope", ext(7), "10"), 404, ""},
		{"after refusals", limitBody("sbc-00001", ext(8), "10"), 201, "5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do("POST", path, "application/json", tc.body)
			if code != tc.code {
				t.Fatalf("case %d: %d %s, want %d", i, code, body, tc.code)
			}
			if code != 201 {
				return
			}
			var l banking.LimitChange
			if err := json.Unmarshal([]byte(body), &l); err != nil || l.Number != tc.number {
				t.Fatalf("case %d: %s, want number %q", i, body, tc.number)
			}
		})
	}
}
