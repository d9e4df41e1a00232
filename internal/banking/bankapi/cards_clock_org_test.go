package bankapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// POST /fintech/api/sandbox/clock moves its caller's organisation only: a
// partner of another organisation, holding nothing but BUSINESS_CARD_LIMIT,
// moved the one shared clock and expired every tenant's card limits.
func TestSandboxClockIsPerOrganisation(t *testing.T) {
	e := newCardEnv(t, 1)
	const path = "/fintech/api/v1/business-cards/limits"
	if code, body := e.do("POST", path, "application/json", limitBody("sbc-00001", "00000000-0000-4000-8000-0000000000a1", "500", sole)); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	other := httptest.NewServer(NewServer(Deps{Cards: e.cards, Auth: fakeAuth{
		"tok-b": {OrgID: "org-b", PartnerID: "partner-b", Scopes: []string{banking.ScopeBusinessCardLimit}}}}))
	t.Cleanup(other.Close)
	req, _ := http.NewRequest("POST", other.URL+"/fintech/api/sandbox/clock", strings.NewReader(`{"advance":"49h"}`))
	req.Header.Set("Authorization", "Bearer tok-b")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var moved clockRes
	_ = json.NewDecoder(resp.Body).Decode(&moved)
	resp.Body.Close()
	if resp.StatusCode != 200 || moved.Now != "2026-03-12T13:00:00Z" {
		t.Fatalf("another organisation's advance: %d %+v", resp.StatusCode, moved)
	}
	if lim, _ := cardLimitNow(t, e, "sbc-00001"); lim != "500.00" {
		t.Fatalf("another organisation's advance expired this one's limit: %q", lim)
	}
	now, err := e.cards.Now(context.Background(), tOrg)
	if err != nil || !now.Equal(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("this organisation's clock: %v %v", now, err)
	}
	// The organisation's own advance still expires its limit.
	if now := advance(t, e, "49h"); now != "2026-03-12T13:00:00Z" {
		t.Fatalf("own advance: %s", now)
	}
	if lim, _ := cardLimitNow(t, e, "sbc-00001"); lim != "" {
		t.Fatalf("own advance left the limit in force: %q", lim)
	}
}
