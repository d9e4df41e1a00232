package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/storetest"
)

// outcomeCase is one marker of a purpose and the walk it requests.
type outcomeCase struct {
	marker string
	want   string   // the final bankStatus
	walk   []string // the recorded statuses of the fully signed document
}

// outcomeCases are every walk a marker may request (reference §6 machine).
var outcomeCases = []outcomeCase{
	{"outcome:REQUISITEERROR", "REQUISITEERROR", []string{"SIGNED", "DELIVERED", "VALIDEDS", "REQUISITEERROR"}},
	{"outcome:INVALIDEDS", "INVALIDEDS", []string{"SIGNED", "DELIVERED", "INVALIDEDS"}},
	{"outcome:REFUSEDBYBANK", "REFUSEDBYBANK", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "REFUSEDBYBANK"}},
	{"outcome:REFUSED_BY_RZK", "REFUSED_BY_RZK", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "REFUSED_BY_RZK"}},
	{"outcome:REFUSEDBYABS", "REFUSEDBYABS", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "EXPORTED", "REFUSEDBYABS"}},
	{"outcome:RECALL", "RECALL", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "EXPORTED", "ACCEPTED_BY_ABS", "RECALL"}},
	{"outcome:FRAUDDENY", "FRAUDDENY", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "FRAUDREVIEW", "FRAUDDENY"}},
	{"outcome:FRAUDREVIEW", "IMPLEMENTED", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "FRAUDREVIEW", "EXPORTED", "ACCEPTED_BY_ABS", "IMPLEMENTED"}},
	{"outcome:FRAUDSMS", "IMPLEMENTED", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "FRAUDSMS", "EXPORTED", "ACCEPTED_BY_ABS", "IMPLEMENTED"}},
	{"outcome:DELAYED", "IMPLEMENTED", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "DELAYED", "EXPORTED", "ACCEPTED_BY_ABS", "IMPLEMENTED"}},
	{"outcome:TRIED", "IMPLEMENTED", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "TRIED", "EXPORTED", "ACCEPTED_BY_ABS", "IMPLEMENTED"}},
	{"outcome:CORRESPONDENT_APPROVE_WAITING", "IMPLEMENTED", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED",
		"CORRESPONDENT_APPROVE_WAITING", "EXPORTED", "ACCEPTED_BY_ABS", "IMPLEMENTED"}},
	{"outcome:CARD2", "IMPLEMENTED", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "EXPORTED", "ACCEPTED_BY_ABS", "CARD2", "IMPLEMENTED"}},
	// Not a whole word, or the same walk twice: no effect, or that walk.
	{"xoutcome:RECALL", "IMPLEMENTED", implemented},
	{"outcome:RECALL, outcome:RECALL", "RECALL", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "EXPORTED", "ACCEPTED_BY_ABS", "RECALL"}},
	// A marker naming no walk fails the logical control at once.
	{"outcome:FOO", "CHECKERROR", []string{"CHECKERROR"}},
	{"outcome:CREATED", "CHECKERROR", []string{"CHECKERROR"}},
	{"outcome:recall", "CHECKERROR", []string{"CHECKERROR"}},
	{"outcome:RECALL outcome:FRAUDDENY", "CHECKERROR", []string{"CHECKERROR"}},
}

// outcomeStore reads a running server's store: its SQLite, or the
// PostgreSQL database db names.
func outcomeStore(t *testing.T, dataDir string, db ...string) *foreignStore {
	t.Helper()
	cfg := storeConfig{DataDir: dataDir}
	if len(db) == 2 {
		cfg.DatabaseURL = db[1]
	}
	d, err := cfg.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return &foreignStore{payments: bankingsql.NewPaymentStore(d)}
}

// TestBankingPaymentOutcomeMarker: in the sandbox a marker in a fully
// signed document's purpose makes it take the walk of the §6 machine it
// names, at creation and at a later /sign, on SQLite and PostgreSQL: the
// answer, /state and the store's history show the walk, a failure final's
// bankComment names the marker, and its webhook is queued once and
// delivered once, like every final's.
func TestBankingPaymentOutcomeMarker(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { paymentOutcomeMarker(t) })
	t.Run("postgres", func(t *testing.T) { paymentOutcomeMarker(t, "--database-url", storetest.PostgresURL(t)) })
}

func paymentOutcomeMarker(t *testing.T, db ...string) {
	partnerURL, got := signedWebhookReceiver(t, "hook-secret")
	ts := startServer(t, append([]string{"--banking-webhook-url", partnerURL, "--banking-webhook-secret", "hook-secret",
		"--banking-webhook-interval", "50ms", "--banking-webhook-allow-private", "--banking-payment-rate", "0"}, db...)...)
	store := outcomeStore(t, ts.dataDir, db...)
	issued, err := bankingCLIJSON(t, append([]string{"token", "--scope", "PAY_DOC_RU", "--data-dir", ts.dataDir}, db...)...)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := issued["access_token"].(string)
	base := ts.urls["banking"] + "/fintech/api/v1/payments"
	sole := []any{map[string]any{"base64Encoded": "MIIB", "certificateUuid": banking.SandboxCertSole}}
	doc := func(id, purpose string, sigs []any) map[string]any {
		m := map[string]any{
			"externalId": id, "date": time.Now().UTC().Format(time.DateOnly), "amount": 1, "operationCode": "01", "priority": "5",
			"purpose": purpose, "payerName": "ООО", "payerInn": banking.SandboxOrgINN, "payerAccount": banking.SandboxAccount,
			"payerBankBic": banking.SandboxBIC, "payerBankCorrAccount": banking.SandboxCorrAccount,
			"payeeName": "АО", "payeeBankBic": "049805746", "payeeAccount": "40602810700000000025",
		}
		if sigs != nil {
			m["digestSignatures"] = sigs
		}
		return m
	}
	webhooks := map[string]outcomeCase{} // externalId → its case, for every final
	for _, tc := range outcomeCases {
		for _, later := range []bool{false, true} {
			name := tc.marker + "/create"
			if later {
				name = tc.marker + "/sign"
			}
			t.Run(name, func(t *testing.T) {
				id := banking.NewUUID()
				purpose := "Оплата по счёту № 5, " + tc.marker + ", без НДС"
				var code int
				var m map[string]any
				wantCode, walk := 201, tc.walk
				if later {
					st, draft := bankRequestJSON(t, "POST", base, tok, doc(id, purpose, nil))
					wantDraft := "CREATED"
					if tc.want == "CHECKERROR" {
						wantDraft = "CHECKERROR"
					}
					if st != 201 || draft["bankStatus"] != wantDraft {
						t.Fatalf("draft: %d %v", st, draft)
					}
					if tc.want == "CHECKERROR" {
						// Not signable: the marker is refused before signing.
						code, m = bankRequestJSON(t, "POST", base+"/"+id+"/sign", tok, map[string]any{"digestSignatures": sole})
						if code != 400 || m["cause"] != "WORKFLOW_FAULT" {
							t.Fatalf("sign a CHECKERROR document: %d %v", code, m)
						}
						return
					}
					wantCode, walk = 200, append([]string{"CREATED"}, tc.walk...)
					code, m = bankRequestJSON(t, "POST", base+"/"+id+"/sign", tok, map[string]any{"digestSignatures": sole})
				} else {
					code, m = bankRequestJSON(t, "POST", base, tok, doc(id, purpose, sole))
				}
				if code != wantCode || m["bankStatus"] != tc.want {
					t.Fatalf("%d %v, want %d %s", code, m, wantCode, tc.want)
				}
				ss, state := bankRequestJSON(t, "GET", base+"/"+id+"/state", tok, nil)
				comment, _ := state["bankComment"].(string)
				if ss != 200 || state["bankStatus"] != tc.want || m["bankComment"] != state["bankComment"] {
					t.Fatalf("state %d %v after %v", ss, state, m)
				}
				failure := banking.IsFinal(tc.want) && tc.want != "IMPLEMENTED"
				marker := strings.Fields(strings.TrimSuffix(tc.marker, ","))[0]
				if (failure || tc.want == "CHECKERROR") != strings.Contains(comment, strings.TrimSuffix(marker, ",")) {
					t.Fatalf("bankComment %q for %s", comment, tc.marker)
				}
				hist := store.history(t, banking.SandboxOrgID, id)
				var statuses []string
				for i, h := range hist {
					statuses = append(statuses, h.Status)
					// The walk is recorded at one instant, after the
					// draft's CREATED on the /sign path.
					if (i >= len(hist)-len(tc.walk) && !h.At.Equal(hist[len(hist)-1].At)) || (i < len(hist)-1 && h.Comment != "") {
						t.Errorf("move %+v", h)
					}
				}
				if !slices.Equal(statuses, walk) || hist[len(hist)-1].Comment != comment {
					t.Fatalf("history %+v, want %v ending with comment %q", hist, walk, comment)
				}
				deliveries := store.deliveries(t, banking.SandboxClientID, id)
				if !banking.IsFinal(tc.want) {
					if len(deliveries) != 0 {
						t.Fatalf("outbox %+v for %s", deliveries, tc.want)
					}
					return
				}
				if len(deliveries) != 1 || deliveries[0].BankStatus != tc.want || deliveries[0].BankComment != comment ||
					!deliveries[0].EventTime.Equal(hist[len(hist)-1].At) {
					t.Fatalf("outbox %+v", deliveries)
				}
				webhooks[id] = tc
			})
		}
	}
	// Each final reaches the partner once, with the recorded comment.
	for len(webhooks) > 0 {
		m := nextWebhook(t, got)
		id, _ := m["externalId"].(string)
		tc, ok := webhooks[id]
		if !ok || m["bankStatus"] != tc.want {
			b, _ := json.Marshal(m)
			t.Fatalf("webhook %s: unexpected or sent twice", b)
		}
		if c, _ := m["bankComment"].(string); tc.want != "IMPLEMENTED" && !strings.Contains(c, "outcome:"+tc.want) {
			t.Fatalf("webhook %v: comment without the marker", m)
		}
		delete(webhooks, id)
	}
	noMoreWebhooks(t, got)
}

// TestBankingPaymentOutcomeContours: the test contour honours a marker as
// the sandbox does, with real GOST signatures over the digest that carries
// it; production never does: there the purpose is just text, a fully
// signed document is IMPLEMENTED along the success walk, and a marker
// naming no walk is no logical-control failure.
func TestBankingPaymentOutcomeContours(t *testing.T) {
	for _, c := range []struct {
		contour, marker, want string
		walk                  []string
	}{
		{banking.ContourTest, "outcome:REQUISITEERROR", "REQUISITEERROR", []string{"SIGNED", "DELIVERED", "VALIDEDS", "REQUISITEERROR"}},
		{banking.ContourTest, "outcome:CARD2", "IMPLEMENTED", []string{"SIGNED", "DELIVERED", "VALIDEDS", "ACCEPTED", "EXPORTED", "ACCEPTED_BY_ABS", "CARD2", "IMPLEMENTED"}},
		{banking.ContourTest, "outcome:FOO", "CHECKERROR", []string{"CHECKERROR"}},
		{banking.ContourProduction, "outcome:REQUISITEERROR", "IMPLEMENTED", implemented},
		{banking.ContourProduction, "outcome:FRAUDDENY", "IMPLEMENTED", implemented},
		{banking.ContourProduction, "outcome:FOO", "IMPLEMENTED", implemented},
	} {
		t.Run(c.contour+"/"+c.marker, func(t *testing.T) {
			w := newForeignWorld(t, c.contour)
			store := bankingStoreOf(t, w.ts.dataDir)
			for _, later := range []bool{false, true} {
				id := banking.NewUUID()
				d, _ := w.doc(t, id, w.accA)
				d.Purpose = "Оплата по счёту № 5 " + c.marker
				el := w.a1.sign(t, w.a1.uuid, banking.PaymentDigest(&d))
				walk, wantCode := c.walk, 201
				var code int
				var m map[string]any
				if later {
					if st, draft := w.call(t, w.tokA1, "POST", "", d); st != 201 || (draft["bankStatus"] != "CREATED" && draft["bankStatus"] != c.want) {
						t.Fatalf("draft: %d %v", st, draft)
					}
					if c.want == "CHECKERROR" {
						continue // not signable; the create row checks it
					}
					walk, wantCode = append([]string{"CREATED"}, c.walk...), 200
					code, m = w.call(t, w.tokA1, "POST", "/"+id+"/sign", map[string]any{"digestSignatures": []any{el}})
				} else {
					body := map[string]any{}
					raw, _ := banking.MarshalPayment(&d)
					_ = json.Unmarshal(raw, &body)
					body["digestSignatures"] = []any{el}
					code, m = w.call(t, w.tokA1, "POST", "", body)
				}
				if code != wantCode || m["bankStatus"] != c.want {
					t.Fatalf("later %v: %d %v, want %d %s", later, code, m, wantCode, c.want)
				}
				var statuses []string
				for _, h := range store.history(t, w.orgA, id) {
					statuses = append(statuses, h.Status)
				}
				if !slices.Equal(statuses, walk) {
					t.Fatalf("later %v: history %v, want %v", later, statuses, walk)
				}
				deliveries := store.deliveries(t, w.client, id)
				if c.want == "CHECKERROR" {
					if len(deliveries) != 0 {
						t.Fatalf("outbox %+v", deliveries)
					}
					continue
				}
				if len(deliveries) != 1 || deliveries[0].BankStatus != c.want {
					t.Fatalf("later %v: outbox %+v", later, deliveries)
				}
			}
		})
	}
}
