package bankapi

import (
	"slices"
	"strings"
	"testing"
)

// A filter whose names do not fit in the reference's 60-character href
// stays in the page links (by its letters), so following next lists the
// filter's next page, not every card's: with three of the five statuses,
// the names' link would be 62 characters, and before, it was dropped.
func TestCardListFilterKeptAcrossPages(t *testing.T) {
	e := newCardEnv(t, 500) // statuses cycle: 100 of each
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"?statusCodes=TO_BE_REISSUED,TO_BE_BLOCKED,NOT_DELIVERED", []string{"TO_BE_REISSUED", "TO_BE_BLOCKED", "NOT_DELIVERED"}},
		{"?statusCodes=ACTIVE&statusCodes=BLOCKED,TO_BE_REISSUED,TO_BE_BLOCKED", []string{"ACTIVE", "BLOCKED", "TO_BE_REISSUED", "TO_BE_BLOCKED"}},
		{"?statusCodes=BLOCKED,BLOCKED,NOT_DELIVERED", []string{"BLOCKED", "NOT_DELIVERED"}},
	} {
		seen := map[string]bool{}
		q, pages := tc.q, 0
		for q != "" {
			lb := listPage(t, e, q)
			pages++
			q = ""
			for _, c := range lb.BusinessCards {
				if !slices.Contains(tc.want, c.Status) || seen[c.BusinessCardID] {
					t.Fatalf("%s page %d: card %s (%s) outside the filter or repeated", tc.q, pages, c.BusinessCardID, c.Status)
				}
				seen[c.BusinessCardID] = true
			}
			for _, l := range lb.Links {
				if len(l.Href) > 60 {
					t.Fatalf("%s page %d: href %q longer than 60", tc.q, pages, l.Href)
				}
				if l.Rel == "next" {
					q = strings.TrimPrefix(l.Href, "/fintech/api/v1/business-cards")
				}
			}
		}
		if len(seen) != 100*len(tc.want) {
			t.Fatalf("%s: %d cards over %d pages, want %d", tc.q, len(seen), pages, 100*len(tc.want))
		}
	}
	if code, body := e.do("GET", "/fintech/api/v1/business-cards?statusSet=AZ", "", ""); code != 400 || cause(body) != "VALIDATION_FAULT" {
		t.Errorf("statusSet=AZ: %d %s", code, body)
	}
}
