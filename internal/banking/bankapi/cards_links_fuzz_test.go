package bankapi

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// FuzzCardListLinks holds the business-card list's links to the
// reference (§ business cards: href ≤ 60 characters) and to the query
// they stand for: for any page List answers and any status filter the
// query gives, each link is at most 60 characters, is the list's path with
// a query when that fits (the default prefix always does) and the query
// alone otherwise, and reads back, as a query, as the page next to it and
// the same set of statuses (by name or, when the names do not fit, by
// letter), never none for a filter.
func FuzzCardListLinks(f *testing.F) {
	f.Add(1, "ACTIVE,BLOCKED", "NOT_DELIVERED", "")
	f.Add(1<<20, "active, to_be_blocked", "TO_BE_REISSUED,TO_BE_REISSUED,TO_BE_REISSUED", "/bank/fintech/api")
	f.Add(9, "BLOCKED", "", "/a-rather-long-proxy-path/fintech/api")
	f.Fuzz(func(t *testing.T, page int, a, b, prefix string) {
		if page < 1 || page > 1<<20 || CheckPrefix(prefix) != nil {
			return // List refuses these or answers them without links; serve refuses the prefix
		}
		statuses := parseStatusCodes([]string{a, b})
		for _, s := range statuses {
			if !s.Valid() {
				return // List refuses the filter
			}
		}
		path := (&server{Deps: Deps{Prefix: prefix}}).cardListPath()
		for _, p := range []int{page - 1, page + 1} {
			h := pageHref(path, p, statuses)
			query, absolute := strings.CutPrefix(h, path+"?")
			if !absolute {
				query, _ = strings.CutPrefix(h, "?")
			}
			q, err := url.ParseQuery(query)
			if len(h) > 60 || err != nil || !absolute && !strings.HasPrefix(h, "?") || q.Get("page") != strconv.Itoa(p) {
				t.Fatalf("page %d of %v: href %q (%v)", p, statuses, h, err)
			}
			if !absolute && (prefix == "" || prefix == DefaultPrefix) {
				t.Fatalf("page %d of %v: href %q is not path-absolute under the default prefix", p, statuses, h)
			}
			set, ok := parseStatusSet(q["statusSet"])
			got := append(parseStatusCodes(q["statusCodes"]), set...)
			if !ok || !sameStatuses(got, statuses) {
				t.Fatalf("page %d of %v: href %q reads %v (%v)", p, statuses, h, got, ok)
			}
		}
	})
}

// sameStatuses reports whether a and b hold the same statuses, in any
// order and with any repeats.
func sameStatuses(a, b []banking.CardStatus) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			return false
		}
	}
	return true
}
