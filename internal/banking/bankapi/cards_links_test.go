package bankapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// resolveRFC2396 resolves ref against base as java.net.URI.resolve does
// (RFC 2396 §5.2, which the official Java SDK's HTTP stack follows): a
// reference with an empty path keeps the base's path only up to its last
// slash, so "?page=2" against …/v1/business-cards?page=1 is
// …/v1/?page=2, unlike RFC 3986 §5.2.2, which keeps the whole path.
func resolveRFC2396(base *url.URL, ref string) *url.URL {
	r, err := url.Parse(ref)
	if err != nil || r.IsAbs() || r.Host != "" {
		return base.ResolveReference(r)
	}
	out := *base
	out.RawQuery, out.Fragment = r.RawQuery, ""
	switch {
	case strings.HasPrefix(r.Path, "/"):
		out.Path = r.Path
	default:
		out.Path = base.Path[:strings.LastIndex(base.Path, "/")+1] + r.Path
	}
	out.RawPath = ""
	return &out
}

// TestCardListLinksFollowedByJavaClients: a client following next through
// the card list, resolving each href against the page it came from as an
// RFC 2396 client (java.net.URI) and as an RFC 3986 one (Go, browsers,
// Node's URL) do, lists every card of the filter once, under the provider's
// prefix and under a --banking-prefix of the deployment; each href is the
// list's path under that prefix with the query, and within the reference's
// 60 characters. A query-only href ("?page=2") sent the Java client to
// /fintech/api/v1/?page=2, a 404.
func TestCardListLinksFollowedByJavaClients(t *testing.T) {
	e := newCardEnv(t, 600) // statuses cycle through the five: 120 of each
	for _, prefix := range []string{"", DefaultPrefix, "/bank/fintech/api"} {
		h := http.Handler(NewServer(Deps{Auth: fakeAuth{"tok": {OrgID: tOrg, PartnerID: tPartner,
			Scopes: []string{banking.ScopeBusinessCardLimit}}}, Cards: e.cards, Prefix: prefix}))
		if prepare, _ := Prefixed(prefix, nil); prepare != nil {
			inner := h
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { prepare(r); inner.ServeHTTP(w, r) })
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		served := prefix
		if served == "" {
			served = DefaultPrefix
		}
		for _, tc := range []struct {
			name, query string
			want        int
		}{
			{"no filter", "", 600},
			{"one status by name", "?statusCodes=ACTIVE", 120},
			{"three statuses, by letter", "?statusCodes=TO_BE_REISSUED,TO_BE_BLOCKED,NOT_DELIVERED", 360},
		} {
			for _, rfc := range []string{"2396", "3986"} {
				t.Run(served+"/"+tc.name+"/RFC "+rfc, func(t *testing.T) {
					next, _ := url.Parse(srv.URL + served + "/v1/business-cards" + tc.query)
					seen, pages := map[string]bool{}, 0
					for next != nil {
						if pages++; pages > 7 {
							t.Fatalf("more than 7 pages of %d cards", tc.want)
						}
						lb := getCardPage(t, next)
						for _, c := range lb.BusinessCards {
							if seen[c.BusinessCardID] {
								t.Fatalf("%s: card %s again", next, c.BusinessCardID)
							}
							seen[c.BusinessCardID] = true
						}
						from := next
						next = nil
						for _, l := range lb.Links {
							if len(l.Href) > 60 || !strings.HasPrefix(l.Href, served+"/v1/business-cards?page=") {
								t.Fatalf("%s: href %q, want %s/v1/business-cards?page=… within 60 characters", from, l.Href, served)
							}
							if l.Rel != "next" {
								continue
							}
							if rfc == "2396" {
								next = resolveRFC2396(from, l.Href)
							} else {
								ref, err := url.Parse(l.Href)
								if err != nil {
									t.Fatal(err)
								}
								next = from.ResolveReference(ref)
							}
						}
					}
					if len(seen) != tc.want {
						t.Fatalf("%d cards over %d pages, want %d", len(seen), pages, tc.want)
					}
				})
			}
		}
	}
}

// TestCardListLinkLongPrefix: where the path under a long --banking-prefix
// would take an href past the reference's 60 characters, the link is the
// query alone, which the reference allows ("absolute or relative"), rather
// than one over the limit.
func TestCardListLinkLongPrefix(t *testing.T) {
	path := (&server{Deps: Deps{Prefix: "/a-rather-long-proxy-path/fintech/api"}}).cardListPath()
	for _, tc := range []struct {
		statuses []banking.CardStatus
		want     string
	}{
		{nil, "?page=2"},
		{[]banking.CardStatus{banking.CardActive}, "?page=2&statusCodes=ACTIVE"},
		{[]banking.CardStatus{banking.CardToBeReissued, banking.CardToBeBlocked, banking.CardNotDelivered}, "?page=2&statusSet=RTN"},
	} {
		if got := pageHref(path, 2, tc.statuses); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.statuses, got, tc.want)
		}
	}
	if got, want := pageHref(DefaultPrefix+"/v1/business-cards", 2, []banking.CardStatus{banking.CardActive}), "/fintech/api/v1/business-cards?page=2&statusCodes=ACTIVE"; got != want {
		t.Errorf("default prefix: %q, want %q", got, want)
	}
}

func getCardPage(t *testing.T, u *url.URL) cardListBody {
	t.Helper()
	req, _ := http.NewRequest("GET", u.String(), nil)
	req.Header.Set("Authorization", "Bearer tok")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var lb cardListBody
	if err := json.NewDecoder(res.Body).Decode(&lb); res.StatusCode != 200 || err != nil {
		t.Fatalf("GET %s: %d (%v)", u, res.StatusCode, err)
	}
	return lb
}
