package bankapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// A card's 404 carries the cause the deployment chose (reference §15 #4):
// CARD_ID_NOT_FOUND by default, DATA_NOT_FOUND_EXCEPTION when configured;
// a missing limit application is DATA_NOT_FOUND_EXCEPTION either way.
func TestCardNotFoundCause(t *testing.T) {
	e := newCardEnv(t, 3)
	auth := fakeAuth{"tok": {OrgID: tOrg, PartnerID: tPartner, Scopes: []string{banking.ScopeBusinessCardLimit}}}
	for _, tc := range []struct {
		configured, card, limit string
	}{
		{"", CauseCardNotFound, CauseDataNotFound},
		{CauseCardNotFound, CauseCardNotFound, CauseDataNotFound},
		{CauseDataNotFound, CauseDataNotFound, CauseDataNotFound},
	} {
		t.Run("configured "+tc.configured, func(t *testing.T) {
			srv := httptest.NewServer(NewServer(Deps{Auth: auth, Cards: e.cards, CardNotFoundCause: tc.configured}))
			defer srv.Close()
			for _, rq := range []struct{ method, path, body, want string }{
				{"POST", "/fintech/api/v1/business-cards/limits", limitBody("nope", newUUID(1800), "1"), tc.card},
				{"GET", "/fintech/api/v1/business-cards/limits/" + newUUID(1801) + "/state", "", tc.limit},
			} {
				req, _ := http.NewRequest(rq.method, srv.URL+rq.path, strings.NewReader(rq.body))
				req.Header.Set("Authorization", "Bearer tok")
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var b strings.Builder
				_, _ = io.Copy(&b, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 404 || cause(b.String()) != rq.want {
					t.Errorf("%s %s: %d %s, want 404 %s", rq.method, rq.path, resp.StatusCode, b.String(), rq.want)
				}
			}
		})
	}
	for c, want := range map[string]bool{"": true, CauseCardNotFound: true, CauseDataNotFound: true, "NOT_FOUND": false} {
		if ValidCardNotFoundCause(c) != want {
			t.Errorf("ValidCardNotFoundCause(%q) != %v", c, want)
		}
	}
}
