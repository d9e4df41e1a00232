package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/gost"
)

// foreignComment is what the bankComment of a document signed with someone
// else's certificate says.
const foreignComment = "не принадлежит пользователю"

// foreignSigner is a user's GOST key and the uuid its certificate is
// registered under.
type foreignSigner struct {
	uuid string
	cert *gost.Certificate
	key  *gost.PrivateKey
}

// sign is the digestSignatures element of a detached CMS signature of
// digest, sent under uuid (normally the signer's own).
func (s foreignSigner) sign(t *testing.T, uuid, digest string) map[string]any {
	t.Helper()
	cms, err := gost.SignDetached([]byte(digest), s.cert, s.key)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"base64Encoded": base64.StdEncoding.EncodeToString(cms), "certificateUuid": uuid}
}

// foreignWorld is one contour's server with two organisations: A with the
// users a1 and a2, B with b1, each with a token, and (outside the sandbox)
// registered GOST certificates.
type foreignWorld struct {
	ts                 *testServer
	client             string
	orgA, orgB         string
	accA, accB         string
	tokA1, tokA2, tokB string
	userA1             string
	a1, a2, a2First, b foreignSigner
	hooks              *hookLog
}

// hookLog collects the webhooks a partner receives.
type hookLog struct {
	mu  sync.Mutex
	got []map[string]string
}

func (h *hookLog) find(id string) (map[string]string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.got {
		if m["externalId"] == id {
			return m, true
		}
	}
	return nil, false
}

// validAccountFor returns account with its control key (9th digit) set so
// that it is valid for bic.
func validAccountFor(t *testing.T, account, bic string) string {
	t.Helper()
	a, ok := banking.WithControlKey(account, bic)
	if !ok {
		t.Fatalf("no control key for %s", account)
	}
	return a
}

// newForeignWorld starts the world's server in contour, with extra serve
// flags after the world's own.
func newForeignWorld(t *testing.T, contour string, extra ...string) *foreignWorld {
	t.Helper()
	w := &foreignWorld{hooks: &hookLog{}}
	args := []string{"--only", "banking", "--banking-contour", contour}
	// Plain-http webhooks are refused in production; there the outbox
	// row is what is checked.
	if contour != banking.ContourProduction {
		partner := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var m map[string]string
			_ = json.Unmarshal(body, &m)
			w.hooks.mu.Lock()
			w.hooks.got = append(w.hooks.got, m)
			w.hooks.mu.Unlock()
			rw.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(partner.Close)
		args = append(args, "--banking-webhook-url", partner.URL, "--banking-webhook-secret", "hook-secret",
			"--banking-webhook-interval", "50ms", "--banking-webhook-allow-private")
	}
	w.ts = startServer(t, append(args, extra...)...)
	cli := func(args ...string) map[string]any {
		return bankingCLI(t, "", append(args, "--data-dir", w.ts.dataDir, "--banking-contour", contour)...)
	}
	str := func(m map[string]any, k string) string { return m[k].(string) }

	orgA := banking.SandboxOrgID
	w.accA, w.client = banking.SandboxAccount, banking.SandboxClientID
	userA1 := banking.SandboxUserID
	if contour != banking.ContourSandbox {
		orgA = str(cli("org", "create", "--name", "ООО А", "--inn", banking.SandboxOrgINN, "--kpp", banking.SandboxOrgKPP), "id")
		cli("account", "add", "--org", orgA, "--number", w.accA, "--bic", banking.SandboxBIC, "--corr", banking.SandboxCorrAccount)
		userA1 = str(cli("user", "create", "--org", orgA, "--login", "a1"), "id")
		w.client = str(cli("app", "create", "--name", "Partner", "--redirect-uri", "https://p/cb"), "client_id")
	}
	userA2 := str(cli("user", "create", "--org", orgA, "--login", "a2"), "id")
	orgB := str(cli("org", "create", "--name", "ООО Б", "--inn", "7830002293", "--kpp", "783001001"), "id")
	w.accB = validAccountFor(t, "40702810038833411799", banking.SandboxBIC)
	cli("account", "add", "--org", orgB, "--number", w.accB, "--bic", banking.SandboxBIC, "--corr", banking.SandboxCorrAccount)
	userB := str(cli("user", "create", "--org", orgB, "--login", "b1"), "id")

	register := func(user, role string) foreignSigner {
		key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := gost.SelfSignedCertificate(key, "signer "+role, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "cert.pem")
		if err := os.WriteFile(file, cert.PEM(), 0o600); err != nil {
			t.Fatal(err)
		}
		uuid := str(cli("cert", "add", "--user", user, "--cert", file, "--role", role), "uuid")
		return foreignSigner{uuid: uuid, cert: cert, key: key}
	}
	w.a1, w.a2, w.a2First, w.b = register(userA1, "SOLE"), register(userA2, "SOLE"), register(userA2, "FIRST"), register(userB, "SOLE")

	token := func(org, user string) string {
		return str(cli("token", "--scope", "PAY_DOC_RU", "--org", org, "--user", user, "--client", w.client), "access_token")
	}
	w.tokA1, w.tokA2, w.tokB = token(orgA, userA1), token(orgA, userA2), token(orgB, userB)
	w.orgA, w.orgB, w.userA1 = orgA, orgB, userA1
	return w
}

// doc is a payment from account with externalId id, and its digest text.
func (w *foreignWorld) doc(t *testing.T, id, account string) (banking.Payment, string) {
	t.Helper()
	var d banking.Payment
	if !banking.DecodePaymentFast(banking.SandboxPaymentJSON(id, time.Now().UTC().Format(time.DateOnly)), &d) {
		t.Fatal("the sandbox payment does not decode")
	}
	d.PayerAccount, d.DigestSignatures = account, nil
	if account == w.accB {
		// Organisation B pays as itself: the bank compares the payer's INN
		// with the account holder's.
		d.PayerName, d.PayerINN, d.PayerKPP = "ООО Б", "7830002293", "783001001"
	}
	return d, banking.PaymentDigest(&d)
}

func (w *foreignWorld) call(t *testing.T, tok, method, path string, body any) (int, map[string]any) {
	t.Helper()
	return bankRequestJSON(t, method, w.ts.urls["banking"]+"/fintech/api/v1/payments"+path, "Bearer "+tok, body)
}

// foreignCase is one row: who sends which signature, and what the create
// with it and a later sign of a draft with it answer.
type foreignCase struct {
	name      string
	tok       func(w *foreignWorld) string
	acct      func(w *foreignWorld) string
	sig       func(t *testing.T, w *foreignWorld, digest string) map[string]any
	code      int      // create's status; the later sign answers 200 for 201
	want      string   // bankStatus, or the envelope's cause
	history   []string // the create's recorded statuses (201 only)
	signHist  []string // the later-signed draft's recorded statuses (201 only)
	commentOf func(w *foreignWorld) string
}

var (
	invalidComplete = []string{"SIGNED", "DELIVERED", "INVALIDEDS"}
	implemented     = []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "EXPORTED", "ACCEPTED_BY_ABS", "IMPLEMENTED"}
)

func tokA1(w *foreignWorld) string { return w.tokA1 }
func tokA2(w *foreignWorld) string { return w.tokA2 }
func tokB(w *foreignWorld) string  { return w.tokB }
func accA(w *foreignWorld) string  { return w.accA }
func accB(w *foreignWorld) string  { return w.accB }

// magic is a sandbox signature with one of the §7 uuids (bytes unchecked).
func magic(uuid string) func(*testing.T, *foreignWorld, string) map[string]any {
	return func(*testing.T, *foreignWorld, string) map[string]any {
		return map[string]any{"base64Encoded": "MIIB", "certificateUuid": uuid}
	}
}

func fixed(el map[string]any) func(*testing.T, *foreignWorld, string) map[string]any {
	return func(*testing.T, *foreignWorld, string) map[string]any { return el }
}

const unknownCert = "11111111-1111-4111-8111-111111111111"

// foreignCases are the rows of one contour.
func foreignCases(contour string) []foreignCase {
	noUUID := fixed(map[string]any{"base64Encoded": "MIIB"})
	notBase64 := func(uuid func(w *foreignWorld) string) func(*testing.T, *foreignWorld, string) map[string]any {
		return func(_ *testing.T, w *foreignWorld, _ string) map[string]any {
			return map[string]any{"base64Encoded": "%%%", "certificateUuid": uuid(w)}
		}
	}
	if contour == banking.ContourSandbox {
		sole := func(*foreignWorld) string { return banking.SandboxCertSole }
		return []foreignCase{
			{name: "own certificate", tok: tokA1, acct: accA, sig: magic(banking.SandboxCertSole), code: 201, want: "IMPLEMENTED",
				history: implemented, signHist: append([]string{"CREATED"}, implemented...)},
			// In the sandbox the uuid decides the outcome (§7), whichever
			// user's token carries it: no mismatch there.
			{name: "another user of the organisation", tok: tokA2, acct: accA, sig: magic(banking.SandboxCertSole), code: 201, want: "IMPLEMENTED",
				history: implemented, signHist: append([]string{"CREATED"}, implemented...)},
			{name: "a user of another organisation", tok: tokB, acct: accB, sig: magic(banking.SandboxCertSole), code: 201, want: "IMPLEMENTED",
				history: implemented, signHist: append([]string{"CREATED"}, implemented...)},
			{name: "another user, first of two", tok: tokA2, acct: accA, sig: magic(banking.SandboxCertFirst), code: 201, want: "PARTSIGNED",
				history: []string{"CREATED", "PARTSIGNED"}, signHist: []string{"CREATED", "PARTSIGNED"}},
			// Only the §7 uuids are known in the sandbox: a registered
			// certificate of another user is "any other certificateUuid".
			{name: "registered certificate of another user", tok: tokA1, acct: accA,
				sig: func(_ *testing.T, w *foreignWorld, _ string) map[string]any {
					return map[string]any{"base64Encoded": "MIIB", "certificateUuid": w.a2.uuid}
				}, code: 400, want: "WORKFLOW_FAULT"},
			{name: "unknown certificate", tok: tokA1, acct: accA, sig: magic(unknownCert), code: 400, want: "WORKFLOW_FAULT"},
			{name: "no certificateUuid", tok: tokA1, acct: accA, sig: noUUID, code: 400, want: "VALIDATION_FAULT"},
			{name: "signature not Base64", tok: tokA2, acct: accA, sig: notBase64(sole), code: 400, want: "VALIDATION_FAULT"},
		}
	}
	signedBy := func(s func(w *foreignWorld) foreignSigner) func(*testing.T, *foreignWorld, string) map[string]any {
		return func(t *testing.T, w *foreignWorld, digest string) map[string]any {
			return s(w).sign(t, s(w).uuid, digest)
		}
	}
	a1 := func(w *foreignWorld) foreignSigner { return w.a1 }
	a2 := func(w *foreignWorld) foreignSigner { return w.a2 }
	a2First := func(w *foreignWorld) foreignSigner { return w.a2First }
	b := func(w *foreignWorld) foreignSigner { return w.b }
	uuidOf := func(s func(w *foreignWorld) foreignSigner) func(w *foreignWorld) string {
		return func(w *foreignWorld) string { return s(w).uuid }
	}
	return []foreignCase{
		{name: "own certificate", tok: tokA1, acct: accA, sig: signedBy(a1), code: 201, want: "IMPLEMENTED",
			history: implemented, signHist: append([]string{"CREATED"}, implemented...)},
		{name: "another user of the organisation", tok: tokA1, acct: accA, sig: signedBy(a2), code: 201, want: "INVALIDEDS",
			history: invalidComplete, signHist: append([]string{"CREATED"}, invalidComplete...), commentOf: uuidOf(a2)},
		{name: "a user of another organisation", tok: tokA1, acct: accA, sig: signedBy(b), code: 201, want: "INVALIDEDS",
			history: invalidComplete, signHist: append([]string{"CREATED"}, invalidComplete...), commentOf: uuidOf(b)},
		{name: "another user, first of two", tok: tokA1, acct: accA, sig: signedBy(a2First), code: 201, want: "INVALIDEDS",
			history: []string{"CREATED", "PARTSIGNED", "INVALIDEDS"}, signHist: []string{"CREATED", "PARTSIGNED", "INVALIDEDS"},
			commentOf: uuidOf(a2First)},
		// Another user's certificate named for a CMS its owner did not
		// make: not authentic, refused at once (§13).
		{name: "another user's certificate, not its owner's signature", tok: tokA1, acct: accA,
			sig: func(t *testing.T, w *foreignWorld, digest string) map[string]any {
				return w.a1.sign(t, w.a2.uuid, digest)
			},
			code: 400, want: "SIGN_CHECK_EXCEPTION"},
		{name: "own certificate, invalid signature", tok: tokA1, acct: accA,
			sig: func(t *testing.T, w *foreignWorld, digest string) map[string]any {
				return w.a1.sign(t, w.a1.uuid, digest+" ")
			},
			code: 400, want: "SIGN_CHECK_EXCEPTION"},
		{name: "unknown certificate", tok: tokA1, acct: accA,
			sig: func(t *testing.T, w *foreignWorld, digest string) map[string]any {
				return w.a1.sign(t, unknownCert, digest)
			},
			code: 400, want: "SIGN_CHECK_EXCEPTION"},
		{name: "no certificateUuid", tok: tokA1, acct: accA, sig: noUUID, code: 400, want: "VALIDATION_FAULT"},
		{name: "signature not Base64", tok: tokA1, acct: accA, sig: notBase64(uuidOf(a2)), code: 400, want: "VALIDATION_FAULT"},
	}
}

// TestBankingForeignCertificate: reference §9.1 in every contour, through
// HTTP, at creation and when a draft is signed later. A signature with a
// known certificate of someone other than the token's user creates the
// document, which ends in INVALIDEDS: recorded in its history with time,
// shown by /state with a bankComment naming the certificate, queued in the
// webhook outbox (and delivered where a webhook is set). No certificateUuid,
// a malformed or unauthentic signature and an unknown certificate stay
// immediate errors, with nothing stored or queued.
func TestBankingForeignCertificate(t *testing.T) {
	for _, contour := range []string{banking.ContourSandbox, banking.ContourTest, banking.ContourProduction} {
		t.Run(contour, func(t *testing.T) {
			w := newForeignWorld(t, contour)
			store := bankingStoreOf(t, w.ts.dataDir)
			var invalid []string // documents whose webhook is INVALIDEDS
			for _, tc := range foreignCases(contour) {
				for _, later := range []bool{false, true} {
					name := tc.name + "/create"
					if later {
						name = tc.name + "/later sign"
					}
					t.Run(name, func(t *testing.T) {
						id := banking.NewUUID()
						d, digest := w.doc(t, id, tc.acct(w))
						el := tc.sig(t, w, digest)
						tok := tc.tok(w)
						code, wantHist := tc.code, tc.history
						var st int
						var m map[string]any
						if later {
							code, wantHist = 200, tc.signHist
							if tc.code >= 400 {
								code = tc.code
							}
							if st, m := w.call(t, tok, "POST", "", d); st != 201 || m["bankStatus"] != "CREATED" {
								t.Fatalf("draft: %d %v", st, m)
							}
							st, m = w.call(t, tok, "POST", "/"+id+"/sign", map[string]any{"digestSignatures": []any{el}})
						} else {
							body := map[string]any{}
							raw, _ := banking.MarshalPayment(&d)
							_ = json.Unmarshal(raw, &body)
							body["digestSignatures"] = []any{el}
							st, m = w.call(t, tok, "POST", "", body)
						}
						got := m["bankStatus"]
						if st >= 400 {
							got = m["cause"]
							if m["referenceId"] == "" || m["message"] == "" {
								t.Errorf("envelope %v", m)
							}
						}
						if st != code || got != tc.want {
							t.Fatalf("%d %v, want %d %s", st, m, code, tc.want)
						}
						ss, state := w.call(t, tok, "GET", "/"+id+"/state", nil)
						deliveries := store.deliveries(t, w.client, id)
						if st >= 400 {
							// Refused: a create stores nothing, a sign
							// leaves the draft as it was; nothing queued.
							if (!later && ss != 404) || (later && (ss != 200 || state["bankStatus"] != "CREATED")) || len(deliveries) != 0 {
								t.Fatalf("after refusal: state %d %v, outbox %v", ss, state, deliveries)
							}
							return
						}
						comment, _ := state["bankComment"].(string)
						if ss != 200 || state["bankStatus"] != tc.want {
							t.Fatalf("state %d %v", ss, state)
						}
						if tc.commentOf != nil && (!strings.Contains(comment, foreignComment) || !strings.Contains(comment, tc.commentOf(w))) {
							t.Fatalf("bankComment %q", comment)
						}
						org := w.orgA
						if tc.acct(w) == w.accB {
							org = w.orgB
						}
						hist := store.history(t, org, id)
						var statuses []string
						for _, h := range hist {
							statuses = append(statuses, h.Status)
							if h.At.IsZero() || time.Since(h.At) > time.Minute {
								t.Errorf("move %s at %v", h.Status, h.At)
							}
						}
						if !slices.Equal(statuses, wantHist) || hist[len(hist)-1].Comment != comment {
							t.Fatalf("history %+v, want %v ending with comment %q", hist, wantHist, comment)
						}
						// Only a final status is delivered: a partly
						// signed document waits for its second signature.
						if tc.want == "PARTSIGNED" {
							if len(deliveries) != 0 {
								t.Fatalf("outbox %+v for a partly signed document", deliveries)
							}
						} else if len(deliveries) != 1 || deliveries[0].BankStatus != tc.want || deliveries[0].BankComment != comment ||
							!deliveries[0].EventTime.Equal(hist[len(hist)-1].At) {
							t.Fatalf("outbox %+v", deliveries)
						}
						if tc.want == "INVALIDEDS" {
							invalid = append(invalid, id)
						}
					})
				}
			}
			if contour == banking.ContourProduction {
				return
			}
			// The outbox's rows reach the partner as final-status webhooks.
			deadline := time.Now().Add(10 * time.Second)
			for _, id := range invalid {
				for {
					m, ok := w.hooks.find(id)
					if ok {
						if m["bankStatus"] != "INVALIDEDS" || !strings.Contains(m["bankComment"], foreignComment) || m["eventTime"] == "" {
							t.Errorf("webhook %v", m)
						}
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no webhook for %s", id)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// foreignStore reads a running server's SQLite store beside it.
type foreignStore struct{ payments *bankingsql.PaymentStore }

func bankingStoreOf(t *testing.T, dataDir string) *foreignStore {
	t.Helper()
	cfg := storeConfig{DataDir: dataDir}
	db, err := cfg.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &foreignStore{payments: bankingsql.NewPaymentStore(db)}
}

// deliveries are the partner's outbox rows of document id.
func (s *foreignStore) deliveries(t *testing.T, client, id string) []banking.WebhookDelivery {
	t.Helper()
	all, err := s.payments.PartnerDeliveries(context.Background(), client, 500)
	if err != nil {
		t.Fatal(err)
	}
	var out []banking.WebhookDelivery
	for _, d := range all {
		if d.ExternalID == id {
			out = append(out, d)
		}
	}
	return out
}

// history is the recorded moves of organisation org's document id.
func (s *foreignStore) history(t *testing.T, org, id string) []banking.StatusChange {
	t.Helper()
	h, err := s.payments.PaymentHistory(context.Background(), org, id)
	if err != nil || len(h) == 0 {
		t.Fatalf("history of %s: %v %v", id, h, err)
	}
	return h
}
