package bankapi

import (
	"context"
	"fmt"
	"testing"

	"partnerapi/internal/gost"
)

// TestCardLimitSettingOff: reference §11 answers 400 WORKFLOW_FAULT to a
// limit application when the limit setting is off. With the organisation's
// setting off, an application to a card that would take it, JSON or JWS,
// is refused so and not stored, while the answers that do not depend on
// the setting stay: 403 for a partner without any offer, 404 for an unknown
// card; the card list still answers. Turned on again, applications are
// taken.
func TestCardLimitSettingOff(t *testing.T) {
	e := newCardEnv(t, 10)
	ctx := context.Background()
	const path = "/fintech/api/v1/business-cards/limits"
	ext := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", 500+i) }
	jws, err := gost.SignJWS([]byte(limitBody("sbc-00001", ext(2), "7")), e.kid, e.key)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetCardLimitsOff(ctx, tOrg, true); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name, method, path, ctype, body, token string
		code                                   int
		cause                                  string
	}{
		{"unsigned application", "POST", path, "application/json", limitBody("sbc-00001", ext(1), "10"), "tok", 400, "WORKFLOW_FAULT"},
		{"JWS application", "POST", path, "application/jose", jws, "tok", 400, "WORKFLOW_FAULT"},
		{"signed application", "POST", path, "application/json", limitBody("sbc-00005", ext(3), "0", sole), "tok", 400, "WORKFLOW_FAULT"},
		{"unknown card", "POST", path, "application/json", limitBody("nope", ext(4), "10"), "tok", 404, "CARD_ID_NOT_FOUND"},
		{"partner without any offer", "POST", path, "application/json", limitBody("sbc-00001", ext(5), "10"), "tok-other", 403, "ACTION_ACCESS_EXCEPTION"},
		{"card list", "GET", "/fintech/api/v1/business-cards", "", "", "tok", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do(tc.method, tc.path, tc.ctype, tc.body, tc.token)
			if code != tc.code || (tc.cause != "" && cause(body) != tc.cause) {
				t.Fatalf("case %d: %d %s, want %d %s", i, code, body, tc.code, tc.cause)
			}
		})
	}
	for _, i := range []int{1, 2, 3} {
		if code, body := e.do("GET", path+"/"+ext(i)+"/state", "", ""); code != 404 {
			t.Errorf("application %s refused with the setting off is stored: %d %s", ext(i), code, body)
		}
	}
	if err := e.store.SetCardLimitsOff(ctx, tOrg, false); err != nil {
		t.Fatal(err)
	}
	if code, body := e.do("POST", path, "application/json", limitBody("sbc-00001", ext(1), "10")); code != 201 {
		t.Fatalf("setting on again: %d %s", code, body)
	}
}
