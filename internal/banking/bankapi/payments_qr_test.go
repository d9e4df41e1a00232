package bankapi

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image/png"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"rsc.io/qr"

	"partnerapi/internal/banking"
)

var updateRequisitesQR = flag.Bool("update-requisites-qr", false, "rewrite testdata/payments_requisites_qr.golden")

// payeeDir is the organisation and account lookup a real service finds in
// its identity store, for the invoice draft that names only its account.
type payeeDir struct{}

func (payeeDir) GetOrg(_ context.Context, id string) (banking.Organisation, error) {
	return banking.Organisation{ID: id, Name: "ООО «Песочница»", INN: banking.SandboxOrgINN, KPP: banking.SandboxOrgKPP}, nil
}

func (payeeDir) GetAccount(_ context.Context, number string) (banking.Account, error) {
	if number != banking.SandboxAccount {
		return banking.Account{}, banking.ErrNotFound
	}
	return banking.Account{Number: number, OrgID: payOrg, BIC: banking.SandboxBIC, CorrAccount: banking.SandboxCorrAccount}, nil
}

// getRaw is a GET with an Accept header, answering status, type and body.
func (e *payEnv) getRaw(path, token, accept string) (int, string, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

func TestPaymentRequisitesQR(t *testing.T) {
	e := newPayEnv(t)
	id := newUUID(90)
	if st, _, raw := e.do("POST", paymentsBase, "pay", payDoc(id, nil)); st != 201 {
		t.Fatalf("create: %d %s", st, raw)
	}
	path := paymentsBase + "/" + id + "/requisites-qr"

	// The JSON answer is exactly the golden file.
	st, ct, body := e.getRaw(path, "pay", "")
	if st != 200 || ct != "application/json" {
		t.Fatalf("json: %d %s %s", st, ct, body)
	}
	const golden = "testdata/payments_requisites_qr.golden"
	if *updateRequisitesQR {
		if err := os.WriteFile(golden, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) {
		t.Fatalf("answer differs from %s:\n%s", golden, body)
	}
	var ans requisitesQRBody
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatal(err)
	}
	if _, err := banking.ParseST00012([]byte(ans.Payload)); err != nil {
		t.Fatalf("the answer does not parse: %v", err)
	}

	// The PNG, asked for either way, is a valid image whose side is the
	// library's module count for this payload, plus the quiet zone, at the
	// chosen scale.
	code, err := qr.Encode(ans.Payload, requisitesQRLevel)
	if err != nil {
		t.Fatal(err)
	}
	side := (code.Size + 8) * requisitesQRScale
	for _, tc := range []struct{ name, query, accept string }{
		{"accept", "", "image/png"},
		{"format", "?format=png", "application/json"},
	} {
		t.Run("png by "+tc.name, func(t *testing.T) {
			st, ct, body := e.getRaw(path+tc.query, "pay", tc.accept)
			if st != 200 || ct != "image/png" {
				t.Fatalf("%d %s %.200s", st, ct, body)
			}
			img, err := png.Decode(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			b := img.Bounds()
			if b.Dx() != side || b.Dy() != side || side < 100 || side > 1000 {
				t.Fatalf("image %v, want %d×%d (%d modules)", b, side, side, code.Size)
			}
		})
	}

	// Access is that of the document's digest: any payment scope, the
	// token's organisation only (TestPaymentRequisitesQRInvoice reads with
	// an invoice scope).
	for _, tc := range []struct {
		name, path, token, accept string
		status                    int
		cause                     string
	}{
		{"no token", path, "", "", 401, "UNAUTHORIZED"},
		{"cards scope", path, "cards", "image/png", 403, "ACTION_ACCESS_EXCEPTION"},
		{"another organisation's document", path, "pay2", "", 404, "DATA_NOT_FOUND_EXCEPTION"},
		{"another organisation's document as PNG", path, "pay2", "image/png", 404, "DATA_NOT_FOUND_EXCEPTION"},
		{"unknown document", paymentsBase + "/" + newUUID(91) + "/requisites-qr", "pay", "", 404, "DATA_NOT_FOUND_EXCEPTION"},
		{"unknown format", path + "?format=gif", "pay", "", 400, "VALIDATION_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, ct, body := e.getRaw(tc.path, tc.token, tc.accept)
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			if st != tc.status || ct != "application/json" || m["cause"] != tc.cause {
				t.Fatalf("%d %s %s", st, ct, body)
			}
		})
	}
}

// A draft from an invoice names only the requester's own account; the
// payee's name, INN, KPP and bank come from the organisation and the account.
func TestPaymentRequisitesQRInvoice(t *testing.T) {
	e := newPayEnv(t)
	e.svc.Payees = payeeDir{}
	id := newUUID(92)
	body := `{"externalId":"` + id + `","amount":99.9,"date":"2026-11-22","purpose":"Счёт 7","payeeAccount":"` +
		banking.SandboxAccount + `","priority":"5"}`
	if st, _, raw := e.do("POST", paymentsBase+"/from-invoice", "inv", body); st != 201 {
		t.Fatalf("create: %d %s", st, raw)
	}
	want := "ST00012|Name=ООО «Песочница»|PersonalAcc=40702810538833411733|BankName=ПАО СБЕРБАНК|BIC=044525225|" +
		"CorrespAcc=30101810400000000225|PayeeINN=7707083893|KPP=773601001|Sum=9990|Purpose=Счёт 7"
	// The partner that made the draft with the invoice scope reads the QR
	// it renders for the payer (§14: "what a partner can render from an
	// invoice"), as does a PAY_DOC_RU token of the organisation.
	for _, tok := range []string{"inv", "pay"} {
		st, m, raw := e.do("GET", paymentsBase+"/"+id+"/requisites-qr", tok, "")
		if st != 200 || m["payload"] != want {
			t.Fatalf("%s: %d %s\nwant payload %s", tok, st, raw, want)
		}
		if strings.Count(raw, "\n") != 1 {
			t.Fatalf("answer %q", raw)
		}
	}
}
