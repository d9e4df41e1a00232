package bankingsql

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

func TestIdentityStoreConformance(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s, seed := sandboxIdentity(t, db)
		// A second seed (new random certificates) keeps the first rows.
		seed2, _ := banking.SandboxSeed()
		if err := s.Seed(ctx, seed2); err != nil {
			t.Fatal(err)
		}
		c, err := s.GetCertificate(ctx, banking.SandboxCertQualified)
		if err != nil || string(c.DER) != string(seed.Certs[3].DER) || c.Role != banking.RoleQualified || c.TypeName != "UKEP_UL" || !c.Active {
			t.Fatalf("qualified cert after reseed: %+v %v", c.UUID, err)
		}
		certs, err := s.ListCertificates(ctx, banking.SandboxUserID)
		if err != nil || len(certs) != 4 {
			t.Fatalf("certs %d %v", len(certs), err)
		}
		if u, err := s.GetUser(ctx, banking.SandboxUserID); err != nil || !u.Executive {
			t.Fatalf("the sandbox user is its organisation's executive: %+v %v", u, err)
		}
		accts, err := s.ListAccounts(ctx, banking.SandboxOrgID)
		if err != nil || len(accts) != 2 || accts[0].Number != banking.SandboxAccount {
			t.Fatalf("accounts %+v %v", accts, err)
		}
		if ok, err := s.OfferSigned(ctx, banking.SandboxClientID, banking.SandboxAccount); !ok || err != nil {
			t.Fatalf("offer %v %v", ok, err)
		}
		if ok, _ := s.OfferSigned(ctx, "other", banking.SandboxAccount); ok {
			t.Fatal("offer of an unknown app")
		}

		t.Run("entities", func(t *testing.T) {
			o := banking.Organisation{ID: "org2", Name: "Б", FullName: "ББ", INN: "7707083893", KPP: "773601001", OGRN: "1027700132195",
				TerBank: "Северо-Западный Банк Сбербанка РФ"}
			if err := s.CreateOrg(ctx, o); err != nil {
				t.Fatal(err)
			}
			if err := s.CreateOrg(ctx, o); !errors.Is(err, banking.ErrDuplicate) {
				t.Fatalf("duplicate org: %v", err)
			}
			if got, err := s.GetOrg(ctx, "org2"); err != nil || got != o {
				t.Fatalf("org %+v %v", got, err)
			}
			if _, err := s.GetOrg(ctx, "nope"); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("missing org: %v", err)
			}
			a := banking.Account{Number: "40702810900000000001", OrgID: "org2", BIC: "044525225", CorrAccount: "30101810400000000225", Currency: "810", Name: "р/с", Status: banking.AccountBlocked, OpenDate: "2024-01-01"}
			if err := s.AddAccount(ctx, a); err != nil {
				t.Fatal(err)
			}
			if got, err := s.GetAccount(ctx, a.Number); err != nil || got != a {
				t.Fatalf("account %+v %v", got, err)
			}
			// A closed account keeps the day it was closed (client-info's
			// closeDate); one recorded without it reads back without it.
			closed := a
			closed.Number, closed.Status, closed.CloseDate = "40702810100000000101", banking.AccountClosed, "2025-03-31"
			closedNoDay := closed
			closedNoDay.Number, closedNoDay.CloseDate = "40702810400000000102", ""
			for _, c := range []banking.Account{closed, closedNoDay} {
				if err := s.AddAccount(ctx, c); err != nil {
					t.Fatal(err)
				}
				if got, err := s.GetAccount(ctx, c.Number); err != nil || got != c {
					t.Fatalf("closed account %+v %v, want %+v", got, err, c)
				}
			}
			if as, err := s.ListAccounts(ctx, "org2"); err != nil || len(as) != 3 || as[0] != closed || as[1] != closedNoDay || as[2] != a {
				t.Fatalf("accounts of org2 %+v %v", as, err)
			}
			bad := a
			bad.Number, bad.OrgID = "40702810900000000002", "nope"
			if err := s.AddAccount(ctx, bad); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("account of unknown org: %v", err)
			}
			u := banking.User{ID: "u2", OrgID: "org2", Login: "b", Name: "Б", Email: "b@x", PasswordHash: "h", Executive: true}
			if err := s.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			u.SigningMethod = banking.SigningToken // what an unset signing method is stored as
			u3 := u
			u3.ID = "u3"
			if err := s.CreateUser(ctx, u3); !errors.Is(err, banking.ErrDuplicate) {
				t.Fatalf("duplicate login: %v", err)
			}
			if got, err := s.GetUserByLogin(ctx, "b"); err != nil || got != u {
				t.Fatalf("user %+v %v", got, err)
			}
			if us, err := s.ListUsers(ctx, "org2"); err != nil || len(us) != 1 || us[0] != u {
				t.Fatalf("users %v %v", us, err)
			}
			// The signing tool type is stored as given and can be changed.
			otp := banking.User{ID: "u4", OrgID: "org2", Login: "otp", SigningMethod: banking.SigningOneTimePassword}
			if err := s.CreateUser(ctx, otp); err != nil {
				t.Fatal(err)
			}
			if got, err := s.GetUser(ctx, "u4"); err != nil || got != otp {
				t.Fatalf("otp user %+v %v", got, err)
			}
			if err := s.SetUserSigningMethod(ctx, "u2", banking.SigningOneTimePassword); err != nil {
				t.Fatal(err)
			}
			if got, err := s.GetUser(ctx, "u2"); err != nil || got.SigningMethod != banking.SigningOneTimePassword {
				t.Fatalf("changed user %+v %v", got, err)
			}
			if err := s.SetUserSigningMethod(ctx, "nobody", banking.SigningToken); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("unknown user: %v", err)
			}
			app := banking.PartnerApp{ClientID: "c2", Name: "P", SecretHash: "x", RedirectURIs: []string{"https://a/cb", "https://b/cb"}}
			if err := s.CreateApp(ctx, app); err != nil {
				t.Fatal(err)
			}
			if got, err := s.GetApp(ctx, "c2"); err != nil || len(got.RedirectURIs) != 2 || got.RedirectURIs[1] != "https://b/cb" {
				t.Fatalf("app %+v %v", got, err)
			}
			if got, _ := s.GetApp(ctx, "c2"); !got.SecretExpiresAt.IsZero() {
				t.Fatalf("app made without an expiry expires at %v", got.SecretExpiresAt)
			}
			// An app made without a scope list is unrestricted; a list set
			// later reads back as set, and an empty one lifts it again.
			if got, _ := s.GetApp(ctx, "c2"); len(got.Scopes) != 0 {
				t.Fatalf("app made without scopes has %q", got.Scopes)
			}
			if err := s.SetAppScopes(ctx, "c2", []string{"openid", banking.ScopePayDocRU}); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.GetApp(ctx, "c2"); strings.Join(got.Scopes, " ") != "openid PAY_DOC_RU" {
				t.Fatalf("scopes %q", got.Scopes)
			}
			if err := s.SetAppScopes(ctx, "c2", nil); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.GetApp(ctx, "c2"); len(got.Scopes) != 0 {
				t.Fatalf("scopes not cleared: %q", got.Scopes)
			}
			if err := s.SetAppScopes(ctx, "nope", []string{"openid"}); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("scopes of unknown app: %v", err)
			}
			scoped := banking.PartnerApp{ClientID: "c3", Name: "Q", SecretHash: "x", Scopes: []string{banking.ScopeGetClientAccounts}}
			if err := s.CreateApp(ctx, scoped); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.GetApp(ctx, "c3"); strings.Join(got.Scopes, " ") != banking.ScopeGetClientAccounts {
				t.Fatalf("created with scopes %q", got.Scopes)
			}
			exp := time.Unix(1_800_000_000, 0)
			if err := s.SetAppSecret(ctx, "c2", "y", exp); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.GetApp(ctx, "c2"); got.SecretHash != "y" || !got.SecretExpiresAt.Equal(exp) {
				t.Fatalf("secret hash %q expiring %v", got.SecretHash, got.SecretExpiresAt)
			}
			if err := s.SetAppSecret(ctx, "nope", "y", exp); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("secret of unknown app: %v", err)
			}
			// A change lands only over the secret it was made with, so of two
			// changes with one secret the second finds it gone.
			if err := s.ChangeAppSecret(ctx, "c2", "y", "z", exp.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := s.ChangeAppSecret(ctx, "c2", "y", "w", exp.Add(2*time.Hour)); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("change over a replaced secret: %v", err)
			}
			if got, _ := s.GetApp(ctx, "c2"); got.SecretHash != "z" || !got.SecretExpiresAt.Equal(exp.Add(time.Hour)) {
				t.Fatalf("after changes: %q expiring %v", got.SecretHash, got.SecretExpiresAt)
			}
			if err := s.ChangeAppSecret(ctx, "nope", "y", "z", exp); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("change of unknown app: %v", err)
			}
			// Back to never expiring, as an operator may set it.
			if err := s.SetAppSecret(ctx, "c2", "y", time.Time{}); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.GetApp(ctx, "c2"); !got.SecretExpiresAt.IsZero() {
				t.Fatalf("expiry not cleared: %v", got.SecretExpiresAt)
			}
			if err := s.SignOffer(ctx, "c2", a.Number); err != nil {
				t.Fatal(err)
			}
			if err := s.SignOffer(ctx, "c2", a.Number); err != nil {
				t.Fatalf("signing twice: %v", err)
			}
			cert := banking.Certificate{UUID: "cert2", UserID: "u2", DER: []byte{0x30, 0x00, 0xff}, Issuer: "CN=x", Serial: "01", TypeName: "SMS", Role: banking.RoleFirst, Active: false}
			if err := s.AddCertificate(ctx, cert); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetCertificate(ctx, "cert2")
			if err != nil || got.OrgID != "org2" || got.Active || got.Role != banking.RoleFirst || string(got.DER) != string(cert.DER) {
				t.Fatalf("cert %+v %v", got, err)
			}
			cert.UUID, cert.UserID = "cert3", "nope"
			if err := s.AddCertificate(ctx, cert); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("cert of unknown user: %v", err)
			}
		})

		t.Run("tokens", func(t *testing.T) {
			now := time.Unix(1_800_000_000, 0)
			a := banking.Token{Hash: "ha", Kind: banking.TokenAccess, ClientID: "c", OrgID: "o", UserID: "u", Scopes: []string{"A", "B"}, ExpiresAt: now.Add(time.Hour)}
			r := a
			r.Hash, r.Kind, r.ExpiresAt = "hr", banking.TokenRefresh, now.Add(24*time.Hour)
			if err := s.SaveTokens(ctx, a, r); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetToken(ctx, "ha")
			if err != nil || len(got.Scopes) != 2 || !got.ExpiresAt.Equal(a.ExpiresAt) || !got.RevokedAt.IsZero() {
				t.Fatalf("token %+v %v", got, err)
			}
			// A failed pair stores nothing: "ha" exists, so "hx" must not be left behind.
			x := a
			x.Hash = "hx"
			if err := s.SaveTokens(ctx, x, a); !errors.Is(err, banking.ErrDuplicate) {
				t.Fatalf("duplicate token: %v", err)
			}
			if _, err := s.GetToken(ctx, "hx"); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("half-written pair: %v", err)
			}
			n1 := banking.Token{Hash: "n1", Kind: banking.TokenRefresh, ExpiresAt: now.Add(time.Hour)}
			old, err := s.RotateRefresh(ctx, "hr", now, now.Add(2*time.Hour), n1)
			if err != nil || !old.ReserveUntil.Equal(now.Add(2*time.Hour)) {
				t.Fatalf("rotate: %+v %v", old, err)
			}
			// Reuse inside the reserve works and does not extend it.
			n2 := n1
			n2.Hash = "n2"
			old, err = s.RotateRefresh(ctx, "hr", now.Add(time.Hour), now.Add(3*time.Hour), n2)
			if err != nil || !old.ReserveUntil.Equal(now.Add(2*time.Hour)) {
				t.Fatalf("reuse in reserve: %+v %v", old.ReserveUntil, err)
			}
			n3 := n1
			n3.Hash = "n3"
			if _, err := s.RotateRefresh(ctx, "hr", now.Add(2*time.Hour), now.Add(4*time.Hour), n3); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("after reserve: %v", err)
			}
			if _, err := s.GetToken(ctx, "n3"); !errors.Is(err, banking.ErrNotFound) {
				t.Fatal("rejected rotation stored its tokens")
			}
			if _, err := s.RotateRefresh(ctx, "ha", now, now, n3); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("access token as refresh: %v", err)
			}
			// The retry with the reserve made n2 the chain's newest token, so
			// n1, which that retry replaced, no longer refreshes.
			if got, err := s.GetToken(ctx, "n1"); err != nil || !got.RevokedAt.Equal(now.Add(time.Hour)) || got.Chain != "hr" {
				t.Fatalf("replaced token: %+v %v", got, err)
			}
			if _, err := s.RotateRefresh(ctx, "n1", now.Add(time.Hour), now.Add(3*time.Hour), n3); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("replaced token refreshed: %v", err)
			}
			if err := s.RevokeToken(ctx, "ha", now); err != nil {
				t.Fatal(err)
			}
			if err := s.RevokeToken(ctx, "ha", now); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("revoke twice: %v", err)
			}
			if got, _ := s.GetToken(ctx, "ha"); !got.RevokedAt.Equal(now) {
				t.Fatalf("revoked at %v", got.RevokedAt)
			}
			// At now+90m: "ha" and "n1" are revoked, "n2" (1 h) expired;
			// "hr" is inside its reserve and stays.
			n, err := s.PurgeExpired(ctx, now.Add(90*time.Minute))
			if err != nil || n != 3 {
				t.Fatalf("purged %d %v", n, err)
			}
			if _, err := s.GetToken(ctx, "hr"); err != nil {
				t.Fatalf("live refresh token purged: %v", err)
			}
			if _, err := s.GetToken(ctx, "n1"); !errors.Is(err, banking.ErrNotFound) {
				t.Fatal("expired token kept")
			}
		})

		t.Run("refresh chain", func(t *testing.T) { identityRefreshChain(t, s) })

		t.Run("codes", func(t *testing.T) {
			now := time.Unix(1_800_000_000, 0)
			c := banking.AuthCode{Hash: "c1", ClientID: "c", OrgID: "o", UserID: "u", RedirectURI: "https://a/cb", Scopes: []string{"openid"}, Challenge: "ch", Nonce: "n", ExpiresAt: now.Add(2 * time.Minute)}
			if err := s.SaveCode(ctx, c); err != nil {
				t.Fatal(err)
			}
			got, err := s.ConsumeCode(ctx, "c1", now)
			if err != nil || got.Challenge != "ch" || got.RedirectURI != c.RedirectURI || got.Scopes[0] != "openid" {
				t.Fatalf("code %+v %v", got, err)
			}
			if _, err := s.ConsumeCode(ctx, "c1", now); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("second use: %v", err)
			}
			// Concurrent redemptions of one code: exactly one wins.
			c.Hash = "c3"
			if err := s.SaveCode(ctx, c); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var wins atomic.Int32
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := s.ConsumeCode(ctx, "c3", now); err == nil {
						wins.Add(1)
					}
				}()
			}
			wg.Wait()
			if wins.Load() != 1 {
				t.Fatalf("%d concurrent redemptions succeeded", wins.Load())
			}
			c.Hash = "c2"
			if err := s.SaveCode(ctx, c); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ConsumeCode(ctx, "c2", now.Add(2*time.Minute)); !errors.Is(err, banking.ErrNotFound) {
				t.Fatalf("expired code: %v", err)
			}
		})
	})
}

// sandboxIdentity is an identity store on db seeded with the sandbox's
// organisation, user, app and certificates, and the seed it was given.
func sandboxIdentity(t *testing.T, db *sqldb.DB) (*IdentityStore, banking.SeedData) {
	t.Helper()
	s := NewIdentityStore(db)
	seed, err := banking.SandboxSeed()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Seed(context.Background(), seed); err != nil {
		t.Fatal(err)
	}
	return s, seed
}
