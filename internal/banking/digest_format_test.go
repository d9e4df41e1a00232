package banking

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// digestSample is a payment with most fields absent, so that every option
// shows in a text short enough to write out by hand.
func digestSample() Payment {
	return Payment{Amount: "7", Date: "2026-11-20", ExternalID: "e1", Purpose: "p",
		CreditContractNumber: "K1", DepartmentalInfo: &DepartmentalInfo{KBK: "18"}}
}

// The sample's 28 lines, written out: in the listed order (reference §8)
// and by name, where creditContractNumber moves up after amount.
var (
	sampleListed = []string{
		"amount=7.00", "date=2026-11-20",
		"departmentalInfo.docNumber108=", "departmentalInfo.drawerStatus101=", "departmentalInfo.kbk=18",
		"departmentalInfo.oktmo=", "departmentalInfo.paymentKind110=", "departmentalInfo.reasonCode106=",
		"departmentalInfo.uip=", "externalId=e1", "incomeTypeCode=", "operationCode=",
		"payeeAccount=", "payeeBankBic=", "payeeBankCorrAccount=", "payeeInn=", "payeeKpp=", "payeeName=",
		"payerAccount=", "payerBankBic=", "payerBankCorrAccount=", "payerInn=", "payerKpp=", "payerName=",
		"priority=", "purpose=p", "voCode=", "creditContractNumber=K1",
	}
	sampleByName = []string{
		"amount=7.00", "creditContractNumber=K1", "date=2026-11-20",
		"departmentalInfo.docNumber108=", "departmentalInfo.drawerStatus101=", "departmentalInfo.kbk=18",
		"departmentalInfo.oktmo=", "departmentalInfo.paymentKind110=", "departmentalInfo.reasonCode106=",
		"departmentalInfo.uip=", "externalId=e1", "incomeTypeCode=", "operationCode=",
		"payeeAccount=", "payeeBankBic=", "payeeBankCorrAccount=", "payeeInn=", "payeeKpp=", "payeeName=",
		"payerAccount=", "payerBankBic=", "payerBankCorrAccount=", "payerInn=", "payerKpp=", "payerName=",
		"priority=", "purpose=p", "voCode=",
	}
)

func TestDigestFormatPayment(t *testing.T) {
	lf := strings.Join(sampleListed, "\n")
	for _, tc := range []struct {
		name   string
		format DigestFormat
		want   string
	}{
		{"default", DigestFormat{}, lf},
		{"alphabetical", DigestFormat{Alphabetical: true}, strings.Join(sampleByName, "\n")},
		{"crlf", DigestFormat{CRLF: true}, strings.Join(sampleListed, "\r\n")},
		{"trailing", DigestFormat{Trailing: true}, lf + "\n"},
		{"crlf trailing", DigestFormat{CRLF: true, Trailing: true}, strings.Join(sampleListed, "\r\n") + "\r\n"},
		{"drop", DigestFormat{DropEmpty: true},
			"amount=7.00\ndate=2026-11-20\ndepartmentalInfo.kbk=18\nexternalId=e1\npurpose=p\ncreditContractNumber=K1"},
		{"alphabetical drop", DigestFormat{Alphabetical: true, DropEmpty: true},
			"amount=7.00\ncreditContractNumber=K1\ndate=2026-11-20\ndepartmentalInfo.kbk=18\nexternalId=e1\npurpose=p"},
		{"drop trailing", DigestFormat{DropEmpty: true, Trailing: true},
			"amount=7.00\ndate=2026-11-20\ndepartmentalInfo.kbk=18\nexternalId=e1\npurpose=p\ncreditContractNumber=K1\n"},
		{"alphabetical crlf", DigestFormat{Alphabetical: true, CRLF: true}, strings.Join(sampleByName, "\r\n")},
		{"every option", DigestFormat{Alphabetical: true, CRLF: true, DropEmpty: true, Trailing: true},
			"amount=7.00\r\ncreditContractNumber=K1\r\ndate=2026-11-20\r\ndepartmentalInfo.kbk=18\r\nexternalId=e1\r\npurpose=p\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := digestSample()
			if got := tc.format.Payment(&p); got != tc.want {
				t.Fatalf("digest in %s:\n%q\nwant\n%q", tc.format, got, tc.want)
			}
			if got, want := tc.format.CrucialFieldsHash(&p), sha256.Sum256([]byte(tc.want)); got != hex.EncodeToString(want[:]) {
				t.Fatalf("crucialFieldsHash %s is not the SHA-256 of the digest", got)
			}
		})
	}
}

// An amount that is not a number of kopecks is written as sent, and an
// empty one is an absent value like any other: kept as `amount=` or
// dropped. Without departmentalInfo its lines are absent values too.
func TestDigestFormatAbsentAmount(t *testing.T) {
	for _, tc := range []struct {
		amount Amount
		format DigestFormat
		want   string
	}{
		{"", DigestFormat{DropEmpty: true}, "date=2026-11-20\nexternalId=e1"},
		{"", DigestFormat{DropEmpty: true, Trailing: true, CRLF: true}, "date=2026-11-20\r\nexternalId=e1\r\n"},
		{"1e400", DigestFormat{DropEmpty: true}, "amount=1e400\ndate=2026-11-20\nexternalId=e1"},
		{"0.1", DigestFormat{DropEmpty: true, Alphabetical: true}, "amount=0.10\ndate=2026-11-20\nexternalId=e1"},
	} {
		p := Payment{Amount: tc.amount, Date: "2026-11-20", ExternalID: "e1"}
		if got := tc.format.Payment(&p); got != tc.want {
			t.Errorf("amount %q in %s: %q, want %q", tc.amount, tc.format, got, tc.want)
		}
	}
	// Nothing at all: no line, so no trailing separator either.
	if got := (DigestFormat{DropEmpty: true, Trailing: true}).Payment(&Payment{}); got != "" {
		t.Errorf("empty document dropped to %q, want nothing", got)
	}
	p := Payment{Date: "2026-11-20"}
	if got := PaymentDigest(&p); strings.Count(got, "\n") != 27 || !strings.HasPrefix(got, "amount=\ndate=2026-11-20\n") {
		t.Errorf("default digest of an absent amount: %q", got)
	}
}

func TestDigestFormatLimit(t *testing.T) {
	l := LimitChange{Code: "NON_RENEW", BusinessCardID: "sbc-1", ExternalID: "e2", Limit: "1500.5"}
	noCode := l
	noCode.Code = ""
	for _, tc := range []struct {
		name   string
		l      LimitChange
		format DigestFormat
		want   string
	}{
		{"default", l, DigestFormat{}, "businessCardId=sbc-1\ncode=NON_RENEW\nexternalId=e2\nlimit=1500.50"},
		// The limit list is in name order already.
		{"alphabetical", l, DigestFormat{Alphabetical: true}, "businessCardId=sbc-1\ncode=NON_RENEW\nexternalId=e2\nlimit=1500.50"},
		{"crlf trailing", l, DigestFormat{CRLF: true, Trailing: true}, "businessCardId=sbc-1\r\ncode=NON_RENEW\r\nexternalId=e2\r\nlimit=1500.50\r\n"},
		{"absent kept", noCode, DigestFormat{}, "businessCardId=sbc-1\ncode=\nexternalId=e2\nlimit=1500.50"},
		{"absent dropped", noCode, DigestFormat{DropEmpty: true}, "businessCardId=sbc-1\nexternalId=e2\nlimit=1500.50"},
		{"every option", noCode, DigestFormat{Alphabetical: true, CRLF: true, DropEmpty: true, Trailing: true},
			"businessCardId=sbc-1\r\nexternalId=e2\r\nlimit=1500.50\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.format.Limit(tc.l); got != tc.want {
				t.Fatalf("limit digest in %s: %q, want %q", tc.format, got, tc.want)
			}
		})
	}
}

// The default format is the digest as it was before it could be
// configured: the golden files, written then, and the parsed spellings of
// the default all give it.
func TestDigestFormatDefaultIsToday(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "payments_digest_plain.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", " ", "order=listed,lines=lf,empty=keep,trailing=off", "trailing=off", "empty=keep, order=listed"} {
		f, err := ParseDigestFormat(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		p := validPayment()
		if got := f.Payment(&p); got != string(want) {
			t.Fatalf("%q gives another digest than the golden file:\n%s", s, got)
		}
	}
}

func TestParseDigestFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want DigestFormat
		err  string // a part of the error, "" for none
	}{
		{in: "", want: DigestFormat{}},
		{in: "order=alphabetical", want: DigestFormat{Alphabetical: true}},
		{in: "lines=crlf", want: DigestFormat{CRLF: true}},
		{in: "empty=drop", want: DigestFormat{DropEmpty: true}},
		{in: "trailing=on", want: DigestFormat{Trailing: true}},
		{in: "order=alphabetical,lines=crlf,empty=drop,trailing=on", want: DigestFormat{true, true, true, true}},
		{in: " trailing=on , order=alphabetical ", want: DigestFormat{Alphabetical: true, Trailing: true}},
		{in: "order=listed,lines=lf,empty=keep,trailing=off", want: DigestFormat{}},
		{in: "sort=alphabetical", err: `unknown key "sort"`},
		{in: "order=alpha", err: `key "order": unknown value "alpha"`},
		{in: "lines=cr", err: `key "lines": unknown value "cr"`},
		{in: "empty=null", err: `key "empty": unknown value "null"`},
		{in: "trailing=yes", err: `key "trailing": unknown value "yes"`},
		{in: "Order=listed", err: `unknown key "Order"`},
		{in: "order=listed,order=alphabetical", err: `key "order" given twice`},
		{in: "alphabetical", err: `item "alphabetical" is not key=value`},
		{in: "order=listed,", err: `item "" is not key=value`},
		{in: "order", err: "is not key=value"},
		{in: "=on", err: `unknown key ""`},
	} {
		got, err := ParseDigestFormat(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one with %q", tc.in, err, tc.err)
		case tc.err == "" && got != tc.want:
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
	}
	if s := (DigestFormat{Alphabetical: true, DropEmpty: true}).String(); s != "order=alphabetical,lines=lf,empty=drop,trailing=off" {
		t.Errorf("String: %q", s)
	}
}

// FuzzParseDigestFormat: no input panics; what parses prints back to a
// form that parses to the same format; and whatever the format, a
// document's digest keeps its 28 lines unless empty values are dropped.
func FuzzParseDigestFormat(f *testing.F) {
	for _, s := range []string{"", "order=alphabetical,lines=crlf,empty=drop,trailing=on", "order=listed,", "=", ",", "a=b=c",
		"order=listed,order=listed", " lines = crlf ", "trailing=on\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		format, err := ParseDigestFormat(s)
		if err != nil {
			if format != (DigestFormat{}) {
				t.Fatalf("%q: error %v with format %+v", s, err, format)
			}
			return
		}
		back, err := ParseDigestFormat(format.String())
		if err != nil || back != format {
			t.Fatalf("%q → %q → %+v, %v", s, format.String(), back, err)
		}
		p := validPayment()
		d := format.Payment(&p)
		sep := "\n"
		if format.CRLF {
			sep = "\r\n"
		}
		lines := strings.Split(strings.TrimSuffix(d, sep), sep)
		if !format.DropEmpty && len(lines) != 28 || strings.HasSuffix(d, sep) != format.Trailing {
			t.Fatalf("%q: digest of %d lines, trailing %v:\n%q", s, len(lines), strings.HasSuffix(d, sep), d)
		}
	})
}

// digestRecorder is a verifier that keeps the digests it is asked to
// check, accepting the sandbox certificates as soleVerifier does.
type digestRecorder struct {
	soleVerifier
	got []string
}

func (r *digestRecorder) Verify(ctx context.Context, p Principal, digest string, sigs []DigestSignature) (SignatureSet, error) {
	// A create's digest is only lent for the call (SignatureVerifier).
	r.got = append(r.got, strings.Clone(digest))
	return r.soleVerifier.Verify(ctx, p, digest, sigs)
}

func (r *digestRecorder) VerifyDocument(ctx context.Context, p Principal, digest string, sigs []DigestSignature) (SignatureSet, error) {
	return r.Verify(ctx, p, digest, sigs)
}

// The payment service uses its configured format everywhere: the digest it
// answers, the one signatures are checked against at creation and when a
// draft is signed later, and the crucialFieldsHash.
func TestPaymentServiceDigestFormat(t *testing.T) {
	ctx := context.Background()
	svc, p := newTestPayments(t)
	rec := &digestRecorder{}
	svc.Verifier = rec
	svc.Config.Digest = DigestFormat{Alphabetical: true, CRLF: true, DropEmpty: true, Trailing: true}
	doc := func(id string) Payment {
		return Payment{ExternalID: id, Amount: "12.5", Date: "2026-11-22", Purpose: "Счёт 7", Priority: "5",
			PayerAccount: SandboxAccount, PayerName: "ООО «Песочница»", PayerINN: SandboxOrgINN, PayerKPP: SandboxOrgKPP,
			PayerBankBIC: SandboxBIC, PayerBankCorrAccount: SandboxCorrAccount,
			PayeeAccount: "40602810700000000025", PayeeBankBIC: "049805746", PayeeBankCorrAccount: "30101810800000000746",
			PayeeName: "АО Лютик", PayeeINN: "7830002293", PayeeKPP: "783001001", OperationCode: "01"}
	}
	want := func(id string) string {
		return "amount=12.50\r\ndate=2026-11-22\r\nexternalId=" + id + "\r\noperationCode=01\r\n" +
			"payeeAccount=40602810700000000025\r\npayeeBankBic=049805746\r\npayeeBankCorrAccount=30101810800000000746\r\n" +
			"payeeInn=7830002293\r\npayeeKpp=783001001\r\npayeeName=АО Лютик\r\n" +
			"payerAccount=" + SandboxAccount + "\r\npayerBankBic=" + SandboxBIC + "\r\npayerBankCorrAccount=" + SandboxCorrAccount + "\r\n" +
			"payerInn=" + SandboxOrgINN + "\r\npayerKpp=" + SandboxOrgKPP + "\r\npayerName=ООО «Песочница»\r\n" +
			"priority=5\r\npurpose=Счёт 7\r\n"
	}
	hash := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

	const signed, draft = "0f8fad5b-d9cb-469f-a165-70867728950e", "1f8fad5b-d9cb-469f-a165-70867728950e"
	d := doc(signed)
	d.DigestSignatures = []DigestSignature{{CertificateUUID: SandboxCertSole, Base64Encoded: "MIIB"}}
	out, err := svc.Create(ctx, p, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.got) != 1 || rec.got[0] != want(signed) {
		t.Fatalf("create checked signatures over %q, want %q", rec.got, want(signed))
	}
	if out.CrucialFieldsHash != hash(want(signed)) {
		t.Fatalf("create's crucialFieldsHash %s is not that of the digest", out.CrucialFieldsHash)
	}
	if _, err := svc.Create(ctx, p, doc(draft)); err != nil {
		t.Fatal(err)
	}
	if got, err := svc.Digest(ctx, p, draft, ""); err != nil || got != want(draft) {
		t.Fatalf("GET …/digest: %q %v, want %q", got, err, want(draft))
	}
	if _, err := svc.Sign(ctx, p, draft, []DigestSignature{{CertificateUUID: SandboxCertSole, Base64Encoded: "MIIB"}}, ""); err != nil {
		t.Fatal(err)
	}
	if len(rec.got) != 2 || rec.got[1] != want(draft) {
		t.Fatalf("sign checked signatures over %q, want %q", rec.got[1:], want(draft))
	}
	for _, id := range []string{signed, draft} {
		got, err := svc.Get(ctx, p, id)
		if err != nil || got.CrucialFieldsHash != hash(want(id)) {
			t.Fatalf("%s: GET's crucialFieldsHash %v %v", id, got, err)
		}
		st, err := svc.State(ctx, p, id)
		if err != nil || st.CrucialFieldsHash != hash(want(id)) {
			t.Fatalf("%s: state's crucialFieldsHash %+v %v", id, st, err)
		}
	}
}

// The card service checks a limit application's signatures against its
// digest in the configured format.
func TestCardsDigestFormat(t *testing.T) {
	rec := &digestRecorder{}
	cards, err := NewCards(offerCards{}, CardsConfig{Contour: ContourTest, Location: time.UTC,
		Digest: DigestFormat{CRLF: true, DropEmpty: true, Trailing: true}}, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	cards.UseOffers(offerBook{"p": {"A1"}})
	l := LimitChange{Code: "NON_RENEW", BusinessCardID: "c1", ExternalID: "e3", Limit: "2",
		DigestSignatures: []DigestSignature{{CertificateUUID: SandboxCertSole, Base64Encoded: "MIIB"}}}
	if _, err := cards.SetLimit(context.Background(), Principal{OrgID: "org", PartnerID: "p"}, l, "API"); err != nil {
		t.Fatal(err)
	}
	if want := "businessCardId=c1\r\ncode=NON_RENEW\r\nexternalId=e3\r\nlimit=2.00\r\n"; len(rec.got) != 1 || rec.got[0] != want {
		t.Fatalf("limit signatures checked over %q, want %q", rec.got, want)
	}
}
