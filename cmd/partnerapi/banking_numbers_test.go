package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// numbersWorld is a server on a data directory that outlives it, with the
// sandbox organisation (A) and a second one (B), each with an account and a
// PAY_DOC_RU token.
type numbersWorld struct {
	ts         *testServer
	dir        string
	orgB       string
	userB      string
	accB       string
	tokA, tokB string
}

// start runs a server on w.dir until t ends, creating organisation B on the
// first start; tokens are issued anew for every start.
func (w *numbersWorld) start(t *testing.T) {
	w.ts = startServer(t, "--only", "banking", "--data-dir", w.dir, "--banking-payment-rate", "0")
	cli := func(args ...string) map[string]any {
		return bankingCLI(t, "", append(args, "--data-dir", w.dir)...)
	}
	if w.userB == "" {
		w.orgB = cli("org", "create", "--name", "ООО Б", "--inn", "7830002293", "--kpp", "783001001")["id"].(string)
		w.accB = validAccountFor(t, "40702810038833411799", banking.SandboxBIC)
		cli("account", "add", "--org", w.orgB, "--number", w.accB, "--bic", banking.SandboxBIC, "--corr", banking.SandboxCorrAccount)
		w.userB = cli("user", "create", "--org", w.orgB, "--login", "b1")["id"].(string)
	}
	w.tokA = cli("token", "--scope", "PAY_DOC_RU")["access_token"].(string)
	w.tokB = cli("token", "--scope", "PAY_DOC_RU", "--org", w.orgB, "--user", w.userB)["access_token"].(string)
}

// doc is the sandbox payment with externalId id from organisation B's
// account when b, without a number unless number is set.
func (w *numbersWorld) doc(t *testing.T, id string, b bool, number string) banking.Payment {
	t.Helper()
	var d banking.Payment
	if !banking.DecodePaymentFast(banking.SandboxPaymentJSON(id, time.Now().UTC().Format(time.DateOnly)), &d) {
		t.Fatal("the sandbox payment does not decode")
	}
	d.DigestSignatures, d.Number = nil, number
	if b {
		d.PayerAccount, d.PayerINN, d.PayerKPP = w.accB, "7830002293", "783001001"
	}
	return d
}

func (w *numbersWorld) call(t *testing.T, tok, method, path string, body any) (int, []byte) {
	t.Helper()
	return bankRequest(t, method, w.ts.urls["banking"]+"/fintech/api/v1/payments"+path, "Bearer "+tok, body)
}

// create posts d and returns the answer's number and crucialFieldsHash.
func (w *numbersWorld) create(t *testing.T, tok string, d banking.Payment) (number, hash string) {
	t.Helper()
	code, body := w.call(t, tok, http.MethodPost, "", d)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || code != http.StatusCreated {
		t.Fatalf("create %s: %d %s", d.ExternalID, code, body)
	}
	number, _ = m["number"].(string)
	hash, _ = m["crucialFieldsHash"].(string)
	return number, hash
}

// getNumber is the number GET answers for the document.
func (w *numbersWorld) getNumber(t *testing.T, tok, id string) string {
	t.Helper()
	code, body := w.call(t, tok, http.MethodGet, "/"+id, nil)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || code != http.StatusOK {
		t.Fatalf("get %s: %d %s", id, code, body)
	}
	n, _ := m["number"].(string)
	return n
}

// The bank numbers a payment order sent without a number (reference §4,
// field 3): per organisation, upward, in the 201, in GET, after a restart on
// the same data directory, without touching the digest (§8); a number the
// partner sends is kept as sent.
func TestBankingPaymentNumbers(t *testing.T) {
	w := &numbersWorld{dir: t.TempDir()}
	ids := map[string]string{} // externalId → number, checked again after the restart
	var maxA int
	t.Run("first start", func(t *testing.T) {
		w.start(t)
		for i, tc := range []struct {
			b      bool
			number string // sent
			want   string
		}{
			{false, "", "1"},
			{false, "", "2"},
			{true, "", "1"},
			{false, "777", "777"},
			{false, "", "3"},
			{true, "", "2"},
			{true, "5", "5"},
			{false, "", "4"},
		} {
			tok := w.tokA
			if tc.b {
				tok = w.tokB
			}
			id := fmt.Sprintf("0f8fad5b-d9cb-469f-a165-7086772895%02d", i)
			d := w.doc(t, id, tc.b, tc.number)
			got, hash := w.create(t, tok, d)
			if got != tc.want {
				t.Fatalf("row %d: 201 number %q, want %q", i, got, tc.want)
			}
			if g := w.getNumber(t, tok, id); g != tc.want {
				t.Fatalf("row %d: GET number %q, want %q", i, g, tc.want)
			}
			// The digest is the same with the number as without it, and
			// crucialFieldsHash is its hash.
			code, digest := w.call(t, tok, http.MethodGet, "/"+id+"/digest", nil)
			sent := banking.PaymentDigest(&d)
			d.Number = got
			if code != http.StatusOK || string(digest) != sent || banking.PaymentDigest(&d) != sent {
				t.Fatalf("row %d: digest %d %q, sent %q", i, code, digest, sent)
			}
			if sum := sha256.Sum256(digest); hash != hex.EncodeToString(sum[:]) {
				t.Fatalf("row %d: crucialFieldsHash %s is not the digest's", i, hash)
			}
			if !tc.b {
				ids[id] = got
			}
		}
		maxA = 4

		// Concurrent creates in one organisation get distinct numbers, all
		// after the ones before: within one process the numbers of one
		// organisation are distinct among any 999999 in a row.
		const n = 24
		got := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				code, body := w.call(t, w.tokA, http.MethodPost, "", w.doc(t, fmt.Sprintf("1f8fad5b-d9cb-469f-a165-7086772895%02d", i), false, ""))
				var m map[string]any
				if err := json.Unmarshal(body, &m); err != nil || code != http.StatusCreated {
					t.Errorf("concurrent create %d: %d %s", i, code, body)
					return
				}
				got[i], _ = m["number"].(string)
			})
		}
		wg.Wait()
		seen := map[string]bool{}
		for _, s := range got {
			v, err := strconv.Atoi(s)
			if err != nil || v <= maxA || v > maxA+n || seen[s] {
				t.Fatalf("concurrent numbers %v: not %d distinct numbers after %d", got, n, maxA)
			}
			seen[s] = true
		}
		maxA += n
	})
	t.Run("restart", func(t *testing.T) {
		w.start(t)
		for id, want := range ids {
			if got := w.getNumber(t, w.tokA, id); got != want {
				t.Fatalf("%s: number %q after the restart, want %q", id, got, want)
			}
		}
		prev := maxA
		for i := range 3 {
			got, _ := w.create(t, w.tokA, w.doc(t, fmt.Sprintf("2f8fad5b-d9cb-469f-a165-7086772895%02d", i), false, ""))
			v, err := strconv.Atoi(got)
			if err != nil || v <= prev {
				t.Fatalf("after the restart: number %q, not above %d", got, prev)
			}
			prev = v
		}
		if got, _ := w.create(t, w.tokB, w.doc(t, "3f8fad5b-d9cb-469f-a165-708677289500", true, "")); got == "" || got == "1" || got == "2" {
			t.Fatalf("organisation B after the restart: number %q", got)
		}
	})
}

// A draft from an invoice (reference §4.1) carries its number as
// paymentNumber: without one it gets the next value of the organisation's
// counter that numbers plain payment orders, one sequence for both kinds;
// one sent is kept; GET answers the number the 201 did.
func TestBankingInvoiceNumbers(t *testing.T) {
	ts := startServer(t, "--only", "banking", "--banking-payment-rate", "0")
	tok := bankingCLI(t, "", "token", "--scope", "PAY_DOC_RU PAY_DOC_RU_INVOICE PAY_DOC_RU_INVOICE_ANY", "--data-dir", ts.dataDir)["access_token"].(string)
	w := &numbersWorld{ts: ts}
	today := time.Now().UTC().Format(time.DateOnly)
	invoice := func(id, number string, anyPayee bool) map[string]any {
		m := map[string]any{"externalId": id, "amount": 99.9, "date": today, "purpose": "Оплата по счёту 7",
			"payeeAccount": banking.SandboxAccount, "priority": "5"}
		if number != "" {
			m["paymentNumber"] = number
		}
		if anyPayee {
			m["isPaidByCredit"], m["payeeBankBic"], m["payeeInn"], m["payeeName"] = false, banking.SandboxBIC, banking.SandboxOrgINN, "ООО Песочница"
		}
		return m
	}
	prev := 0
	for i, tc := range []struct {
		path   string // "" a plain payment order, else the from-invoice operation
		number string // sent
	}{
		{"", ""},
		{"/from-invoice", ""},
		{"/from-invoice-any", ""},
		{"/from-invoice", "4242"},
		{"", ""},
		{"/from-invoice", ""},
	} {
		id := fmt.Sprintf("4f8fad5b-d9cb-469f-a165-7086772895%02d", i)
		field, got := "number", ""
		if tc.path == "" {
			got, _ = w.create(t, tok, w.doc(t, id, false, tc.number))
		} else {
			field = "paymentNumber"
			code, body := w.call(t, tok, http.MethodPost, tc.path, invoice(id, tc.number, tc.path == "/from-invoice-any"))
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil || code != http.StatusCreated {
				t.Fatalf("row %d: %s: %d %s", i, tc.path, code, body)
			}
			got, _ = m[field].(string)
		}
		if tc.number != "" {
			if got != tc.number {
				t.Fatalf("row %d: %s %q, sent %q", i, field, got, tc.number)
			}
		} else if v, err := strconv.Atoi(got); err != nil || v != prev+1 {
			t.Fatalf("row %d: %s %q, want %d", i, field, got, prev+1)
		} else {
			prev = v
		}
		code, body := w.call(t, tok, http.MethodGet, "/"+id, nil)
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || code != http.StatusOK || m[field] != got {
			t.Fatalf("row %d: GET %d %s, want %s %q", i, code, body, field, got)
		}
	}
}
