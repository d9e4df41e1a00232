package bankingsql

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestSignLimitCompareAndSet is the store's part of a limit application
// signed later: the move is stored only over the status and roles the
// signer read, so of many second signatures racing on one PARTSIGNED
// application exactly one applies and the others are refused with a
// workflow error (400, not a store failure's 500); the winner's roles,
// signatures and time in force are what is stored, and the application is
// the card's limit. A move into force over a card that no longer takes a
// limit is refused too, and so is a move from a status the row has left.
func TestSignLimitCompareAndSet(t *testing.T) {
	storetest.Each(t, MigrateCards, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewCardStore(db)
		if err := banking.SeedSandboxCards(ctx, s, "org", "app", "044525225", []string{"A1"}, nil); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		first := banking.DigestSignature{Base64Encoded: "AAAA", CertificateUUID: banking.SandboxCertFirst}
		second := banking.DigestSignature{Base64Encoded: "AAAA", CertificateUUID: banking.SandboxCertSecond}
		const rounds, signers = 5, 8
		for r := range rounds {
			ext := fmt.Sprintf("6b2d0c1e-0000-4000-8000-%012d", r)
			l := banking.LimitChange{OrgID: "org", PartnerID: "app", BusinessCardID: "sbc-00001", Code: "NON_RENEW", ExternalID: ext,
				Limit: "10.00", BankStatus: banking.LimitPartSigned, ChannelInfo: "API", CreatedAt: at,
				DigestSignatures: []banking.DigestSignature{first}, Roles: []banking.SignatureRole{banking.RoleFirst}}
			if _, err := s.CreateLimit(ctx, l); err != nil {
				t.Fatal(err)
			}
			stored, err := s.Limit(ctx, "org", ext)
			if err != nil || !slices.Equal(stored.Roles, l.Roles) {
				t.Fatalf("created: roles %v (%v), want %v", stored.Roles, err, l.Roles)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			won := []int{}
			for i := range signers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					to := stored
					to.BankStatus, to.Roles = banking.LimitExported, []banking.SignatureRole{banking.RoleFirst, banking.RoleSecond}
					to.DigestSignatures = []banking.DigestSignature{first, second}
					to.ExportedAt = at.Add(time.Duration(r)*time.Hour + time.Duration(i+1)*time.Minute)
					to.ExpiresAt = to.ExportedAt.Add(time.Hour)
					err := s.SignLimit(ctx, to, stored.BankStatus, stored.Roles)
					switch {
					case err == nil:
						mu.Lock()
						won = append(won, i)
						mu.Unlock()
					case banking.KindOf(err) != banking.KindWorkflow:
						t.Errorf("%s: a losing signer got %v (kind %v), want a workflow error", ext, err, banking.KindOf(err))
					}
				}()
			}
			wg.Wait()
			if len(won) != 1 {
				t.Fatalf("%s: %d of %d concurrent signers applied, want 1", ext, len(won), signers)
			}
			got, err := s.Limit(ctx, "org", ext)
			if err != nil {
				t.Fatal(err)
			}
			wantAt := at.Add(time.Duration(r)*time.Hour + time.Duration(won[0]+1)*time.Minute)
			if got.BankStatus != banking.LimitExported || len(got.DigestSignatures) != 2 || !got.ExportedAt.Equal(wantAt) ||
				!slices.Equal(got.Roles, []banking.SignatureRole{banking.RoleFirst, banking.RoleSecond}) {
				t.Fatalf("%s: stored %s, roles %v, %d signatures, in force %v; want EXPORTED, FIRST,SECOND, 2, %v",
					ext, got.BankStatus, got.Roles, len(got.DigestSignatures), got.ExportedAt, wantAt)
			}
			applied, err := s.CardLimits(ctx, "org", "sbc-00001")
			if err != nil || len(applied) != r+1 || applied[0].ExternalID != ext {
				t.Fatalf("card limits after %s: %d (%v), the newest in force %v", ext, len(applied), err, applied)
			}
		}
		// A move from a status the row no longer has writes nothing.
		stale, err := s.Limit(ctx, "org", "6b2d0c1e-0000-4000-8000-000000000000")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SignLimit(ctx, stale, banking.LimitCreated, nil); banking.KindOf(err) != banking.KindWorkflow {
			t.Errorf("sign from a stale status: %v, want a workflow error", err)
		}
		// Coming into force needs a card that takes a limit at that moment.
		blocked := banking.LimitChange{OrgID: "org", PartnerID: "app", BusinessCardID: "sbc-00001", Code: "NON_RENEW",
			ExternalID: "6b2d0c1e-0000-4000-8000-0000000000ff", Limit: "1.00", BankStatus: banking.LimitCreated, ChannelInfo: "API", CreatedAt: at}
		if _, err := s.CreateLimit(ctx, blocked); err != nil {
			t.Fatal(err)
		}
		if err := s.SetCardStatus(ctx, "org", "sbc-00001", banking.CardBlocked); err != nil {
			t.Fatal(err)
		}
		to := blocked
		to.BankStatus, to.Roles, to.ExportedAt = banking.LimitExported, []banking.SignatureRole{banking.RoleSoleAuthority}, at
		if err := s.SignLimit(ctx, to, banking.LimitCreated, nil); banking.KindOf(err) != banking.KindWorkflow {
			t.Errorf("sign into force on a blocked card: %v, want a workflow error", err)
		}
		if got, _ := s.Limit(ctx, "org", blocked.ExternalID); got.BankStatus != banking.LimitCreated {
			t.Errorf("refused sign stored %s", got.BankStatus)
		}
	})
}

// Cards migration 0005 gives the applications stored before it what the
// later sign reads: an EXPORTED one came into force when it was accepted
// (so the card's limit stays the one it was), and a sandbox PARTSIGNED one
// has the role of the §7 uuid it was signed with; a PARTSIGNED one signed
// with any other certificate keeps no role.
func TestLimitSigningMigration(t *testing.T) {
	upTo4 := func(ctx context.Context, db *sqldb.DB) error {
		return db.Migrate(ctx, "banking_cards", areaMigrationsUpTo(t, "cards", 4))
	}
	storetest.Each(t, upTo4, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		insert := func(ext, status, uuid string, created int64) {
			t.Helper()
			sigs := `[]`
			if uuid != "" {
				sigs = `[{"base64Encoded":"AAAA","certificateUuid":"` + uuid + `"}]`
			}
			if _, err := db.W.Exec(`INSERT INTO banking_card_limits (org_id, external_id, partner_id, card_id, code, amount, doc_date,
				doc_number, signatures, bank_status, bank_comment, channel_info, created_at, expires_at)
				VALUES ('org', $1, 'app', 'c1', 'NON_RENEW', '1.00', '2026-03-10', '1', $2, $3, '', 'API', $4, 0)`, ext, sigs, status, created); err != nil {
				t.Fatal(err)
			}
		}
		insert("e1", banking.LimitExported, banking.SandboxCertSole, 1000)
		insert("e2", banking.LimitExported, banking.SandboxCertSole, 2000)
		insert("p1", banking.LimitPartSigned, strings.ToUpper(banking.SandboxCertFirst), 3000)
		insert("p2", banking.LimitPartSigned, banking.SandboxCertSecond, 3000)
		insert("p3", banking.LimitPartSigned, "c0000000-0000-4000-8000-000000000001", 3000)
		insert("d1", banking.LimitCreated, "", 4000)
		if err := MigrateCards(ctx, db); err != nil {
			t.Fatal(err)
		}
		s := NewCardStore(db)
		for ext, want := range map[string]struct {
			roles    string
			exported int64
		}{
			"e1": {"", 1000}, "e2": {"", 2000}, "p1": {"FIRST", 0}, "p2": {"SECOND", 0}, "p3": {"", 0}, "d1": {"", 0},
		} {
			l, err := s.Limit(ctx, "org", ext)
			if err != nil {
				t.Fatal(err)
			}
			if joinRoles(l.Roles) != want.roles || unixOrZero(l.ExportedAt) != want.exported {
				t.Errorf("%s: roles %q, in force %d; want %q, %d", ext, joinRoles(l.Roles), unixOrZero(l.ExportedAt), want.roles, want.exported)
			}
		}
		if applied, err := s.CardLimits(ctx, "org", "c1"); err != nil || len(applied) != 2 || applied[0].ExternalID != "e2" {
			t.Errorf("card limits after the migration: %v (%v), want e2 then e1", applied, err)
		}
	})
}
