package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

func TestCardStoreConformance(t *testing.T) {
	storetest.Each(t, MigrateCards, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewCardStore(db)
		if err := banking.SeedSandboxCards(ctx, s, "org", "app", "044525225", []string{"A1", "A2"}, []string{"A3"}); err != nil {
			t.Fatal(err)
		}
		// Seeding twice changes nothing.
		if err := banking.SeedSandboxCards(ctx, s, "org", "app", "044525225", []string{"A1", "A2"}, []string{"A3"}); err != nil {
			t.Fatal(err)
		}
		accts, err := s.CardAccounts(ctx, "org")
		if err != nil || len(accts) != 3 {
			t.Fatalf("card accounts %v %v", accts, err)
		}
		offer := []string{"A1", "A2"}
		all, err := s.ListCards(ctx, banking.CardFilter{OrgID: "org", Accounts: offer, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		// 250 cards over 3 accounts round-robin: A3 holds 83.
		if len(all) != 167 {
			t.Fatalf("offer cards %d, want 167", len(all))
		}
		statuses := map[banking.CardStatus]int{}
		for _, c := range all {
			statuses[c.Status]++
		}
		if len(statuses) != 5 {
			t.Fatalf("statuses %v", statuses)
		}
		act, err := s.ListCards(ctx, banking.CardFilter{OrgID: "org", Accounts: offer, Statuses: []banking.CardStatus{banking.CardActive, banking.CardBlocked}, Offset: 10, Limit: 5})
		if err != nil || len(act) != 5 || act[0].ID >= act[4].ID {
			t.Fatalf("filtered page: %v %v", act, err)
		}
		if other, _ := s.ListCards(ctx, banking.CardFilter{OrgID: "org", Limit: 10}); len(other) != 0 {
			t.Fatal("cards listed without accounts")
		}
		if ok, _ := s.InOffer(ctx, "app", "org", "A1"); !ok {
			t.Fatal("A1 not in offer")
		}
		c, err := s.Card(ctx, "org", "sbc-00001")
		if err != nil || c.PAN == "" || c.HolderName == "" {
			t.Fatalf("card: %+v %v", c, err)
		}
		if _, err := s.Card(ctx, "other-org", "sbc-00001"); banking.KindOf(err) != banking.KindCardNotFound {
			t.Fatalf("other org's card: %v", err)
		}
		if err := s.SetCardStatus(ctx, "org", "sbc-00001", banking.CardBlocked); err != nil {
			t.Fatal(err)
		}
		if err := s.SetCardStatus(ctx, "org", "nope", banking.CardBlocked); banking.KindOf(err) != banking.KindCardNotFound {
			t.Fatalf("status of unknown card: %v", err)
		}
		if ok, _ := s.InOffer(ctx, "app", "org", "A3"); ok {
			t.Fatal("A3 in offer")
		}
		// An offer on an account without cards is an offer all the same.
		if err := s.AddOfferAccount(ctx, "app2", "org", "A9"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			partner, org string
			want         bool
		}{{"app", "org", true}, {"app2", "org", true}, {"app3", "org", false}, {"app", "other-org", false}} {
			if got, err := s.AnyOffer(ctx, tc.partner, tc.org); err != nil || got != tc.want {
				t.Fatalf("AnyOffer(%s, %s) = %v, %v; want %v", tc.partner, tc.org, got, err, tc.want)
			}
		}
		at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		l := banking.LimitChange{OrgID: "org", PartnerID: "app", BusinessCardID: "sbc-00005", Code: "NON_RENEW", ExternalID: "e1",
			Limit: "10.00", BankStatus: banking.LimitExported, ChannelInfo: "API", CreatedAt: at, ExpiresAt: at.Add(time.Hour),
			DigestSignatures: []banking.DigestSignature{{Base64Encoded: "AA==", CertificateUUID: "u"}}}
		if n, err := s.CreateLimit(ctx, l); err != nil || n != "1" {
			t.Fatalf("first application: number %q, %v; want 1", n, err)
		}
		if _, err := s.CreateLimit(ctx, l); banking.KindOf(err) != banking.KindWorkflow {
			t.Fatalf("duplicate: %v", err)
		}
		l2 := l
		l2.ExternalID, l2.Limit, l2.CreatedAt, l2.ExpiresAt = "e2", "0.00", at.Add(time.Minute), time.Time{}
		if n, err := s.CreateLimit(ctx, l2); err != nil || n != "2" {
			t.Fatalf("second application: number %q, %v; want 2 (the duplicate used none up)", n, err)
		}
		got, err := s.CardLimits(ctx, "org", "sbc-00005")
		if err != nil || len(got) != 2 || got[0].ExternalID != "e2" || !got[0].ExpiresAt.IsZero() || !got[1].ExpiresAt.Equal(at.Add(time.Hour)) {
			t.Fatalf("card limits %+v %v", got, err)
		}
		l3 := l
		l3.ExternalID, l3.BusinessCardID = "e3", "sbc-00002" // BLOCKED
		if _, err := s.CreateLimit(ctx, l3); banking.KindOf(err) != banking.KindWorkflow {
			t.Fatalf("limit on a blocked card: %v", err)
		}
		// A partner's own number is kept and leaves the counter alone; the
		// counter is the organisation's own.
		for _, tc := range []struct{ org, ext, card, number, want string }{
			{"org", "e4", "sbc-00005", "77", "77"},
			{"org", "e5", "sbc-00005", "", "3"},
			{"other-org", "e1", "sbc-00001", "", "1"},
		} {
			if tc.org == "other-org" {
				c := banking.SandboxCard(tc.org, "044525225", "B1", 0)
				if err := s.InsertCard(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			m := l
			m.OrgID, m.ExternalID, m.BusinessCardID, m.Number = tc.org, tc.ext, tc.card, tc.number
			if n, err := s.CreateLimit(ctx, m); err != nil || n != tc.want {
				t.Fatalf("%s %s: number %q, %v; want %s", tc.org, tc.ext, n, err, tc.want)
			}
			if back, err := s.Limit(ctx, tc.org, tc.ext); err != nil || back.Number != tc.want {
				t.Fatalf("%s %s read back: number %q, %v; want %s", tc.org, tc.ext, back.Number, err, tc.want)
			}
		}
		back, err := s.Limit(ctx, "org", "e1")
		if err != nil || back.Limit != "10.00" || len(back.DigestSignatures) != 1 || back.ChannelInfo != "API" {
			t.Fatalf("limit %+v %v", back, err)
		}
		if _, err := s.Limit(ctx, "org", "e9"); banking.KindOf(err) != banking.KindDataNotFound {
			t.Fatalf("unknown limit: %v", err)
		}
		// The limit setting is on until turned off, per organisation, and
		// turning it either way twice is the same as once.
		for i, step := range []struct {
			set      *bool
			org, off bool
		}{{nil, false, false}, {ptr(true), false, true}, {ptr(true), false, true}, {nil, true, false}, {ptr(false), false, false}, {ptr(false), false, false}} {
			if step.set != nil {
				if err := s.SetCardLimitsOff(ctx, "org", *step.set); err != nil {
					t.Fatal(err)
				}
			}
			org := "org"
			if step.org {
				org = "other-org"
			}
			if off, err := s.CardLimitsOff(ctx, org); err != nil || off != step.off {
				t.Fatalf("step %d: %s limits off %v, %v; want %v", i, org, off, err, step.off)
			}
		}
		if d, _ := s.ClockOffset(ctx, ""); d != 0 {
			t.Fatalf("fresh clock %v", d)
		}
		for range 2 {
			if err := s.AddClockOffset(ctx, 36*time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		if d, _ := s.ClockOffset(ctx, ""); d != 72*time.Hour {
			t.Fatalf("clock %v", d)
		}
	})
}

func ptr[T any](v T) *T { return &v }
