package bankapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
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
	tOrg     = "org-1"
	tPartner = "partner-1"
	tOffer   = "40702810000000000001"
	tNoOffer = "40702810000000000002"
)

// fakeAuth maps tokens to principals; the real Authenticator is IDENTITY's.
type fakeAuth map[string]banking.Principal

func (f fakeAuth) Authenticate(_ context.Context, tok string) (banking.Principal, error) {
	p, ok := f[tok]
	if !ok {
		return p, banking.Errorf(banking.KindUnauthorized, "bad token")
	}
	return p, nil
}

// fakeVerifier records a copy of the digest (a create's is valid only
// until the verifier returns) and answers by certificate uuid.
type fakeVerifier struct {
	mu      sync.Mutex
	digests []string
}

func (f *fakeVerifier) Verify(_ context.Context, _ banking.Principal, digest string, sigs []banking.DigestSignature) (banking.SignatureSet, error) {
	f.mu.Lock()
	f.digests = append(f.digests, strings.Clone(digest))
	f.mu.Unlock()
	var set banking.SignatureSet
	for _, s := range sigs {
		switch s.CertificateUUID {
		case "bb014b5d-8159-40be-97c1-eafeed4a8c3d":
			set.Roles = append(set.Roles, banking.RoleSoleAuthority)
		case "d5d4f811-f4d4-4205-a70f-58f772eeab72":
			set.Roles = append(set.Roles, banking.RoleFirst)
		default:
			return set, banking.Errorf(banking.KindSignCheck, "bad signature")
		}
	}
	return set, nil
}

// VerifyDocument completes the interface; card limits call only Verify.
func (f *fakeVerifier) VerifyDocument(ctx context.Context, p banking.Principal, digest string, sigs []banking.DigestSignature) (banking.SignatureSet, error) {
	return f.Verify(ctx, p, digest, sigs)
}

// jwsTestKey is the signing key of the JWS tests, card limits' and
// payments': a generated TC26 256 A key, the provider's parameter set, and
// its self-signed certificate, valid from an hour before now for a year.
func jwsTestKey(t *testing.T, now time.Time) (*gost.PrivateKey, *gost.Certificate) {
	t.Helper()
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := gost.SelfSignedCertificate(key, "jws test", now.Add(-time.Hour), now.Add(24*time.Hour*365))
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

// fakeCerts serves one generated certificate under kid.
type fakeCerts struct {
	kid  string
	cert *gost.Certificate
}

func (f fakeCerts) JWSCertificate(_ context.Context, _ banking.Principal, kid string) (*gost.Certificate, error) {
	if kid != f.kid {
		return nil, banking.Errorf(banking.KindSignCheck, "unknown certificate")
	}
	return f.cert, nil
}

type cardEnv struct {
	t     *testing.T
	srv   *httptest.Server
	store *bankingsql.CardStore
	cards *banking.Cards
	ver   *fakeVerifier
	key   *gost.PrivateKey
	kid   string
	wall  time.Time
	mu    sync.Mutex
}

type envOpt func(*banking.CardsConfig)

// newCardEnv starts the banking transport over a real SQLite store with
// n cards on the offer account plus 7 on an account outside the offer.
func newCardEnv(t *testing.T, n int, opts ...envOpt) *cardEnv {
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
	var err error
	cfg := banking.CardsConfig{Now: func() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.wall }}
	for _, o := range opts {
		o(&cfg)
	}
	e.cards, err = banking.NewCards(e.store, cfg, e.ver, fakeCerts{kid: e.kid, cert: cert})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.AddOfferAccount(ctx, tPartner, tOrg, tOffer); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := e.store.InsertCard(ctx, banking.SandboxCard(tOrg, "044525225", tOffer, i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 7; i++ {
		c := banking.SandboxCard(tOrg, "044525225", tNoOffer, 1000+i)
		c.Status = banking.CardActive
		if err := e.store.InsertCard(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	auth := fakeAuth{
		"tok":       {OrgID: tOrg, PartnerID: tPartner, Scopes: []string{banking.ScopeBusinessCardLimit}},
		"tok-other": {OrgID: tOrg, PartnerID: "partner-2", Scopes: []string{banking.ScopeBusinessCardLimit}},
		"tok-third": {OrgID: tOrg, PartnerID: "partner-3", Scopes: []string{banking.ScopeBusinessCardLimit}},
		"tok-pay":   {OrgID: tOrg, PartnerID: tPartner, Scopes: []string{banking.ScopePayDocRU}},
	}
	e.srv = httptest.NewServer(NewServer(Deps{Auth: auth, Cards: e.cards}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *cardEnv) do(method, path, ctype, body string, tok ...string) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	token := "tok"
	if len(tok) > 0 {
		token = tok[0]
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func cause(body string) string {
	var eb errorBody
	_ = json.Unmarshal([]byte(body), &eb)
	return eb.Cause
}

func listPage(t *testing.T, e *cardEnv, q string) cardListBody {
	t.Helper()
	code, body := e.do("GET", "/fintech/api/v1/business-cards"+q, "", "")
	if code != 200 {
		t.Fatalf("GET %s: %d %s", q, code, body)
	}
	var lb cardListBody
	if err := json.Unmarshal([]byte(body), &lb); err != nil {
		t.Fatal(err)
	}
	return lb
}

func rels(l []cardLink) string {
	var r []string
	for _, x := range l {
		r = append(r, x.Rel)
	}
	return strings.Join(r, ",")
}

func TestCardListPaging(t *testing.T) {
	for _, tc := range []struct {
		cards int
		pages []int    // cards per page
		links []string // rels per page
	}{
		{0, []int{0}, []string{""}},
		{1, []int{1}, []string{""}},
		{100, []int{100}, []string{""}},
		{101, []int{100, 1}, []string{"next", "prev"}},
		{250, []int{100, 100, 50}, []string{"next", "prev,next", "prev"}},
	} {
		t.Run(fmt.Sprint(tc.cards), func(t *testing.T) {
			e := newCardEnv(t, tc.cards)
			seen := map[string]bool{}
			last := ""
			for i, want := range tc.pages {
				lb := listPage(t, e, fmt.Sprintf("?page=%d", i+1))
				if len(lb.BusinessCards) != want || rels(lb.Links) != tc.links[i] {
					t.Fatalf("page %d: %d cards links %q, want %d %q", i+1, len(lb.BusinessCards), rels(lb.Links), want, tc.links[i])
				}
				for _, l := range lb.Links {
					if len(l.Href) > 60 {
						t.Errorf("href %q longer than 60", l.Href)
					}
				}
				for _, c := range lb.BusinessCards {
					if seen[c.BusinessCardID] || c.BusinessCardID <= last {
						t.Fatalf("card %s repeated or out of order", c.BusinessCardID)
					}
					if c.AccountNumber != tOffer {
						t.Fatalf("card %s on account %s outside the offer listed", c.BusinessCardID, c.AccountNumber)
					}
					seen[c.BusinessCardID], last = true, c.BusinessCardID
				}
			}
			if len(seen) != tc.cards {
				t.Fatalf("saw %d cards, want %d", len(seen), tc.cards)
			}
			// Same request again: same order.
			if tc.cards > 0 {
				a, b := listPage(t, e, ""), listPage(t, e, "?page=1")
				if a.BusinessCards[0].BusinessCardID != b.BusinessCards[0].BusinessCardID {
					t.Fatal("default page differs from page 1")
				}
			}
		})
	}
}

func TestCardListStatusCodes(t *testing.T) {
	e := newCardEnv(t, 250) // statuses cycle: 50 of each
	for _, q := range []string{"?statusCodes=ACTIVE,BLOCKED", "?statusCodes=ACTIVE&statusCodes=BLOCKED", "?statusCodes=active,%20blocked"} {
		lb := listPage(t, e, q)
		if len(lb.BusinessCards) != 100 || rels(lb.Links) != "" {
			t.Fatalf("%s: %d cards, links %q; want 100 and none", q, len(lb.BusinessCards), rels(lb.Links))
		}
		for _, c := range lb.BusinessCards {
			if c.Status != "ACTIVE" && c.Status != "BLOCKED" {
				t.Fatalf("%s: card with status %s", q, c.Status)
			}
		}
	}
	if lb := listPage(t, e, "?statusCodes=NOT_DELIVERED"); len(lb.BusinessCards) != 50 {
		t.Fatalf("NOT_DELIVERED: %d", len(lb.BusinessCards))
	}
	// POST lists too (a reference sample uses it).
	if code, _ := e.do("POST", "/fintech/api/v1/business-cards?page=3", "", ""); code != 200 {
		t.Fatalf("POST list: %d", code)
	}
	for _, tc := range []struct {
		q, cause string
		code     int
	}{
		{"?statusCodes=LOST", "VALIDATION_FAULT", 400},
		{"?page=0", "VALIDATION_FAULT", 400},
		{"?page=x", "VALIDATION_FAULT", 400},
		// Statuses match without ASCII letter case only: ı and ſ are not
		// the I and S they upper-case to.
		{"?statusCodes=act%C4%B1ve", "VALIDATION_FAULT", 400},
		{"?statusCodes=to_be_rei%C5%BF%C5%BFued", "VALIDATION_FAULT", 400},
	} {
		if code, body := e.do("GET", "/fintech/api/v1/business-cards"+tc.q, "", ""); code != tc.code || cause(body) != tc.cause {
			t.Errorf("%s: %d %s", tc.q, code, body)
		}
	}
	if code, body := e.do("GET", "/fintech/api/v1/business-cards", "", "", "tok-pay"); code != 403 || cause(body) != "ACTION_ACCESS_EXCEPTION" {
		t.Errorf("wrong scope: %d %s", code, body)
	}
	if lb := listPage(t, e, ""); len(lb.BusinessCards) != 100 {
		t.Fatal("first page not full")
	}
	code, body := e.do("GET", "/fintech/api/v1/business-cards", "", "", "tok-other")
	if code != 403 || cause(body) != "ACTION_ACCESS_EXCEPTION" {
		t.Errorf("partner without offer: %d %s", code, body)
	}
}

func limitBody(card, ext, limit string, sigs ...string) string {
	s := ""
	if len(sigs) > 0 {
		var parts []string
		for _, u := range sigs {
			parts = append(parts, fmt.Sprintf(`{"base64Encoded":"AAAA","certificateUuid":%q}`, u))
		}
		s = `,"digestSignatures":[` + strings.Join(parts, ",") + `]`
	}
	return fmt.Sprintf(`{"code":"NON_RENEW","businessCardId":%q,"externalId":%q,"limit":%s%s}`, card, ext, limit, s)
}

const (
	sole  = "bb014b5d-8159-40be-97c1-eafeed4a8c3d"
	first = "d5d4f811-f4d4-4205-a70f-58f772eeab72"
)

func TestCardLimitErrors(t *testing.T) {
	e := newCardEnv(t, 10) // sbc-00001 ACTIVE, -02 BLOCKED, -03 TO_BE_REISSUED, -04 TO_BE_BLOCKED, -05 NOT_DELIVERED
	const path = "/fintech/api/v1/business-cards/limits"
	ext := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }
	for i, tc := range []struct {
		name, body string
		code       int
		cause      string
		status     string
	}{
		{"active unsigned", limitBody("sbc-00001", ext(1), "1000.5"), 201, "", "CREATED"},
		{"not delivered signed", limitBody("sbc-00005", ext(2), "0", sole), 201, "", "EXPORTED"},
		{"partly signed", limitBody("sbc-00001", ext(3), "10", first), 201, "", "PARTSIGNED"},
		{"blocked", limitBody("sbc-00002", ext(4), "1"), 400, "WORKFLOW_FAULT", ""},
		{"to be reissued", limitBody("sbc-00003", ext(5), "1"), 400, "WORKFLOW_FAULT", ""},
		{"to be blocked", limitBody("sbc-00004", ext(6), "1"), 400, "WORKFLOW_FAULT", ""},
		{"unknown card", limitBody("nope", ext(7), "1"), 404, "CARD_ID_NOT_FOUND", ""},
		{"outside offer", limitBody("sbc-01001", ext(8), "1"), 400, "WORKFLOW_FAULT", ""},
		{"duplicate externalId", limitBody("sbc-00006", ext(1), "1"), 400, "WORKFLOW_FAULT", ""},
		{"bad signature", limitBody("sbc-00006", ext(9), "1", "11111111-1111-4111-8111-111111111111"), 400, "SIGN_CHECK_EXCEPTION", ""},
		{"code", strings.Replace(limitBody("sbc-00006", ext(10), "1"), "NON_RENEW", "RENEW", 1), 400, "VALIDATION_FAULT", ""},
		{"three decimals", limitBody("sbc-00006", ext(11), "1.005"), 400, "VALIDATION_FAULT", ""},
		{"negative", limitBody("sbc-00006", ext(12), "-1"), 400, "VALIDATION_FAULT", ""},
		{"externalId not uuid", limitBody("sbc-00006", "x", "1"), 400, "VALIDATION_FAULT", ""},
		{"limit as string", `{"code":"NON_RENEW","businessCardId":"sbc-00006","externalId":"` + ext(13) + `","limit":"1"}`, 400, "DESERIALIZATION_FAULT", ""},
		{"not json", `{`, 400, "DESERIALIZATION_FAULT", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do("POST", path, "application/json", tc.body)
			if code != tc.code || (tc.cause != "" && cause(body) != tc.cause) {
				t.Fatalf("case %d: %d %s, want %d %s", i, code, body, tc.code, tc.cause)
			}
			if tc.status != "" {
				var l banking.LimitChange
				_ = json.Unmarshal([]byte(body), &l)
				if l.BankStatus != tc.status {
					t.Fatalf("bankStatus %s, want %s", l.BankStatus, tc.status)
				}
				code, st := e.do("GET", path+"/"+l.ExternalID+"/state", "", "")
				if code != 200 || !strings.Contains(st, `"bankStatus":"`+tc.status+`"`) || !strings.Contains(st, `"channelInfo":"API"`) {
					t.Fatalf("state: %d %s", code, st)
				}
			}
		})
	}
	// digestSignatures has 1 or 2 items (reference §11); an application
	// without signatures leaves it out, so an empty list is refused, naming
	// it, and nothing is stored.
	empty := strings.Replace(limitBody("sbc-00006", ext(14), "1"), `}`, `,"digestSignatures":[]}`, 1)
	if code, body := e.do("POST", path, "application/json", empty); code != 400 || cause(body) != "VALIDATION_FAULT" ||
		!strings.Contains(body, `"fieldNames":["digestSignatures"]`) {
		t.Errorf("empty signature list: %d %s", code, body)
	}
	if code, body := e.do("GET", path+"/"+ext(14)+"/state", "", ""); code != 404 {
		t.Errorf("refused application stored: %d %s", code, body)
	}
	if code, body := e.do("GET", path+"/"+ext(99)+"/state", "", ""); code != 404 || cause(body) != "DATA_NOT_FOUND_EXCEPTION" {
		t.Errorf("unknown state: %d %s", code, body)
	}
	if code, body := e.do("POST", path, "application/json", limitBody("sbc-00001", ext(50), "1"), "tok-other"); code != 403 || cause(body) != "ACTION_ACCESS_EXCEPTION" {
		t.Errorf("partner without offer: %d %s", code, body)
	}
	if got, want := e.ver.digests[0], "businessCardId=sbc-00005\ncode=NON_RENEW\nexternalId="+ext(2)+"\nlimit=0.00"; got != want {
		t.Errorf("digest %q, want %q", got, want)
	}
}

func TestCardLimitJWS(t *testing.T) {
	required := func(c *banking.CardsConfig) { c.JWSRequired = func(p string) bool { return p == tPartner } }
	e := newCardEnv(t, 10, required)
	const path = "/fintech/api/v1/business-cards/limits"
	payload := []byte(limitBody("sbc-00001", "00000000-0000-4000-8000-000000000001", "500"))
	good, err := gost.SignJWS(payload, e.kid, e.key)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	forged, _ := gost.SignJWS(payload, e.kid, other)
	sandboxKid, _ := gost.SignJWS([]byte(limitBody("sbc-00001", "00000000-0000-4000-8000-000000000002", "1")), sole, other)
	unknownKid, _ := gost.SignJWS(payload, "9b2e1c4d-0000-4000-8000-000000000000", e.key)
	b64 := func(s string) string {
		return strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(base64Std(s)), "=")
	}
	parts := strings.Split(good, ".")
	noKid := b64(`{"alg":"gost34.10-2012"}`) + "." + parts[1] + "." + parts[2]
	badKid := b64(`{"alg":"gost34.10-2012","kid":"abc"}`) + "." + parts[1] + "." + parts[2]
	// A JWS from a generic JOSE library: another alg. With the kid the
	// certificate is found and the signature cannot be checked; without
	// a usable kid it is the kid rule of §9.6 that answers.
	rsKid := b64(`{"alg":"RS256","kid":"`+e.kid+`"}`) + "." + parts[1] + "." + parts[2]
	rsNoKid := b64(`{"alg":"RS256"}`) + "." + parts[1] + "." + parts[2]
	rsBadKid := b64(`{"alg":"RS256","kid":"cert-1"}`) + "." + parts[1] + "." + parts[2]
	for _, tc := range []struct {
		name, ctype, body string
		code              int
		cause             string
	}{
		{"json when JWS required", "application/json", string(payload), 415, "JWS_EXCEPTED"},
		{"valid", "application/jose", good, 201, ""},
		{"sandbox test certificate", "application/jose", sandboxKid, 201, ""},
		{"forged", "application/jose", forged, 400, "SIGN_CHECK_EXCEPTION"},
		{"unknown certificate", "application/jose", unknownKid, 400, "SIGN_CHECK_EXCEPTION"},
		{"missing kid", "application/jose", noKid, 400, "WORKFLOW_FAULT"},
		{"kid not uuid", "application/jose", badKid, 400, "WORKFLOW_FAULT"},
		{"another alg", "application/jose", rsKid, 400, "SIGN_CHECK_EXCEPTION"},
		{"another alg, missing kid", "application/jose", rsNoKid, 400, "WORKFLOW_FAULT"},
		{"another alg, kid not uuid", "application/jose", rsBadKid, 400, "WORKFLOW_FAULT"},
		{"not a JWS", "application/jose", "abc", 400, "DESERIALIZATION_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do("POST", path, tc.ctype, tc.body)
			if code != tc.code || (tc.cause != "" && cause(body) != tc.cause) {
				t.Fatalf("%d %s, want %d %s", code, body, tc.code, tc.cause)
			}
		})
	}
	code, st := e.do("GET", path+"/00000000-0000-4000-8000-000000000001/state", "", "")
	if code != 200 || !strings.Contains(st, `"channelInfo":"API_JWS"`) {
		t.Fatalf("state: %d %s", code, st)
	}
	// Another partner is not required to sign with JWS.
	if err := e.store.AddOfferAccount(context.Background(), "partner-2", tOrg, tOffer); err != nil {
		t.Fatal(err)
	}
	if code, body := e.do("POST", path, "application/json", limitBody("sbc-00001", "00000000-0000-4000-8000-000000000003", "1"), "tok-other"); code != 201 {
		t.Fatalf("unsigned partner: %d %s", code, body)
	}
}

var panRe = regexp.MustCompile(`[0-9]{13,19}`)

// TestNoUnmaskedPAN sweeps every card response for a whole PAN or holder name.
func TestNoUnmaskedPAN(t *testing.T) {
	e := newCardEnv(t, 120)
	var bodies []string
	for _, q := range []string{"", "?page=2", "?statusCodes=ACTIVE", "?page=9"} {
		_, b := e.do("GET", "/fintech/api/v1/business-cards"+q, "", "")
		bodies = append(bodies, b)
	}
	_, b := e.do("POST", "/fintech/api/v1/business-cards/limits", "application/json", limitBody("sbc-00001", "00000000-0000-4000-8000-000000000001", "5"))
	bodies = append(bodies, b)
	_, b = e.do("POST", "/fintech/api/v1/business-cards/limits", "application/json", limitBody("sbc-00002", "00000000-0000-4000-8000-000000000002", "5"))
	bodies = append(bodies, b)
	all := strings.Join(bodies, "\n")
	if !strings.Contains(all, `"cardPan":"220220******`) {
		t.Fatalf("no masked PAN in responses: %.300s", all)
	}
	for _, m := range panRe.FindAllString(all, -1) {
		if m[0] == '2' && len(m) == 16 {
			t.Fatalf("unmasked PAN %s in a response", m)
		}
	}
	for i := 0; i < 120; i++ {
		c := banking.SandboxCard(tOrg, "", tOffer, i)
		if strings.Contains(all, c.PAN) || strings.Contains(all, c.HolderName) {
			t.Fatalf("card %s: whole PAN or holder name in a response", c.ID)
		}
	}
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func FuzzParseStatusCodes(f *testing.F) {
	f.Add("ACTIVE,BLOCKED", "NOT_DELIVERED")
	f.Add(",, ,", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range parseStatusCodes([]string{a, b}) {
			if s == "" || strings.Contains(string(s), ",") || strings.TrimSpace(string(s)) != string(s) {
				t.Fatalf("bad status %q from %q %q", s, a, b)
			}
		}
		if h := pageHref(DefaultPrefix+"/v1/business-cards", 2, parseStatusCodes([]string{a, b})); len(h) > 60 {
			t.Fatalf("href %d chars", len(h))
		}
		// A status taken is one of the names in ASCII letter case.
		for _, s := range parseStatusCodes([]string{a, b}) {
			if s.Valid() && !strings.Contains(","+strings.ToLower(a)+","+strings.ToLower(b)+",", strings.ToLower(string(s))) {
				t.Fatalf("status %s from %q %q", s, a, b)
			}
		}
	})
}

// offerRecords stands in for IDENTITY's offer records: the accounts each
// partner signed the offer on, and the organisation's accounts, one of
// which (tCardless) has no cards.
type offerRecords map[string][]string

const tCardless = "40702810000000000003"

func (o offerRecords) OfferSigned(_ context.Context, clientID, account string) (bool, error) {
	return slices.Contains(o[clientID], account), nil
}

func (o offerRecords) ListAccounts(_ context.Context, orgID string) ([]banking.Account, error) {
	if orgID != tOrg {
		return nil, nil
	}
	return []banking.Account{{Number: tOffer}, {Number: tNoOffer}, {Number: tCardless}}, nil
}

// A partner without a signed offer on any of the organisation's accounts is
// refused both operations with 403 (reference §11, §13), whether or not the
// card exists; one whose offer covers only some accounts keeps the 200 list
// and the card's own 400 for a card outside it, also when its offer is on an
// account without cards (so the list is empty, not forbidden).
func TestCardsWithoutOffer(t *testing.T) {
	const path = "/fintech/api/v1/business-cards/limits"
	ext := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", 700+i) }
	for _, records := range []struct {
		name   string
		offers banking.OfferChecker // nil: the card area's own offer list
	}{
		{"card store offers", nil},
		{"identity offers", offerRecords{tPartner: {tOffer}, "partner-3": {tCardless}}},
	} {
		t.Run(records.name, func(t *testing.T) {
			e := newCardEnv(t, 3)
			if records.offers != nil {
				e.cards.UseOffers(records.offers)
			} else if err := e.store.AddOfferAccount(context.Background(), "partner-3", tOrg, tCardless); err != nil {
				t.Fatal(err)
			}
			for i, tc := range []struct {
				name, method, path, body, token string
				code                            int
				cause                           string
			}{
				{"list with an offer", "GET", "/fintech/api/v1/business-cards", "", "tok", 200, ""},
				{"list without any offer", "GET", "/fintech/api/v1/business-cards", "", "tok-other", 403, "ACTION_ACCESS_EXCEPTION"},
				{"list by POST without any offer", "POST", "/fintech/api/v1/business-cards", "", "tok-other", 403, "ACTION_ACCESS_EXCEPTION"},
				{"list far past the end without any offer", "GET", "/fintech/api/v1/business-cards?page=2000000", "", "tok-other", 403, "ACTION_ACCESS_EXCEPTION"},
				{"list far past the end with an offer", "GET", "/fintech/api/v1/business-cards?page=2000000", "", "tok", 200, ""},
				{"list with an offer on a cardless account", "GET", "/fintech/api/v1/business-cards", "", "tok-third", 200, ""},
				{"limit without any offer", "POST", path, limitBody("sbc-00001", ext(1), "1"), "tok-other", 403, "ACTION_ACCESS_EXCEPTION"},
				{"limit on an unknown card without any offer", "POST", path, limitBody("nope", ext(2), "1"), "tok-other", 403, "ACTION_ACCESS_EXCEPTION"},
				{"limit on a card outside the offer", "POST", path, limitBody("sbc-01001", ext(3), "1"), "tok", 400, "WORKFLOW_FAULT"},
				{"limit on an unknown card with an offer", "POST", path, limitBody("nope", ext(4), "1"), "tok", 404, "CARD_ID_NOT_FOUND"},
				{"limit with an offer on a cardless account", "POST", path, limitBody("sbc-00001", ext(5), "1"), "tok-third", 400, "WORKFLOW_FAULT"},
				// An application's state is refused to a partner without
				// any offer too, whether or not the application exists.
				{"limit with an offer", "POST", path, limitBody("sbc-00001", ext(6), "1"), "tok", 201, ""},
				{"state with an offer", "GET", path + "/" + ext(6) + "/state", "", "tok", 200, ""},
				{"state without any offer", "GET", path + "/" + ext(6) + "/state", "", "tok-other", 403, "ACTION_ACCESS_EXCEPTION"},
				{"state of an unknown application without any offer", "GET", path + "/" + ext(7) + "/state", "", "tok-other", 403, "ACTION_ACCESS_EXCEPTION"},
				{"state of an unknown application with an offer", "GET", path + "/" + ext(7) + "/state", "", "tok", 404, ""},
			} {
				code, body := e.do(tc.method, tc.path, "application/json", tc.body, tc.token)
				if code != tc.code || (tc.cause != "" && cause(body) != tc.cause) {
					t.Errorf("case %d %s: %d %s, want %d %s", i, tc.name, code, body, tc.code, tc.cause)
				}
				if tc.code == 200 && tc.token == "tok-third" && !strings.Contains(body, `"businessCards":[]`) {
					t.Errorf("%s: %s", tc.name, body)
				}
			}
		})
	}
}
