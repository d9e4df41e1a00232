package bankapi

import (
	"net/http"
	"testing"

	"partnerapi/internal/banking"
)

func TestPaymentsRateLimitAndMaintenance(t *testing.T) {
	e := newPayEnv(t)
	e.svc.Gate = &banking.Gate{Limits: &banking.OpLimiter{Rate: 0.001, Burst: 2}, Maintenance: &banking.Maintenance{}}
	id := newUUID(70)
	path := paymentsBase + "/" + id + "/state"
	for i, want := range []int{404, 404, 429} {
		if st, m, _ := e.do("GET", path, "pay", ""); st != want {
			t.Fatalf("call %d: %d %v, want %d", i, st, m, want)
		} else if want == 429 && m["cause"] != "TOO_MANY_REQUESTS" {
			t.Fatalf("cause %v", m["cause"])
		}
	}
	// The budget is per token and per operation.
	if st, _, _ := e.do("GET", path, "pay2", ""); st != 404 {
		t.Fatalf("other token limited: %d", st)
	}
	if st, _, _ := e.do("POST", paymentsBase, "pay", payDoc(id, nil)); st != http.StatusCreated {
		t.Fatalf("other operation limited: %d", st)
	}
	// Unauthenticated calls are refused before they spend a budget.
	if st, _, _ := e.do("GET", path, "", ""); st != 401 {
		t.Fatalf("anonymous: %d", st)
	}
	e.svc.Gate.Maintenance.Set(true)
	if st, m, _ := e.do("POST", paymentsBase, "pay", payDoc(newUUID(71), nil)); st != 503 || m["cause"] != "UNAVAILABLE_RESOURCE_EXCEPTION" {
		t.Fatalf("maintenance: %d %v", st, m)
	}
	e.svc.Gate.Maintenance.Set(false)
	if st, _, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(71), nil)); st != 201 {
		t.Fatalf("after maintenance: %d %s", st, raw)
	}
}
