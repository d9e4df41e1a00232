package bankapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestPaymentsDepartmentalInfoNulls: departmentalInfo members sent as null
// (reference §4's sandbox variant "only paymentKind110 filled and the rest
// null", and what the SDKs send for a member they do not set) come back as
// null from the create and from GET, not as "" (before, every null member
// was answered "").
func TestPaymentsDepartmentalInfoNulls(t *testing.T) {
	e := newPayEnv(t)
	id := newUUID(980)
	onlyKind := map[string]any{"drawerStatus101": nil, "kbk": nil, "oktmo": nil, "reasonCode106": nil, "taxPeriod107": nil,
		"docNumber108": nil, "docDate109": nil, "paymentKind110": "0", "uip": nil}
	// payDoc drops nil members, so the nulls are written into its JSON.
	body := strings.Replace(payDoc(id, map[string]any{"departmentalInfo": map[string]any{"paymentKind110": "0"}}),
		`"departmentalInfo":{"paymentKind110":"0"}`,
		`"departmentalInfo":{"drawerStatus101":null,"kbk":null,"oktmo":null,"reasonCode106":null,"taxPeriod107":null,"docNumber108":null,"docDate109":null,"paymentKind110":"0","uip":null}`, 1)
	want := `"departmentalInfo":{"drawerStatus101":null,"kbk":null,"oktmo":null,"reasonCode106":null,"taxPeriod107":null,"docNumber108":null,"docDate109":null,"paymentKind110":"0","uip":null}`
	st, m, raw := e.do("POST", paymentsBase, "pay", body)
	if st != http.StatusCreated || m["bankStatus"] != "CREATED" || !strings.Contains(raw, want) {
		t.Fatalf("create %d %s, want CREATED with %s", st, raw, want)
	}
	if st, _, raw := e.do("GET", paymentsBase+"/"+id, "pay", ""); st != 200 || !strings.Contains(raw, want) {
		t.Fatalf("get %d %s, want %s", st, raw, want)
	}
	// A member sent empty is answered null too: the bank keeps no
	// difference between the two.
	id2 := newUUID(981)
	dept := map[string]any{}
	for k, v := range onlyKind {
		if v == nil {
			v = ""
		}
		dept[k] = v
	}
	if st, _, raw := e.do("POST", paymentsBase, "pay", payDoc(id2, map[string]any{"departmentalInfo": dept})); st != 201 || !strings.Contains(raw, want) {
		t.Fatalf("empty members: %d %s", st, raw)
	}
}
