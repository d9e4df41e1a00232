package bankapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/gost"
	"partnerapi/internal/storetest"
)

const (
	limitsPath = "/fintech/api/v1/business-cards/limits"
	tOrg2      = "org-2"
	tJWSParty  = "partner-jws" // the partner the JWS setting names
)

// certMap is the identity store's certificate lookup for the strict
// contours: registered GOST certificates by uuid.
type certMap map[string]banking.Certificate

func (m certMap) GetCertificate(_ context.Context, uuid string) (banking.Certificate, error) {
	c, ok := m[strings.ToLower(uuid)]
	if !ok {
		return c, banking.ErrNotFound
	}
	return c, nil
}

// newSignEnv is newCardEnv with the real signature verifier of contour
// instead of the fake: in the sandbox the uuids of reference §7 decide each
// signature's role, elsewhere certs holds the certificates whose GOST
// signatures are checked. Its tokens: "tok" (user-1 of org-1, partner-1),
// "tok-user2" (user-2 of the same organisation and partner), "tok-jws"
// (org-1's partner that must send JWS), "tok-org2" (another organisation),
// "tok-pay" (no card scope).
func newSignEnv(t *testing.T, contour string, certs certMap) *cardEnv {
	t.Helper()
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := bankingsql.MigrateCards(ctx, db); err != nil {
		t.Fatal(err)
	}
	e := &cardEnv{t: t, store: bankingsql.NewCardStore(db), ver: &fakeVerifier{},
		wall: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC), kid: "7c9e6679-7425-40de-944b-e07fc1f90ae7"}
	key, cert := jwsTestKey(t, e.wall)
	e.key = key
	cfg := banking.CardsConfig{Contour: contour, Now: func() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.wall },
		JWSRequired: func(p string) bool { return p == tJWSParty }}
	// A nil certMap would be a lookup that finds nothing; the sandbox's
	// verifier goes without one.
	var lookup banking.CertificateLookup
	if certs != nil {
		lookup = certs
	}
	var err error
	if e.cards, err = banking.NewCards(e.store, cfg, banking.NewSignatureVerifier(contour, lookup), fakeCerts{kid: e.kid, cert: cert}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tPartner, tJWSParty} {
		if err := e.store.AddOfferAccount(ctx, p, tOrg, tOffer); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 10; i++ {
		if err := e.store.InsertCard(ctx, banking.SandboxCard(tOrg, "044525225", tOffer, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.store.AddOfferAccount(ctx, tPartner, tOrg2, tNoOffer); err != nil {
		t.Fatal(err)
	}
	if err := e.store.InsertCard(ctx, banking.SandboxCard(tOrg2, "044525225", tNoOffer, 0)); err != nil {
		t.Fatal(err)
	}
	card := []string{banking.ScopeBusinessCardLimit}
	auth := fakeAuth{
		"tok":       {OrgID: tOrg, UserID: "user-1", PartnerID: tPartner, Scopes: card},
		"tok-user2": {OrgID: tOrg, UserID: "user-2", PartnerID: tPartner, Scopes: card},
		"tok-jws":   {OrgID: tOrg, UserID: "user-1", PartnerID: tJWSParty, Scopes: card},
		"tok-org2":  {OrgID: tOrg2, UserID: "user-9", PartnerID: tPartner, Scopes: card},
		"tok-pay":   {OrgID: tOrg, UserID: "user-1", PartnerID: tPartner, Scopes: []string{banking.ScopePayDocRU}},
	}
	e.srv = httptest.NewServer(NewServer(Deps{Auth: auth, Cards: e.cards}))
	t.Cleanup(e.srv.Close)
	return e
}

// sandboxSig is a digestSignatures element naming a §7 certificate; the
// sandbox does not read its bytes. "qualified" is the UKEP_UL one.
func sandboxSig(uuid string) string {
	if uuid == banking.SandboxCertQualified {
		return fmt.Sprintf(`{"base64Encoded":"AAAA","certificateUuid":%q,"signType":"UKEP_UL"}`, uuid)
	}
	return fmt.Sprintf(`{"base64Encoded":"AAAA","certificateUuid":%q}`, uuid)
}

// signBodyOf is a sign body of the given digestSignatures elements.
func signBodyOf(sigs ...string) string {
	return `{"digestSignatures":[` + strings.Join(sigs, ",") + `]}`
}

// limitWith is a limit application with the given digestSignatures
// elements (none: a draft).
func limitWith(card, ext, limit string, sigs ...string) string {
	s := ""
	if len(sigs) > 0 {
		s = `,"digestSignatures":[` + strings.Join(sigs, ",") + `]`
	}
	return fmt.Sprintf(`{"code":"NON_RENEW","businessCardId":%q,"externalId":%q,"limit":%s%s}`, card, ext, limit, s)
}

// limitStatus is the application's bankStatus by its /state.
func limitStatus(t *testing.T, e *cardEnv, ext, tok string) string {
	t.Helper()
	code, body := e.do("GET", limitsPath+"/"+ext+"/state", "", "", tok)
	if code != 200 {
		t.Fatalf("state of %s: %d %s", ext, code, body)
	}
	var st banking.LimitState
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	return st.BankStatus
}

// cardInList is the card's entry in the business-card list.
func cardInList(t *testing.T, e *cardEnv, id string) banking.CardView {
	t.Helper()
	for _, c := range listPage(t, e, "").BusinessCards {
		if c.BusinessCardID == id {
			return c
		}
	}
	t.Fatalf("card %s not listed", id)
	return banking.CardView{}
}

// TestCardLimitSign drives POST …/limits/{externalId}/sign through HTTP
// with the sandbox's verifier: an application collects its signatures one
// request at a time, CREATED → PARTSIGNED → EXPORTED, under the signature
// set rules of creation counted over every signature it has; an
// application in force cannot be signed; a refused sign leaves it as it
// was. Before the operation a PARTSIGNED application could never be
// completed.
func TestCardLimitSign(t *testing.T) {
	e := newSignEnv(t, banking.ContourSandbox, nil)
	first, second := sandboxSig(banking.SandboxCertFirst), sandboxSig(banking.SandboxCertSecond)
	sole, qualified := sandboxSig(banking.SandboxCertSole), sandboxSig(banking.SandboxCertQualified)
	unknown := sandboxSig("11111111-1111-4111-8111-111111111111")
	for i, tc := range []struct {
		name    string
		created []string // the application's signatures at creation
		card    string   // "" is sbc-00001
		tok     string   // the signer's token; "" is "tok"
		body    string   // the sign's body
		code    int
		cause   string
		status  string // the application's status after the sign
	}{
		{name: "draft, first", body: signBodyOf(first), code: 200, status: "PARTSIGNED"},
		{name: "draft, second", body: signBodyOf(second), code: 200, status: "PARTSIGNED"},
		{name: "draft, sole authority", body: signBodyOf(sole), code: 200, status: "EXPORTED"},
		{name: "draft, qualified", body: signBodyOf(qualified), code: 200, status: "EXPORTED"},
		{name: "draft, first and second", body: signBodyOf(second, first), code: 200, status: "EXPORTED"},
		{name: "first, then second", created: []string{first}, body: signBodyOf(second), code: 200, status: "EXPORTED"},
		{name: "second, then first", created: []string{second}, body: signBodyOf(first), code: 200, status: "EXPORTED"},
		{name: "not delivered card", card: "sbc-00005", created: []string{first}, body: signBodyOf(second), code: 200, status: "EXPORTED"},
		{name: "first twice", created: []string{first}, body: signBodyOf(first), code: 400, cause: "WORKFLOW_FAULT", status: "PARTSIGNED"},
		{name: "first, then sole authority", created: []string{first}, body: signBodyOf(sole), code: 400, cause: "WORKFLOW_FAULT", status: "PARTSIGNED"},
		{name: "first, then qualified", created: []string{first}, body: signBodyOf(qualified), code: 400, cause: "WORKFLOW_FAULT", status: "PARTSIGNED"},
		{name: "first, then both", created: []string{first}, body: signBodyOf(second, first), code: 400, cause: "WORKFLOW_FAULT", status: "PARTSIGNED"},
		{name: "draft, sole authority with first", body: signBodyOf(sole, first), code: 400, cause: "WORKFLOW_FAULT", status: "CREATED"},
		{name: "draft, three", body: signBodyOf(first, second, sole), code: 400, cause: "WORKFLOW_FAULT", status: "CREATED"},
		{name: "draft, unknown certificate", body: signBodyOf(unknown), code: 400, cause: "WORKFLOW_FAULT", status: "CREATED"},
		{name: "in force by sole authority", created: []string{sole}, body: signBodyOf(sole), code: 400, cause: "WORKFLOW_FAULT", status: "EXPORTED"},
		{name: "in force by both", created: []string{first, second}, body: signBodyOf(first), code: 400, cause: "WORKFLOW_FAULT", status: "EXPORTED"},
		{name: "no signatures", body: `{"digestSignatures":[]}`, code: 400, cause: "VALIDATION_FAULT", status: "CREATED"},
		{name: "no member", body: `{}`, code: 400, cause: "VALIDATION_FAULT", status: "CREATED"},
		{name: "signature without certificate", body: `{"digestSignatures":[{"base64Encoded":"AAAA"}]}`, code: 400, cause: "VALIDATION_FAULT", status: "CREATED"},
		{name: "not JSON", body: `{"digestSignatures":`, code: 400, cause: "DESERIALIZATION_FAULT", status: "CREATED"},
		{name: "another organisation's token", tok: "tok-org2", body: signBodyOf(sole), code: 404, cause: "DATA_NOT_FOUND_EXCEPTION", status: "CREATED"},
		{name: "without the card scope", tok: "tok-pay", body: signBodyOf(sole), code: 403, cause: "ACTION_ACCESS_EXCEPTION", status: "CREATED"},
		{name: "without a token", tok: "nobody", body: signBodyOf(sole), code: 401, status: "CREATED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ext := fmt.Sprintf("7d3e2f10-0000-4000-8000-%012d", i)
			card := tc.card
			if card == "" {
				card = "sbc-00001"
			}
			if code, body := e.do("POST", limitsPath, "application/json", limitWith(card, ext, "250", tc.created...)); code != 201 {
				t.Fatalf("create: %d %s", code, body)
			}
			tok := tc.tok
			if tok == "" {
				tok = "tok"
			}
			code, body := e.do("POST", limitsPath+"/"+ext+"/sign", "application/json", tc.body, tok)
			if code != tc.code || (tc.cause != "" && cause(body) != tc.cause) {
				t.Fatalf("sign: %d %s, want %d %s", code, body, tc.code, tc.cause)
			}
			if code == 200 {
				var l banking.LimitChange
				if err := json.Unmarshal([]byte(body), &l); err != nil {
					t.Fatal(err)
				}
				if l.BankStatus != tc.status || l.ExternalID != ext || l.BusinessCardID != card || string(l.Limit) != "250.00" ||
					len(l.DigestSignatures) != len(tc.created)+strings.Count(tc.body, "certificateUuid") {
					t.Fatalf("answer %s, want %s with every signature collected", body, tc.status)
				}
			}
			if got := limitStatus(t, e, ext, "tok"); got != tc.status {
				t.Fatalf("status %s after the sign, want %s", got, tc.status)
			}
		})
	}
	if code, body := e.do("POST", limitsPath+"/7d3e2f10-0000-4000-8000-0000000000ff/sign", "application/json", signBodyOf(sole)); code != 404 ||
		cause(body) != "DATA_NOT_FOUND_EXCEPTION" {
		t.Errorf("unknown application: %d %s", code, body)
	}
	if code, body := e.do("POST", limitsPath+"/42/sign", "application/json", signBodyOf(sole)); code != 400 || cause(body) != "VALIDATION_FAULT" {
		t.Errorf("externalId not a UUID: %d %s", code, body)
	}
	// The card is checked as at creation: one blocked since the application
	// was filed takes no limit, and the application stays as it was.
	const blocked = "7d3e2f10-0000-4000-8000-0000000000b1"
	if code, body := e.do("POST", limitsPath, "application/json", limitWith("sbc-00006", blocked, "5", first)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if err := e.store.SetCardStatus(context.Background(), tOrg, "sbc-00006", banking.CardBlocked); err != nil {
		t.Fatal(err)
	}
	if code, body := e.do("POST", limitsPath+"/"+blocked+"/sign", "application/json", signBodyOf(second)); code != 400 || cause(body) != "WORKFLOW_FAULT" {
		t.Errorf("blocked card: %d %s", code, body)
	}
	if got := limitStatus(t, e, blocked, "tok"); got != "PARTSIGNED" {
		t.Errorf("blocked card's application %s, want PARTSIGNED", got)
	}
}

// TestCardLimitSignInForce checks the limit a later-completed application
// puts on the card (GET business-cards): in force from its last signature,
// so a limit above 0 lasts to the end of the day after that day (reference
// §11), not after the day it was filed; and, as the application put in
// force last, it replaces one that came into force in between, while a
// newer one in force replaces it in turn.
func TestCardLimitSignInForce(t *testing.T) {
	e := newSignEnv(t, banking.ContourSandbox, nil)
	first, second, sole := sandboxSig(banking.SandboxCertFirst), sandboxSig(banking.SandboxCertSecond), sandboxSig(banking.SandboxCertSole)
	const a, b, c = "8e4f3a21-0000-4000-8000-00000000000a", "8e4f3a21-0000-4000-8000-00000000000b", "8e4f3a21-0000-4000-8000-00000000000c"
	advance := func(d time.Duration) { e.mu.Lock(); e.wall = e.wall.Add(d); e.mu.Unlock() }
	// 2026-03-10 15:00 Moscow: a is filed with its first signature.
	if code, body := e.do("POST", limitsPath, "application/json", limitWith("sbc-00001", a, "500", first)); code != 201 {
		t.Fatalf("a: %d %s", code, body)
	}
	advance(time.Hour)
	if code, body := e.do("POST", limitsPath, "application/json", limitWith("sbc-00001", b, "300", sole)); code != 201 {
		t.Fatalf("b: %d %s", code, body)
	}
	if got := cardInList(t, e, "sbc-00001"); got.EffectiveLimit != "300.00" {
		t.Fatalf("before a is complete: limit %s, want b's 300.00", got.EffectiveLimit)
	}
	// 2026-03-11 21:00 Moscow: the second signer completes a, whose limit
	// then runs to the end of 2026-03-12 in Moscow.
	advance(30 * time.Hour)
	if code, body := e.do("POST", limitsPath+"/"+a+"/sign", "application/json", signBodyOf(second)); code != 200 {
		t.Fatalf("sign a: %d %s", code, body)
	}
	got := cardInList(t, e, "sbc-00001")
	if got.EffectiveLimit != "500.00" || got.LimitExpiresAt != "2026-03-12T21:00:00Z" {
		t.Fatalf("after a is complete: limit %s until %s, want a's 500.00 until 2026-03-12T21:00:00Z (end of 2026-03-12 in Moscow)",
			got.EffectiveLimit, got.LimitExpiresAt)
	}
	// A day on, still within a's time, a counted from its filing would
	// have ended at the end of 2026-03-11.
	advance(20 * time.Hour)
	if got := cardInList(t, e, "sbc-00001"); got.EffectiveLimit != "500.00" {
		t.Fatalf("2026-03-12 17:00 Moscow: limit %q, want a's 500.00", got.EffectiveLimit)
	}
	if code, body := e.do("POST", limitsPath, "application/json", limitWith("sbc-00001", c, "0", sole)); code != 201 {
		t.Fatalf("c: %d %s", code, body)
	}
	if got := cardInList(t, e, "sbc-00001"); got.EffectiveLimit != "0.00" || got.LimitExpiresAt != "" {
		t.Fatalf("after c: limit %s until %q, want c's 0.00 for the card's lifetime", got.EffectiveLimit, got.LimitExpiresAt)
	}
}

// TestCardLimitSignJWS: the sign takes the transport of POST …/limits. A
// partner the JWS setting names gets 415 JWS_EXCEPTED for a JSON body and
// has its JWS-signed body taken; a JWS that does not verify is refused
// without touching the application.
func TestCardLimitSignJWS(t *testing.T) {
	e := newSignEnv(t, banking.ContourSandbox, nil)
	const ext = "9f5a4b32-0000-4000-8000-000000000001"
	create, err := gost.SignJWS([]byte(limitWith("sbc-00001", ext, "100", sandboxSig(banking.SandboxCertFirst))), e.kid, e.key)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := e.do("POST", limitsPath, "application/jose", create, "tok-jws"); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	payload := []byte(signBodyOf(sandboxSig(banking.SandboxCertSecond)))
	good, err := gost.SignJWS(payload, e.kid, e.key)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	forged, _ := gost.SignJWS(payload, e.kid, other)
	for _, tc := range []struct {
		name, tok, ctype, body string
		code                   int
		cause, status          string
	}{
		{"JSON where JWS is required", "tok-jws", "application/json", string(payload), 415, "JWS_EXCEPTED", "PARTSIGNED"},
		{"forged JWS", "tok-jws", "application/jose", forged, 400, "SIGN_CHECK_EXCEPTION", "PARTSIGNED"},
		{"not a JWS", "tok-jws", "application/jose", "abc", 400, "DESERIALIZATION_FAULT", "PARTSIGNED"},
		{"text/plain", "tok", "text/plain", string(payload), 400, "DESERIALIZATION_FAULT", "PARTSIGNED"},
		{"JWS", "tok-jws", "application/jose", good, 200, "", "EXPORTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do("POST", limitsPath+"/"+ext+"/sign", tc.ctype, tc.body, tc.tok)
			if code != tc.code || (tc.cause != "" && cause(body) != tc.cause) {
				t.Fatalf("%d %s, want %d %s", code, body, tc.code, tc.cause)
			}
			if got := limitStatus(t, e, ext, "tok"); got != tc.status {
				t.Fatalf("status %s, want %s", got, tc.status)
			}
		})
	}
}

// TestCardLimitSignRace sends one application's second signature from many
// clients at once: exactly one completes it, every other is 400
// WORKFLOW_FAULT (the signature is already there, or the store's
// compare-and-set refused the late one), and the application has its two
// signatures, not one per signer.
func TestCardLimitSignRace(t *testing.T) {
	e := newSignEnv(t, banking.ContourSandbox, nil)
	const rounds, signers = 4, 8
	for r := range rounds {
		ext := fmt.Sprintf("a0b1c2d3-0000-4000-8000-%012d", r)
		if code, body := e.do("POST", limitsPath, "application/json", limitWith("sbc-00001", ext, "10", sandboxSig(banking.SandboxCertFirst))); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for range signers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, body := e.do("POST", limitsPath+"/"+ext+"/sign", "application/json", signBodyOf(sandboxSig(banking.SandboxCertSecond)))
				if code != 200 && cause(body) != "WORKFLOW_FAULT" {
					t.Errorf("a losing signer: %d %s, want 400 WORKFLOW_FAULT", code, body)
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if codes[200] != 1 || codes[400] != signers-1 {
			t.Fatalf("%s: answers %v, want one 200 and %d 400", ext, codes, signers-1)
		}
		l, err := e.store.Limit(context.Background(), tOrg, ext)
		if err != nil {
			t.Fatal(err)
		}
		if l.BankStatus != banking.LimitExported || len(l.DigestSignatures) != 2 {
			t.Fatalf("%s: %s with %d signatures, want EXPORTED with 2", ext, l.BankStatus, len(l.DigestSignatures))
		}
	}
}

// TestCardLimitSignForeignCertificate: outside the sandbox the signatures
// are real GOST signatures of the application's digest (reference §8, the
// four lines), and a certificate of a user other than the token's is
// refused with SIGN_CHECK_EXCEPTION, as a limit application's creation
// refuses it (Verify, not the payments' INVALIDEDS): the application keeps
// waiting, and its own user then completes it. The externalId is written in
// capitals at creation and in the sign's path, and the digest carries it
// so.
func TestCardLimitSignForeignCertificate(t *testing.T) {
	now := time.Now()
	type signer struct {
		uuid string
		cert *gost.Certificate
		key  *gost.PrivateKey
	}
	certs := certMap{}
	register := func(uuid, user string, role banking.SignatureRole) signer {
		key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := gost.SelfSignedCertificate(key, "signer "+user, now.Add(-time.Hour), now.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		certs[uuid] = banking.Certificate{UUID: uuid, UserID: user, OrgID: tOrg, DER: cert.Raw, Role: role, Active: true, TypeName: "TOKEN"}
		return signer{uuid: uuid, cert: cert, key: key}
	}
	u1 := register("c0000000-0000-4000-8000-000000000001", "user-1", banking.RoleFirst)
	u2 := register("c0000000-0000-4000-8000-000000000002", "user-2", banking.RoleSecond)
	e := newSignEnv(t, banking.ContourTest, certs)
	const ext = "B1C2D3E4-0000-4000-8000-0000000000AA"
	digest := "businessCardId=sbc-00001\ncode=NON_RENEW\nexternalId=" + ext + "\nlimit=1500.00"
	sigOf := func(s signer, text string) string {
		cms, err := gost.SignDetached([]byte(text), s.cert, s.key)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`{"base64Encoded":%q,"certificateUuid":%q}`, base64.StdEncoding.EncodeToString(cms), s.uuid)
	}
	sig := func(s signer) string { return sigOf(s, digest) }
	if code, body := e.do("POST", limitsPath, "application/json", limitWith("sbc-00001", ext, "1500", sig(u1)), "tok"); code != 201 ||
		!strings.Contains(body, `"bankStatus":"PARTSIGNED"`) {
		t.Fatalf("create with user-1's first signature: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, tok, body string
		code            int
		cause, status   string
	}{
		{"user-2's certificate on user-1's token", "tok", signBodyOf(sig(u2)), 400, "SIGN_CHECK_EXCEPTION", "PARTSIGNED"},
		{"a signature of another text", "tok-user2", signBodyOf(sigOf(u2, strings.ToLower(digest))), 400, "SIGN_CHECK_EXCEPTION", "PARTSIGNED"},
		{"user-1's own certificate again", "tok", signBodyOf(sig(u1)), 400, "WORKFLOW_FAULT", "PARTSIGNED"},
		{"user-2 with its own", "tok-user2", signBodyOf(sig(u2)), 200, "", "EXPORTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do("POST", limitsPath+"/"+ext+"/sign", "application/json", tc.body, tc.tok)
			if code != tc.code || (tc.cause != "" && cause(body) != tc.cause) {
				t.Fatalf("%d %s, want %d %s", code, body, tc.code, tc.cause)
			}
			if got := limitStatus(t, e, ext, "tok"); got != tc.status {
				t.Fatalf("status %s, want %s", got, tc.status)
			}
		})
	}
}
