package banking

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// moscowHalfPastMidnight is 00:30 of 2026-11-22 in Moscow, still 21:30 of
// 2026-11-21 in UTC: the hour in which a UTC calendar and the bank's
// disagree about today.
var moscowHalfPastMidnight = time.Date(2026, 11, 21, 21, 30, 0, 0, time.UTC)

// Every document date rule counts days from the bank's local date, not from
// UTC's (reference §5.6): the 10-day past limit, the future-date CHECKERROR
// and expirationDate, for payment orders and invoice drafts alike.
func TestDocumentDatesUseBankZone(t *testing.T) {
	sole := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSole}}
	for i, tc := range []struct {
		name    string
		zone    *time.Location // nil: DefaultBankZone
		invoice bool
		date    string
		expires string // an invoice draft's expirationDate; signed at once
		status  string // "" refused
		kind    Kind
		field   string // the refusal names it
	}{
		{"today−10 in Moscow", nil, false, "2026-11-12", "", StatusCreated, 0, ""},
		{"today−11 in Moscow, today−10 in UTC", nil, false, "2026-11-11", "", "", KindValidation, "date"},
		{"today+9 in Moscow, today+10 in UTC", nil, false, "2026-12-01", "", StatusCreated, 0, ""},
		{"today+10 in Moscow", nil, false, "2026-12-02", "", StatusCheckError, 0, ""},
		{"invoice today−11 in Moscow", nil, true, "2026-11-11", "", "", KindValidation, "date"},
		{"invoice today+9 in Moscow", nil, true, "2026-12-01", "", StatusCreated, 0, ""},
		{"expired yesterday in Moscow, today in UTC", nil, true, "2026-11-21", "2026-11-21", "", KindValidation, "expirationDate"},
		{"expires today in Moscow", nil, true, "2026-11-21", "2026-11-22", StatusImplemented, 0, ""},
		{"UTC as the bank's zone: today−10", time.UTC, false, "2026-11-11", "", StatusCreated, 0, ""},
		{"UTC as the bank's zone: not yet expired", time.UTC, true, "2026-11-21", "2026-11-21", StatusImplemented, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, p := newTestPayments(t)
			svc.Config.Now = func() time.Time { return moscowHalfPastMidnight }
			svc.Config.Location = tc.zone
			id := "6f000000-0000-4000-8000-0000000000" + itoa(10+i)
			var got *Payment
			var err error
			if tc.invoice {
				d := Payment{ExternalID: id, Amount: "99.90", Date: tc.date, Priority: "5", PayeeAccount: SandboxAccount, ExpirationDate: tc.expires}
				got, err = svc.CreateInvoice(context.Background(), p, KindInvoice, d)
				if err == nil && tc.expires != "" {
					got, err = svc.Sign(context.Background(), p, id, sole, SandboxAccount)
				}
			} else {
				got, err = svc.Create(context.Background(), p, payOrder(id, tc.date))
			}
			if tc.status == "" {
				if KindOf(err) != tc.kind || !namesField(err, tc.field) {
					t.Fatalf("got %v %v, want kind %v naming %s", got, err, tc.kind, tc.field)
				}
				return
			}
			if err != nil || got.BankStatus != tc.status {
				t.Fatalf("got %v %v, want %s", got, err, tc.status)
			}
		})
	}
}

// namesField reports whether err names field: among a validation error's
// fieldNames, or in the message of any other.
func namesField(err error, field string) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return slices.Contains(e.FieldNames, field) || strings.Contains(e.Message, field)
}

// BankDate is the bank's calendar day as midnight UTC, the form of a parsed
// document date, on either side of Moscow's midnight.
func TestBankDate(t *testing.T) {
	for _, tc := range []struct {
		at   time.Time
		zone *time.Location
		want string
	}{
		{moscowHalfPastMidnight, nil, "2026-11-22"},
		{moscowHalfPastMidnight.Add(-time.Hour), nil, "2026-11-21"},
		{moscowHalfPastMidnight, time.UTC, "2026-11-21"},
		{time.Date(2026, 11, 22, 0, 30, 0, 0, time.FixedZone("MSK", 3*3600)), time.UTC, "2026-11-21"},
	} {
		got := BankDate(tc.at, tc.zone)
		if want, _ := ParseDate(tc.want); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("BankDate(%v, %v) = %v, want %s", tc.at, tc.zone, got, tc.want)
		}
	}
}

// A stored draft whose date is past its 10-day validity (reference §5.6,
// the rule the create applies) can be neither signed nor confirmed by QR
// code; on the tenth day it still can. The day is the bank's: 21:30 UTC of
// the tenth day is already the eleventh in Moscow.
func TestLapsedDraftRefused(t *testing.T) {
	sole := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSole}}
	second := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSecond}}
	first := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertFirst}}
	for i, tc := range []struct {
		name    string
		invoice bool
		partly  bool          // made PARTSIGNED with the first signature
		later   time.Duration // after 2026-11-22 12:00 UTC, the create
		refused bool
	}{
		{"order draft on the tenth day", false, false, 10 * 24 * time.Hour, false},
		{"order draft on the eleventh day", false, false, 11 * 24 * time.Hour, true},
		{"partly signed order on the eleventh day", false, true, 11 * 24 * time.Hour, true},
		{"invoice draft on the tenth day", true, false, 10 * 24 * time.Hour, false},
		{"invoice draft on the eleventh day", true, false, 11 * 24 * time.Hour, true},
		{"invoice draft at 00:30 of the eleventh day in Moscow", true, false, 10*24*time.Hour + 9*time.Hour + 30*time.Minute, true},
		{"invoice draft at 23:30 of the tenth day in Moscow", true, false, 10*24*time.Hour + 8*time.Hour + 30*time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, p := newTestPayments(t)
			now := svcNow
			svc.Config.Now = func() time.Time { return now }
			id := "6f200000-0000-4000-8000-0000000000" + itoa(10+i)
			var err error
			switch {
			case tc.invoice:
				_, err = svc.CreateInvoice(context.Background(), p, KindInvoice,
					Payment{ExternalID: id, Amount: "99.90", Date: "2026-11-22", Priority: "5", PayeeAccount: SandboxAccount})
			default:
				d := payOrder(id, "2026-11-22")
				if tc.partly {
					d.DigestSignatures = first
				}
				_, err = svc.Create(context.Background(), p, d)
			}
			if err != nil {
				t.Fatal(err)
			}
			now = svcNow.Add(tc.later)
			_, qrErr := svc.QRConfirm(context.Background(), p, []string{id})
			sigs := sole
			if tc.partly {
				sigs = second
			}
			got, signErr := svc.Sign(context.Background(), p, id, sigs, SandboxAccount)
			for op, err := range map[string]error{"QR": qrErr, "sign": signErr} {
				if !tc.refused {
					if err != nil {
						t.Fatalf("%s: %v", op, err)
					}
					continue
				}
				if KindOf(err) != KindWorkflow || !strings.Contains(err.Error(), "(date 2026-11-22") {
					t.Fatalf("%s: got %v, want a workflow fault naming the date", op, err)
				}
			}
			if !tc.refused && got.BankStatus != StatusImplemented {
				t.Fatalf("signed: %s", got.BankStatus)
			}
		})
	}
}
