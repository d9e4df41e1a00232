package bankapi

import (
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// TestWebhookSettingUpdatedAtAsStored: the updatedAt a PUT answers is the
// one every later GET answers. The databases keep microseconds, and the
// PUT used to answer the clock's nanoseconds
// ("2026-12-01T04:20:04.401709827Z", then GET "…04.401709Z"), so a partner
// comparing the two saw a setting changed behind its back.
func TestWebhookSettingUpdatedAtAsStored(t *testing.T) {
	e := newHookEnv(t, banking.WebhookTarget{})
	at := time.Date(2026, 12, 1, 4, 20, 4, 401709827, time.UTC)
	e.hooks.Now = func() time.Time { return at }
	st, put, raw := e.do("PUT", webhookBase, "p1", `{"url":"https://one.example/hook"}`)
	if st != 200 {
		t.Fatalf("put: %d %s", st, raw)
	}
	st, get, raw := e.do("GET", webhookBase, "p1", "")
	if st != 200 {
		t.Fatalf("get: %d %s", st, raw)
	}
	if put["updatedAt"] != get["updatedAt"] || get["updatedAt"] != "2026-12-01T04:20:04.401709Z" {
		t.Fatalf("PUT answered updatedAt %v, GET %v; want both 2026-12-01T04:20:04.401709Z", put["updatedAt"], get["updatedAt"])
	}
}
