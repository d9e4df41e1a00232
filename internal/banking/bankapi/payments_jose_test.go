package bankapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// The JWS tests' certificates, in IDENTITY's records as the store holds
// them: joseKid is payOrg's active certificate, the others are another
// organisation's, an inactive one of payOrg, and one nobody holds.
const (
	joseKid      = "6f1c3a52-0000-4000-8000-00000000a001"
	joseForeign  = "6f1c3a52-0000-4000-8000-00000000a002"
	joseInactive = "6f1c3a52-0000-4000-8000-00000000a003"
	joseUnknown  = "6f1c3a52-0000-4000-8000-00000000a004"
)

// joseCerts is the identity store's certificate look-up.
type joseCerts map[string]banking.Certificate

func (m joseCerts) GetCertificate(_ context.Context, uuid string) (banking.Certificate, error) {
	c, ok := m[uuid]
	if !ok {
		return c, banking.ErrNotFound
	}
	return c, nil
}

// joseEnv is a payment server that opens application/jose bodies with the
// verifier serve wires (banking.JWSVerifier over IDENTITY's certificates,
// the test contour) and signs answers for an Accept of application/jose.
type joseEnv struct {
	*payEnv
	key  *gost.PrivateKey // the private key of every certificate above
	bank *banking.BankKey
}

func newJoseEnv(t *testing.T) *joseEnv {
	t.Helper()
	key, cert := jwsTestKey(t, payNow)
	bank, err := banking.NewBankKey(payNow)
	if err != nil {
		t.Fatal(err)
	}
	certs := joseCerts{
		joseKid:      {UUID: joseKid, UserID: "u1", OrgID: payOrg, DER: cert.Raw, Active: true},
		joseForeign:  {UUID: joseForeign, UserID: "u2", OrgID: payOrg2, DER: cert.Raw, Active: true},
		joseInactive: {UUID: joseInactive, UserID: "u1", OrgID: payOrg, DER: cert.Raw},
	}
	ver := banking.NewJWSVerifier(banking.ContourTest, false, banking.IdentityJWSCertificates{Store: certs, Now: func() time.Time { return payNow }})
	e := newPayEnv(t, func(d *Deps) { d.PaymentJWS, d.JWS = ver, bank })
	return &joseEnv{payEnv: e, key: key, bank: bank}
}

// sign is body as a compact JWS under kid, signed with the test key.
func (e *joseEnv) sign(body, kid string) string {
	e.t.Helper()
	s, err := gost.SignJWS([]byte(body), kid, e.key)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// post sends body with a Content-Type and an Accept (none when "").
func (e *joseEnv) post(path, token, ctype, accept, body string) (int, string, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", token)
	req.Header.Set("Content-Type", ctype)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(raw)
}

// withHeader is compact with its header replaced by hdr, the signature
// kept: what a client that gets the header wrong sends.
func withHeader(compact, hdr string) string {
	parts := strings.Split(compact, ".")
	return strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(base64Std(hdr)), "=") + "." + parts[1] + "." + parts[2]
}

// Every POST under /v1/payments takes its body as a compact JWS (reference
// §1, §9.6) under the card-limit operation's rules: a JWS whose kid names
// an active certificate of the token's organisation and whose signature
// verifies is its payload's document, 201 as the JSON body; a kid missing
// or not a UUID is WORKFLOW_FAULT; a bad signature or a certificate that is
// unknown, inactive or another organisation's is SIGN_CHECK_EXCEPTION; a
// body that is no JWS, or a payload that is no JSON, DESERIALIZATION_FAULT.
// Nothing refused is stored.
func TestPaymentsJose(t *testing.T) {
	e := newJoseEnv(t)
	other, _ := jwsTestKey(t, payNow)
	forged := func(body string) string { s, _ := gost.SignJWS([]byte(body), joseKid, other); return s }
	anyPayee := map[string]any{"isPaidByCredit": false, "payeeBankBic": "044525225", "payeeInn": "7707083893", "payeeName": "ООО Ромашка"}
	budget := map[string]any{"payeeName": "Казначейство России (ФНС России)", "payeeInn": "7727406020", "payeeKpp": "770701001",
		"payeeAccount": "03100643000000018500", "payeeBankBic": "017003983", "payeeBankCorrAccount": "40102810445370000059",
		"departmentalInfo": map[string]any{"drawerStatus101": "01", "kbk": "18201061201010000510", "oktmo": "0"}}
	for i, tc := range []struct {
		name, path, token string
		ctype             string                              // "" is application/jose
		doc               func(id string) string              // the JSON document
		jws               func(e *joseEnv, doc string) string // the body sent
		status            int
		cause             string
	}{
		{"payment", "", "pay", "", payDocJSON, own, 201, ""},
		{"payment with a charset", "", "pay", "application/jose; charset=us-ascii", payDocJSON, own, 201, ""},
		{"from-invoice", "/from-invoice", "inv-only", "", invoiceJSON(nil), own, 201, ""},
		{"from-invoice-any", "/from-invoice-any", "inv-any", "", invoiceJSON(anyPayee), own, 201, ""},
		{"from-invoice-budget", "/from-invoice-budget", "inv-budget", "", invoiceJSON(budget), own, 201, ""},
		{"kid missing", "", "pay", "", payDocJSON, func(e *joseEnv, d string) string { return withHeader(e.sign(d, joseKid), `{"alg":"gost34.10-2012"}`) }, 400, "WORKFLOW_FAULT"},
		{"kid not a UUID", "", "pay", "", payDocJSON, func(e *joseEnv, d string) string {
			return withHeader(e.sign(d, joseKid), `{"alg":"gost34.10-2012","kid":"cert-1"}`)
		}, 400, "WORKFLOW_FAULT"},
		{"invoice draft, kid missing", "/from-invoice-any", "inv-any", "", invoiceJSON(anyPayee), func(e *joseEnv, d string) string {
			return withHeader(e.sign(d, joseKid), `{"alg":"gost34.10-2012"}`)
		}, 400, "WORKFLOW_FAULT"},
		{"wrong signature", "", "pay", "", payDocJSON, func(_ *joseEnv, d string) string { return forged(d) }, 400, "SIGN_CHECK_EXCEPTION"},
		{"signature of another payload", "", "pay", "", payDocJSON, func(e *joseEnv, d string) string {
			parts := strings.Split(e.sign(d, joseKid), ".")
			return strings.Join([]string{parts[0], strings.Split(e.sign(`{}`, joseKid), ".")[1], parts[2]}, ".")
		}, 400, "SIGN_CHECK_EXCEPTION"},
		{"unknown certificate", "", "pay", "", payDocJSON, signedBy(joseUnknown), 400, "SIGN_CHECK_EXCEPTION"},
		{"another organisation's certificate", "", "pay", "", payDocJSON, signedBy(joseForeign), 400, "SIGN_CHECK_EXCEPTION"},
		// The other way round: payOrg2's token with payOrg's certificate.
		{"certificate of the other organisation's token", "", "pay2", "", payDocJSON, own, 400, "SIGN_CHECK_EXCEPTION"},
		{"inactive certificate", "", "pay", "", payDocJSON, signedBy(joseInactive), 400, "SIGN_CHECK_EXCEPTION"},
		{"invoice draft, another organisation's certificate", "/from-invoice", "inv-only", "", invoiceJSON(nil), signedBy(joseForeign), 400, "SIGN_CHECK_EXCEPTION"},
		{"invoice draft, wrong signature", "/from-invoice-budget", "inv-budget", "", invoiceJSON(budget), func(_ *joseEnv, d string) string { return forged(d) }, 400, "SIGN_CHECK_EXCEPTION"},
		{"malformed compact serialisation", "", "pay", "", payDocJSON, func(*joseEnv, string) string { return "abc" }, 400, "DESERIALIZATION_FAULT"},
		{"JSON sent as JWS", "", "pay", "", payDocJSON, func(_ *joseEnv, d string) string { return d }, 400, "DESERIALIZATION_FAULT"},
		{"payload not JSON", "", "pay", "", func(id string) string { return `{"externalId":"` + id + `","amount":` }, own, 400, "DESERIALIZATION_FAULT"},
		{"invoice draft, payload not JSON", "/from-invoice", "inv-only", "", func(string) string { return `[` }, own, 400, "DESERIALIZATION_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := newUUID(2000 + i)
			ctype := tc.ctype
			if ctype == "" {
				ctype = "application/jose"
			}
			st, _, raw := e.post(paymentsBase+tc.path, tc.token, ctype, "", tc.jws(e, tc.doc(id)))
			if st != tc.status || cause(raw) != tc.cause {
				t.Fatalf("%d %s, want %d %q", st, raw, tc.status, tc.cause)
			}
			stored, _, _ := e.do("GET", paymentsBase+"/"+id+"/state", "inv", "")
			if want := map[bool]int{true: 200, false: 404}[st == 201]; stored != want {
				t.Fatalf("state after %d: %d, want %d", st, stored, want)
			}
		})
	}
}

// own signs with payOrg's active certificate.
func own(e *joseEnv, doc string) string { return e.sign(doc, joseKid) }

// signedBy signs with the test key under kid.
func signedBy(kid string) func(*joseEnv, string) string {
	return func(e *joseEnv, doc string) string { return e.sign(doc, kid) }
}

func payDocJSON(id string) string { return payDoc(id, nil) }

func invoiceJSON(over map[string]any) func(string) string {
	return func(id string) string { return invoiceDraft(id, over) }
}

// A JWS body's payload is the document the JSON body is: the same answer
// and the same stored document (GET …/{externalId}), but for what each
// document has of its own (externalId, number, crucialFieldsHash), for a
// valid payment, and the same refusal, byte for byte but
// for its referenceId, for a payment the validation refuses. An Accept of
// application/jose gets the 201 as a JWS under the bank's key, its payload
// the JSON answer.
func TestPaymentsJoseAsJSON(t *testing.T) {
	e := newJoseEnv(t)
	jsonID, joseID := newUUID(2101), newUUID(2102)
	st, _, jsonAnswer := e.post(paymentsBase, "pay", "application/json", "", payDoc(jsonID, nil))
	if st != 201 {
		t.Fatalf("JSON: %d %s", st, jsonAnswer)
	}
	st, ctype, signed := e.post(paymentsBase, "pay", "application/jose", "application/jose", e.sign(payDoc(joseID, nil), joseKid))
	if st != 201 || ctype != "application/jose" {
		t.Fatalf("JWS: %d %s %s", st, ctype, signed)
	}
	answer, err := gost.ParseJWS(signed)
	if err != nil {
		t.Fatalf("answer %q: %v", signed, err)
	}
	if err := answer.Verify(e.bank.Cert); err != nil || answer.Header.Kid != e.bank.Kid {
		t.Fatalf("answer's signature: kid %s, %v", answer.Header.Kid, err)
	}
	sameButID := func(what string, a, b []byte) {
		t.Helper()
		var ma, mb map[string]any
		if err := json.Unmarshal(a, &ma); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &mb); err != nil {
			t.Fatal(err)
		}
		if ma["externalId"] != jsonID || mb["externalId"] != joseID {
			t.Fatalf("%s: externalIds %v and %v", what, ma["externalId"], mb["externalId"])
		}
		// What tells two documents apart: the id, the number the bank
		// gives each in turn, and the hash of the digest, which holds both.
		for _, k := range []string{"externalId", "number", "crucialFieldsHash"} {
			delete(ma, k)
			delete(mb, k)
		}
		ja, _ := json.Marshal(ma)
		jb, _ := json.Marshal(mb)
		if string(ja) != string(jb) {
			t.Fatalf("%s differ:\nJSON %s\nJWS  %s", what, ja, jb)
		}
	}
	sameButID("answers", []byte(jsonAnswer), answer.Payload)
	_, _, storedJSON := e.do("GET", paymentsBase+"/"+jsonID, "pay", "")
	_, _, storedJose := e.do("GET", paymentsBase+"/"+joseID, "pay", "")
	sameButID("stored documents", []byte(storedJSON), []byte(storedJose))

	for _, over := range []map[string]any{
		{"purpose": nil},
		{"amount": "12"},
		{"payerAccount": otherOrgAcc},
		{"date": "2026-01-01"},
	} {
		id := newUUID(2110)
		doc := payDoc(id, over)
		_, _, viaJSON := e.post(paymentsBase, "pay", "application/json", "", doc)
		_, _, viaJose := e.post(paymentsBase, "pay", "application/jose", "", e.sign(doc, joseKid))
		var a, b map[string]any
		_ = json.Unmarshal([]byte(viaJSON), &a)
		_ = json.Unmarshal([]byte(viaJose), &b)
		if a["cause"] == nil || a["referenceId"] == nil {
			t.Fatalf("%v: JSON answer %s is no refusal", over, viaJSON)
		}
		delete(a, "referenceId")
		delete(b, "referenceId")
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("%v: refusals differ:\nJSON %s\nJWS  %s", over, ja, jb)
		}
	}
}

// The documents' later operations, signing a draft and its QR
// confirmation, take a JWS body too, under the same rules.
func TestPaymentsJoseSignAndQR(t *testing.T) {
	e := newJoseEnv(t)
	draft, other := newUUID(2201), newUUID(2202)
	for _, id := range []string{draft, other} {
		if st, _, raw := e.do("POST", paymentsBase, "pay", payDoc(id, nil)); st != 201 {
			t.Fatalf("draft: %d %s", st, raw)
		}
	}
	signBody, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})
	qrBody := `{"externalDocIds":["` + other + `"]}`
	for _, tc := range []struct {
		name, path, body, kid string
		status                int
		cause                 string
	}{
		{"sign, another organisation's certificate", "/" + draft + "/sign", string(signBody), joseForeign, 400, "SIGN_CHECK_EXCEPTION"},
		{"sign", "/" + draft + "/sign", string(signBody), joseKid, 200, ""},
		{"QR confirmation, inactive certificate", "/qr-confirmation", qrBody, joseInactive, 400, "SIGN_CHECK_EXCEPTION"},
		{"QR confirmation", "/qr-confirmation", qrBody, joseKid, 201, ""},
		{"QR confirmation, payload not JSON", "/qr-confirmation", `{"externalDocIds":`, joseKid, 400, "DESERIALIZATION_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, raw := e.post(paymentsBase+tc.path, "pay", "application/jose", "", e.sign(tc.body, tc.kid))
			if st != tc.status || cause(raw) != tc.cause {
				t.Fatalf("%d %s, want %d %q", st, raw, tc.status, tc.cause)
			}
		})
	}
	if g := e.get(draft); g["bankStatus"] != banking.StatusImplemented {
		t.Fatalf("signed draft: %v", g["bankStatus"])
	}
}

// Without a JWS verifier (a server built without one) a JWS body is what
// any other non-JSON body is, DESERIALIZATION_FAULT, and nothing is stored.
func TestPaymentsJoseWithoutVerifier(t *testing.T) {
	signer := newJoseEnv(t)
	e := &joseEnv{payEnv: newPayEnv(t)}
	id := newUUID(2301)
	if st, _, raw := e.post(paymentsBase, "pay", "application/jose", "", signer.sign(payDoc(id, nil), joseKid)); st != 400 || cause(raw) != "DESERIALIZATION_FAULT" {
		t.Fatalf("without a verifier: %d %s", st, raw)
	}
	if st, _, raw := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); st != 404 {
		t.Fatalf("stored: %d %s", st, raw)
	}
}
