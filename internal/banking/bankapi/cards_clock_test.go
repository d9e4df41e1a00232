package bankapi

import (
	"encoding/json"
	"testing"

	"partnerapi/internal/banking"
)

func cardLimitNow(t *testing.T, e *cardEnv, id string) (string, string) {
	t.Helper()
	for page := 1; ; page++ {
		lb := listPage(t, e, "?page="+string(rune('0'+page)))
		for _, c := range lb.BusinessCards {
			if c.BusinessCardID == id {
				return string(c.EffectiveLimit), c.LimitExpiresAt
			}
		}
		if rels(lb.Links) == "" || rels(lb.Links) == "prev" {
			t.Fatalf("card %s not listed", id)
		}
	}
}

func advance(t *testing.T, e *cardEnv, d string) string {
	t.Helper()
	code, body := e.do("POST", "/fintech/api/sandbox/clock", "application/json", `{"advance":"`+d+`"}`)
	if code != 200 {
		t.Fatalf("advance %s: %d %s", d, code, body)
	}
	var r clockRes
	_ = json.Unmarshal([]byte(body), &r)
	return r.Now
}

// TestCardLimitExpiryWithSandboxClock sets a limit at 15:00 Moscow time on
// 10 March and walks the sandbox clock across the midnight that ends it
// (00:00 MSK on 12 March = 21:00 UTC on 11 March), reading the card list
// only: expiry needs no request to happen.
func TestCardLimitExpiryWithSandboxClock(t *testing.T) {
	e := newCardEnv(t, 6) // wall clock 2026-03-10T12:00Z
	const path = "/fintech/api/v1/business-cards/limits"
	if code, body := e.do("POST", path, "application/json", limitBody("sbc-00001", "00000000-0000-4000-8000-000000000001", "500", sole)); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := e.do("POST", path, "application/json", limitBody("sbc-00005", "00000000-0000-4000-8000-000000000002", "0", sole)); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	// An unsigned draft is not in force.
	if code, body := e.do("POST", path, "application/json", limitBody("sbc-00006", "00000000-0000-4000-8000-000000000003", "7")); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	if lim, _ := cardLimitNow(t, e, "sbc-00006"); lim != "" {
		t.Fatalf("draft limit in force: %s", lim)
	}
	if lim, exp := cardLimitNow(t, e, "sbc-00001"); lim != "500.00" || exp != "2026-03-11T21:00:00Z" {
		t.Fatalf("limit %q expires %q", lim, exp)
	}
	for _, step := range []struct {
		advance, now, lim1, lim5 string
	}{
		{"32h59m", "2026-03-11T20:59:00Z", "500.00", "0.00"}, // 23:59 MSK on the 11th
		{"1m", "2026-03-11T21:00:00Z", "", "0.00"},           // 00:00 MSK on the 12th
		{"8760h", "2027-03-11T21:00:00Z", "", "0.00"},        // zero lasts
	} {
		if now := advance(t, e, step.advance); now != step.now {
			t.Fatalf("clock %s, want %s", now, step.now)
		}
		if lim, _ := cardLimitNow(t, e, "sbc-00001"); lim != step.lim1 {
			t.Fatalf("at %s card 1 limit %q, want %q", step.now, lim, step.lim1)
		}
		if lim, _ := cardLimitNow(t, e, "sbc-00005"); lim != step.lim5 {
			t.Fatalf("at %s card 5 limit %q, want %q", step.now, lim, step.lim5)
		}
	}
	// A limit set after the move uses the moved day: 2027-03-12 00:00 MSK
	// is the 12th, so it runs to the end of the 13th.
	if code, body := e.do("POST", path, "application/json", limitBody("sbc-00001", "00000000-0000-4000-8000-000000000004", "9.99", sole)); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	if lim, exp := cardLimitNow(t, e, "sbc-00001"); lim != "9.99" || exp != "2027-03-13T21:00:00Z" {
		t.Fatalf("limit %q expires %q", lim, exp)
	}
	for _, bad := range []string{`{"advance":"-1h"}`, `{"advance":"x"}`, `{"advance":"9000h"}`} {
		if code, body := e.do("POST", "/fintech/api/sandbox/clock", "application/json", bad); code != 400 || cause(body) != "VALIDATION_FAULT" {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
}

func TestSandboxClockRefusedOutsideSandbox(t *testing.T) {
	for _, contour := range []string{banking.ContourTest, banking.ContourProduction} {
		e := newCardEnv(t, 1, func(c *banking.CardsConfig) { c.Contour = contour })
		if code, body := e.do("POST", "/fintech/api/sandbox/clock", "application/json", `{"advance":"1h"}`); code != 403 || cause(body) != "ACTION_ACCESS_EXCEPTION" {
			t.Errorf("%s: %d %s", contour, code, body)
		}
	}
}
