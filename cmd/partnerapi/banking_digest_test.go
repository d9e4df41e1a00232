package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// --banking-digest is read when serve builds the banking API, keys left out
// at their defaults; a bad key or value stops the start naming the flag and
// the key. Its default is the default format written out in full.
func TestBankingDigestFlag(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  banking.DigestFormat
		err   string // in the refusal; "" accepted
	}{
		{"order=listed,lines=lf,empty=keep,trailing=off", banking.DigestFormat{}, ""},
		{"order=alphabetical,lines=crlf,empty=drop,trailing=on", banking.DigestFormat{Alphabetical: true, CRLF: true, DropEmpty: true, Trailing: true}, ""},
		{"empty=drop", banking.DigestFormat{DropEmpty: true}, ""},
		{"", banking.DigestFormat{}, ""},
		{"lines=cr", banking.DigestFormat{}, `--banking-digest: key "lines": unknown value "cr"`},
		{"sort=alphabetical", banking.DigestFormat{}, `--banking-digest: unknown key "sort"`},
		{"order=listed,order=alphabetical", banking.DigestFormat{}, `--banking-digest: key "order" given twice`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			m := &bankingModule{}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			m.registerFlags(fs)
			if d := fs.Lookup("banking-digest").DefValue; d != "order=listed,lines=lf,empty=keep,trailing=off" {
				t.Fatalf("default %q", d)
			}
			if err := fs.Parse([]string{"--banking-digest", tc.value}); err != nil {
				t.Fatal(err)
			}
			if tc.err != "" {
				// The format is read before anything else is built, so a
				// module without a database is enough to see the refusal.
				if _, err := m.build(t.Context(), deps{}); err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("build: %v, want a refusal with %q", err, tc.err)
				}
				return
			}
			if got, err := banking.ParseDigestFormat(m.digest); err != nil || got != tc.want {
				t.Fatalf("read %+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}

// TestBankingDigestServe: a server started with a non-default
// --banking-digest answers GET …/digest of a created draft in that format,
// refuses a signature over the default format's text, and accepts one over
// the text it answered, its crucialFieldsHash that text's SHA-256. The test
// contour checks signatures' GOST bytes, which the sandbox does not (§7).
func TestBankingDigestServe(t *testing.T) {
	w := newForeignWorld(t, banking.ContourTest, "--banking-digest", "order=alphabetical,lines=crlf,trailing=on")
	id := banking.NewUUID()
	d, defaultDigest := w.doc(t, id, w.accA)
	if st, m := w.call(t, w.tokA1, "POST", "", d); st != 201 || m["bankStatus"] != "CREATED" {
		t.Fatalf("draft: %d %v", st, m)
	}
	// Written out by hand: the draft's 28 lines by name (creditContractNumber
	// second), each ended by CRLF, the absent ones kept empty.
	want := strings.Join([]string{
		"amount=1500.50", "creditContractNumber=", "date=" + d.Date,
		"departmentalInfo.docNumber108=", "departmentalInfo.drawerStatus101=", "departmentalInfo.kbk=",
		"departmentalInfo.oktmo=", "departmentalInfo.paymentKind110=", "departmentalInfo.reasonCode106=",
		"departmentalInfo.uip=", "externalId=" + id, "incomeTypeCode=", "operationCode=01",
		"payeeAccount=40602810700000000025", "payeeBankBic=049805746", "payeeBankCorrAccount=30101810800000000746",
		"payeeInn=7830002293", "payeeKpp=", "payeeName=АО Лютик",
		"payerAccount=" + w.accA, "payerBankBic=" + banking.SandboxBIC, "payerBankCorrAccount=" + banking.SandboxCorrAccount,
		"payerInn=" + banking.SandboxOrgINN, "payerKpp=", "payerName=ООО Песочница",
		"priority=5", "purpose=Оплата по счёту, без НДС", "voCode=",
	}, "\r\n") + "\r\n"
	base := w.ts.urls["banking"] + "/fintech/api/v1/payments/" + id
	st, ct, served := bankCall(t, "GET", base+"/digest", w.tokA1, "", "")
	if st != 200 || !strings.HasPrefix(ct, "text/plain") || string(served) != want {
		t.Fatalf("GET …/digest: %d %s\n%q\nwant\n%q", st, ct, served, want)
	}
	// Signed over the default format's text, the signature is not the
	// owner's signature of this document's digest: refused, the draft
	// left as it was.
	sign := func(digest string) (int, map[string]any) {
		return w.call(t, w.tokA1, "POST", "/"+id+"/sign", map[string]any{"digestSignatures": []any{w.a1.sign(t, w.a1.uuid, digest)}})
	}
	if st, m := sign(defaultDigest); st < 400 {
		t.Fatalf("a signature over the default digest: %d %v, want a refusal", st, m)
	}
	if st, m := w.call(t, w.tokA1, "GET", "/"+id+"/state", nil); st != 200 || m["bankStatus"] != "CREATED" {
		t.Fatalf("after the refusal: %d %v", st, m)
	}
	st, m := sign(string(served))
	if st != 200 || m["bankStatus"] == "CREATED" || m["bankStatus"] == "INVALIDEDS" {
		t.Fatalf("a signature over the served digest: %d %v", st, m)
	}
	hash := sha256.Sum256(served)
	for _, path := range []string{"", "/state"} {
		if st, m := w.call(t, w.tokA1, "GET", "/"+id+path, nil); st != 200 || m["crucialFieldsHash"] != hex.EncodeToString(hash[:]) {
			t.Fatalf("GET …%s: %d crucialFieldsHash %v, want the served digest's", path, st, m["crucialFieldsHash"])
		}
	}
}
