package bankapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestCardLimitDate: an application's date is a calendar date written
// YYYY-MM-DD, as a payment's is (reference §4); a month 13 or a 30 February
// has the shape and is still no date, so it is VALIDATION_FAULT on date and
// nothing is stored, not a document dated on no day.
func TestCardLimitDate(t *testing.T) {
	e := newCardEnv(t, 10)
	const path = "/fintech/api/v1/business-cards/limits"
	for i, tc := range []struct {
		date string
		ok   bool
	}{
		{"2026-03-10", true},
		{"2024-02-29", true},
		{"2026-13-01", false},
		{"2026-02-30", false},
		{"2026-04-31", false},
		{"2026-00-10", false},
		{"2026-03-00", false},
		{"2026-3-10", false},
		{"10.03.2026", false},
	} {
		t.Run(tc.date, func(t *testing.T) {
			ext := fmt.Sprintf("00000000-0000-4000-8000-%012d", 400+i)
			body := strings.Replace(limitBody("sbc-00001", ext, "10"), `{`, `{"date":"`+tc.date+`",`, 1)
			code, res := e.do("POST", path, "application/json", body)
			if tc.ok {
				var l banking.LimitChange
				if code != 201 || json.Unmarshal([]byte(res), &l) != nil || l.Date != tc.date {
					t.Fatalf("%d %s, want 201 dated %s", code, res, tc.date)
				}
				return
			}
			var eb errorBody
			_ = json.Unmarshal([]byte(res), &eb)
			if code != 400 || eb.Cause != "VALIDATION_FAULT" || strings.Join(eb.FieldNames, ",") != "date" {
				t.Fatalf("%d %s, want 400 VALIDATION_FAULT on date", code, res)
			}
			if code, res := e.do("GET", path+"/"+ext+"/state", "", ""); code != 404 {
				t.Fatalf("refused application stored: %d %s", code, res)
			}
		})
	}
}
