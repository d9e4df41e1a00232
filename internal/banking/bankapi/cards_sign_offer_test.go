package bankapi

import (
	"context"
	"strings"
	"testing"
)

// TestCardLimitSignOfferFirst checks that the sign of a limit application
// answers a partner's offer before anything the application says: a
// partner without any offer gets 403 whether or not the application exists
// (as GET …/state answers it), and one whose offer leaves out the card's
// account gets the card's 400, not the application's status. Answered
// first, the 404 and the "status EXPORTED" refusal told such a partner which
// externalIds the organisation had used and which were in force.
func TestCardLimitSignOfferFirst(t *testing.T) {
	e := newCardEnv(t, 10)
	const (
		draft    = "6b1f0c2e-0000-4000-8000-000000000001"
		inForce  = "6b1f0c2e-0000-4000-8000-000000000002"
		unknown  = "6b1f0c2e-0000-4000-8000-0000000000ff"
		signBody = `{"digestSignatures":[{"base64Encoded":"AAAA","certificateUuid":"` + sole + `"}]}`
	)
	if code, body := e.do("POST", "/fintech/api/v1/business-cards/limits", "application/json", limitBody("sbc-00001", draft, "5")); code != 201 {
		t.Fatalf("create draft: %d %s", code, body)
	}
	if code, body := e.do("POST", "/fintech/api/v1/business-cards/limits", "application/json", limitBody("sbc-00001", inForce, "5", sole)); code != 201 {
		t.Fatalf("create in force: %d %s", code, body)
	}
	// partner-3 signed the offer on the organisation's other account only.
	if err := e.store.AddOfferAccount(context.Background(), "partner-3", tOrg, tNoOffer); err != nil {
		t.Fatal(err)
	}
	sign := func(ext, tok string) (int, string) {
		return e.do("POST", "/fintech/api/v1/business-cards/limits/"+ext+"/sign", "application/json", signBody, tok)
	}
	for _, ext := range []string{unknown, draft, inForce} {
		if code, body := sign(ext, "tok-other"); code != 403 || cause(body) != "ACTION_ACCESS_EXCEPTION" {
			t.Errorf("partner without an offer, %s: %d %s, want 403 ACTION_ACCESS_EXCEPTION", ext, code, body)
		}
	}
	for _, ext := range []string{draft, inForce} {
		if code, body := sign(ext, "tok-third"); code != 400 || cause(body) != "WORKFLOW_FAULT" || strings.Contains(body, "EXPORTED") {
			t.Errorf("partner without an offer on the card's account, %s: %d %s, want the card's 400", ext, code, body)
		}
	}
	if got := limitStatus(t, e, draft, "tok"); got != "CREATED" {
		t.Errorf("draft %s after refused signs, want CREATED", got)
	}
	// The partner with the offer still signs, and the one in force is still
	// refused as such.
	if code, body := sign(inForce, "tok"); code != 400 || !strings.Contains(body, "EXPORTED") {
		t.Errorf("in force: %d %s", code, body)
	}
	if code, body := sign(draft, "tok"); code != 200 || !strings.Contains(body, `"bankStatus":"EXPORTED"`) {
		t.Errorf("draft: %d %s", code, body)
	}
}

// TestCardLimitStateOutsideOffer checks that GET …/state refuses, with the
// card's 400 as the create and the sign do, a partner whose offer leaves
// out the account of the application's card: such a partner does not see
// the card in its list, and read the state of applications other partners
// filed on it.
func TestCardLimitStateOutsideOffer(t *testing.T) {
	e := newCardEnv(t, 10)
	const ext = "6b1f0c2e-0000-4000-8000-000000000003"
	if code, body := e.do("POST", "/fintech/api/v1/business-cards/limits", "application/json", limitBody("sbc-00001", ext, "5", sole)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if err := e.store.AddOfferAccount(context.Background(), "partner-3", tOrg, tNoOffer); err != nil {
		t.Fatal(err)
	}
	state := "/fintech/api/v1/business-cards/limits/" + ext + "/state"
	if code, body := e.do("GET", state, "", "", "tok-third"); code != 400 || cause(body) != "WORKFLOW_FAULT" || strings.Contains(body, "EXPORTED") {
		t.Errorf("partner without an offer on the card's account: %d %s, want the card's 400", code, body)
	}
	if code, body := e.do("GET", state, "", "", "tok-other"); code != 403 {
		t.Errorf("partner without an offer: %d %s, want 403", code, body)
	}
	// Once its offer covers the account, it reads the state.
	if err := e.store.AddOfferAccount(context.Background(), "partner-3", tOrg, tOffer); err != nil {
		t.Fatal(err)
	}
	if code, body := e.do("GET", state, "", "", "tok-third"); code != 200 || !strings.Contains(body, `"bankStatus":"EXPORTED"`) {
		t.Errorf("partner with the offer: %d %s", code, body)
	}
}
