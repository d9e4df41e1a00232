package banking

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var updateCards = flag.Bool("update-cards", false, "rewrite testdata/cards* golden files")

func TestMaskPAN(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2202201001000008", "220220******0008"},
		{"2202 2010 0100 0008", "220220******0008"},
		{"4276380012345678901", "427638*********8901"},
		{"12345", "*****"},
		{"", ""},
	} {
		if got := MaskPAN(tc.in); got != tc.want {
			t.Errorf("MaskPAN(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := MaskName("IVAN  PETROV"); got != "I*** P*****" {
		t.Errorf("MaskName = %q", got)
	}
	if got := MaskName("ИВАН"); got != "И***" {
		t.Errorf("MaskName cyrillic = %q", got)
	}
}

func TestSandboxCardLuhn(t *testing.T) {
	for i := 0; i < SandboxCardCount; i++ {
		pan := SandboxCard("o", "b", "a", i).PAN
		if luhnDigit(pan[:len(pan)-1]) != pan[len(pan)-1:] || len(pan) != 16 {
			t.Fatalf("card %d PAN %s fails Luhn", i, pan)
		}
	}
}

// TestLimitDigestGolden pins the signed text: any change breaks every
// signature partners have made.
func TestLimitDigestGolden(t *testing.T) {
	var b strings.Builder
	for _, l := range []LimitChange{
		{Code: "NON_RENEW", BusinessCardID: "sbc-00001", ExternalID: "4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2a", Limit: "0"},
		{Code: "NON_RENEW", BusinessCardID: "sbc-00005", ExternalID: "4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2b", Limit: "1500.5"},
		{Code: "NON_RENEW", BusinessCardID: "1234567890", ExternalID: "4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2c", Limit: "99999999999999999999999999999999999.99"},
	} {
		b.WriteString(LimitDigest(l))
		b.WriteString("\n---\n")
	}
	path := filepath.Join("testdata", "cards_digest.golden")
	if *updateCards {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("digest:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestParseLimitChange(t *testing.T) {
	l, err := ParseLimitChange([]byte(`{"code":"NON_RENEW","businessCardId":"c1","externalId":"4F9C2A1E-8B3D-4C5E-9F6A-7B8C9D0E1F2A","limit":12.3,"bankStatus":"EXPORTED"}`))
	if err != nil {
		t.Fatal(err)
	}
	if l.Limit != "12.30" || l.ExternalID != "4F9C2A1E-8B3D-4C5E-9F6A-7B8C9D0E1F2A" || l.BankStatus != "" {
		t.Fatalf("parsed %+v", l)
	}
	// Without signatures, left out or null, an application is taken (and
	// stays CREATED).
	for _, sigs := range []string{``, `,"digestSignatures":null`} {
		if _, err := ParseLimitChange([]byte(`{"code":"NON_RENEW","businessCardId":"c1","externalId":"4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2a","limit":1` + sigs + `}`)); err != nil {
			t.Fatalf("without signatures (%q): %v", sigs, err)
		}
	}
	for _, tc := range []struct {
		body  string
		kind  Kind
		field string
	}{
		{`{"code":"NON_RENEW","businessCardId":"c1","externalId":"4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2a","limit":1e-3}`, KindValidation, "limit"},
		{`{"code":"NON_RENEW","businessCardId":"","externalId":"4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2a","limit":1}`, KindValidation, "businessCardId"},
		{`{"code":"NON_RENEW","businessCardId":"c","externalId":"4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2a","limit":1,"date":"10.03.2026"}`, KindValidation, "date"},
		{`{"code":1}`, KindDeserialization, "code"},
		{`{} {}`, KindDeserialization, ""},
		// digestSignatures has 1 or 2 items (reference §11, §9.1); without
		// signatures it is left out, so an empty list is a fault.
		{`{"code":"NON_RENEW","businessCardId":"c","externalId":"4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2a","limit":1,"digestSignatures":[]}`, KindValidation, "digestSignatures"},
	} {
		_, err := ParseLimitChange([]byte(tc.body))
		var e *Error
		if err == nil || KindOf(err) != tc.kind {
			t.Errorf("%s: %v, want kind %d", tc.body, err, tc.kind)
			continue
		}
		e = err.(*Error)
		if tc.field != "" && !strings.Contains(strings.Join(append(e.FieldNames, e.Fields...), ","), tc.field) {
			t.Errorf("%s: fields %v %v, want %s", tc.body, e.FieldNames, e.Fields, tc.field)
		}
	}
}

func TestLimitExpiry(t *testing.T) {
	msk, err := time.LoadLocation("Europe/Moscow")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at, want string // UTC
		amount   string
	}{
		// 23:59 MSK on the 10th: ends at 00:00 MSK on the 12th.
		{"2026-03-10T20:59:00Z", "2026-03-11T21:00:00Z", "100.00"},
		// 00:01 MSK on the 11th (still the 10th in UTC): one day later.
		{"2026-03-10T21:01:00Z", "2026-03-12T21:00:00Z", "100.00"},
		// Zero lasts the card's lifetime.
		{"2026-03-10T21:01:00Z", "", "0.00"},
		// End of month / year roll over.
		{"2026-12-31T10:00:00Z", "2027-01-01T21:00:00Z", "1.00"},
	} {
		at, _ := time.Parse(time.RFC3339, tc.at)
		got := LimitExpiry(tc.amount, at, msk)
		if tc.want == "" {
			if !got.IsZero() {
				t.Errorf("%s %s: expiry %v, want none", tc.at, tc.amount, got)
			}
			continue
		}
		if w, _ := time.Parse(time.RFC3339, tc.want); !got.Equal(w) {
			t.Errorf("%s: expiry %v, want %v", tc.at, got.UTC(), w)
		}
	}
	// Time zone is configurable: the same instant in UTC gives the UTC day.
	at, _ := time.Parse(time.RFC3339, "2026-03-10T21:01:00Z")
	if got := LimitExpiry("5", at, time.UTC); !got.Equal(time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("UTC expiry %v", got)
	}
}

func TestEffectiveLimit(t *testing.T) {
	t0 := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	older := LimitChange{Limit: "0.00"}
	newer := LimitChange{Limit: "50.00", ExpiresAt: t0.Add(time.Hour)}
	if got := EffectiveLimit([]LimitChange{newer, older}, t0); got == nil || got.Amount != "50.00" {
		t.Fatalf("before expiry: %+v", got)
	}
	if got := EffectiveLimit([]LimitChange{newer, older}, t0.Add(time.Hour)); got != nil {
		t.Fatalf("at expiry: %+v", got)
	}
	if got := EffectiveLimit([]LimitChange{older}, t0.Add(10000*time.Hour)); got == nil || got.Amount != "0.00" {
		t.Fatalf("zero limit: %+v", got)
	}
	if EffectiveLimit(nil, t0) != nil {
		t.Fatal("no limits")
	}
}

func FuzzParseLimitChange(f *testing.F) {
	f.Add([]byte(`{"code":"NON_RENEW","businessCardId":"c1","externalId":"4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2a","limit":12.3}`))
	f.Add([]byte(`{"limit":"1"}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLimitChange(b)
		if err != nil {
			if KindOf(err) == KindInternal {
				t.Fatalf("internal error for input: %v", err)
			}
			return
		}
		// What parses has a canonical two-decimal limit and survives a round trip.
		if s := string(l.Limit); !strings.Contains(s, ".") || len(s)-strings.Index(s, ".") != 3 {
			t.Fatalf("limit %q not two decimals", s)
		}
		out, _ := json.Marshal(l)
		if _, err := ParseLimitChange(out); err != nil {
			t.Fatalf("round trip: %v (%s)", err, out)
		}
	})
}

func TestCardValidate(t *testing.T) {
	good := SandboxCard("o", "b", "a", 0)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Card){
		"no id":      func(c *Card) { c.ID = "" },
		"status":     func(c *Card) { c.Status = "LOST" },
		"short pan":  func(c *Card) { c.PAN = "1234" },
		"letter pan": func(c *Card) { c.PAN = "22022010010000x8" },
		"expiry":     func(c *Card) { c.ExpiryDate = "12/27" },
		"birthday":   func(c *Card) { c.HolderBirthday = "1.1.1990" },
		// The shape alone is no date: a card cannot expire on 30 February.
		"expiry on no day":   func(c *Card) { c.ExpiryDate = "2027-02-30" },
		"birthday on no day": func(c *Card) { c.HolderBirthday = "1990-13-01" },
		"account":            func(c *Card) { c.AccountNumber = "" },
	} {
		c := good
		mut(&c)
		if c.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzLimitAmountForms holds card limits to a payment amount's forms: a
// JSON number literal is a limit exactly when Amount.Kopecks takes it, with
// the same value, save for the values past an int64 of kopecks, which a
// limit's number(38,2) still holds.
func FuzzLimitAmountForms(f *testing.F) {
	for _, s := range []string{"1", "1.5", "0.01", "1e3", "-1", "99999999999999999", "1.5E+3", "1e-3", "15005e-1",
		"1.505e1", "1234567890123456.78E0", "1e400", "0e-5", "9223372036854775807e-2", "1e35", "1e36", "0", "12.345", "15.000", "1.50000", "15.0010", "92233720368547758.070"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var n json.Number
		if json.Unmarshal([]byte(s), &n) != nil || s != strings.TrimSpace(s) || s == "" || s[0] == '"' {
			return // a limit is a JSON number literal
		}
		got, err := FormatLimit(n)
		k, ok := Amount(s).Kopecks()
		switch {
		case ok && (err != nil || got != FormatKopecks(k)):
			t.Fatalf("FormatLimit(%q) = %q, %v; Kopecks %d", s, got, err, k)
		case !ok && err == nil && len(strings.TrimLeft(strings.Replace(got, ".", "", 1), "0")) < 19:
			t.Fatalf("FormatLimit(%q) = %q, which Kopecks refuses", s, got)
		}
	})
}
