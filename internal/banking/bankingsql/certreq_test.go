package bankingsql

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestCertRequestStoreConformance runs on SQLite and, with
// PARTNERAPI_TEST_DATABASE_URL, on PostgreSQL: a request is kept per
// organisation, its states move only forward, and activation stores the
// certificate with the state or not at all.
func TestCertRequestStoreConformance(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s, _ := sandboxIdentity(t, db)
		created := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		r := banking.CertRequest{OrgID: banking.SandboxOrgID, ExternalID: "AAAAAAAA-0000-4000-8000-000000000001",
			UserID: banking.SandboxUserID, OwnerID: banking.SandboxUserID, Number: "1", UserName: "Иванов", Email: "a@b.ru",
			UserPosition: "Директор", BicryptID: "A00", CMS: "MIIB", CSR: []byte{0x30, 0x00, 0xff}, Status: banking.CertRequestCreated, CreatedAt: created}
		if err := s.CreateCertRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateCertRequest(ctx, r); !errors.Is(err, banking.ErrDuplicate) {
			t.Fatalf("the same externalId twice: %v", err)
		}
		const id = "aaaaaaaa-0000-4000-8000-000000000001"
		// Another organisation may use the same externalId: ids are per
		// organisation, and neither sees the other's.
		other := r
		other.OrgID = "org-other"
		if err := s.CreateCertRequest(ctx, other); err != nil {
			t.Fatalf("another organisation's request with the same id: %v", err)
		}
		got, err := s.GetCertRequest(ctx, banking.SandboxOrgID, id)
		if err != nil || got.ExternalID != id || got.Status != banking.CertRequestCreated || !got.CreatedAt.Equal(created) ||
			string(got.CSR) != string(r.CSR) || got.UserName != "Иванов" || !got.PrintedAt.IsZero() {
			t.Fatalf("read back %+v %v", got, err)
		}
		if _, err := s.GetCertRequest(ctx, "org-none", id); !errors.Is(err, banking.ErrNotFound) {
			t.Fatalf("a request of no organisation: %v", err)
		}

		printed := created.Add(time.Hour)
		got, err = s.MarkCertRequestPrinted(ctx, banking.SandboxOrgID, id, printed)
		if err != nil || got.Status != banking.CertRequestPrinted || !got.PrintedAt.Equal(printed) {
			t.Fatalf("printed %+v %v", got, err)
		}
		// Printing again keeps the first time.
		if got, _ = s.MarkCertRequestPrinted(ctx, banking.SandboxOrgID, id, printed.Add(time.Hour)); !got.PrintedAt.Equal(printed) {
			t.Fatalf("second print moved the time to %v", got.PrintedAt)
		}
		if _, err := s.MarkCertRequestPrinted(ctx, banking.SandboxOrgID, "bbbbbbbb-0000-4000-8000-000000000001", printed); !errors.Is(err, banking.ErrNotFound) {
			t.Fatalf("printing an unknown request: %v", err)
		}

		// Two activations at once: one issues, the other is refused, and
		// exactly one certificate is stored.
		activated := printed.Add(time.Hour)
		certs := []banking.Certificate{
			{UUID: "cccccccc-0000-4000-8000-000000000001", UserID: banking.SandboxUserID, OrgID: banking.SandboxOrgID, DER: []byte{1}, TypeName: "TOKEN", Role: banking.RoleSoleAuthority, Active: true},
			{UUID: "cccccccc-0000-4000-8000-000000000002", UserID: banking.SandboxUserID, OrgID: banking.SandboxOrgID, DER: []byte{2}, TypeName: "TOKEN", Role: banking.RoleSoleAuthority, Active: true},
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range certs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.ActivateCertRequest(ctx, banking.SandboxOrgID, id, activated, certs[i])
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			if err == nil {
				won = i
			} else if !errors.Is(err, banking.ErrDuplicate) {
				t.Fatalf("activation %d: %v", i, err)
			}
		}
		if won < 0 {
			t.Fatalf("no activation won: %v", errs)
		}
		got, err = s.GetCertRequest(ctx, banking.SandboxOrgID, id)
		if err != nil || got.Status != banking.CertRequestActivated || !got.ActivatedAt.Equal(activated) || got.CertUUID != certs[won].UUID {
			t.Fatalf("activated %+v %v", got, err)
		}
		if c, err := s.GetCertificate(ctx, certs[won].UUID); err != nil || !c.Active || c.Role != banking.RoleSoleAuthority {
			t.Fatalf("issued certificate %+v %v", c, err)
		}
		if _, err := s.GetCertificate(ctx, certs[1-won].UUID); !errors.Is(err, banking.ErrNotFound) {
			t.Fatalf("the refused activation's certificate was stored: %v", err)
		}
		if _, err := s.ActivateCertRequest(ctx, banking.SandboxOrgID, "bbbbbbbb-0000-4000-8000-000000000001", activated, certs[1-won]); !errors.Is(err, banking.ErrNotFound) {
			t.Fatalf("activating an unknown request: %v", err)
		}
		// The other organisation's request stayed as it was.
		if o, _ := s.GetCertRequest(ctx, "org-other", id); o.Status != banking.CertRequestCreated {
			t.Fatalf("the other organisation's request is %s", o.Status)
		}
	})
}

// TestActivateEIORequestMarksExecutive runs on SQLite and, with
// PARTNERAPI_TEST_DATABASE_URL, on PostgreSQL: activating an EIO request
// makes its owner the organisation's executive (user-info's
// individualExecutiveAgency) with the certificate, and activating any
// other request leaves its owner as it was.
func TestActivateEIORequestMarksExecutive(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s, _ := sandboxIdentity(t, db)
		at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		tests := []struct {
			user, request string
			eio           bool
		}{
			{"dddddddd-0000-4000-8000-000000000001", "eeeeeeee-0000-4000-8000-000000000001", true},
			{"dddddddd-0000-4000-8000-000000000002", "eeeeeeee-0000-4000-8000-000000000002", false},
		}
		for i, tc := range tests {
			u := banking.User{ID: tc.user, OrgID: banking.SandboxOrgID, Login: "user" + tc.user[len(tc.user)-1:], Name: "Петров"}
			if err := s.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			r := banking.CertRequest{OrgID: banking.SandboxOrgID, ExternalID: tc.request, UserID: banking.SandboxUserID, OwnerID: tc.user,
				EIO: tc.eio, Number: "1", UserName: "Петров", Email: "a@b.ru", UserPosition: "Директор", BicryptID: "A00", CMS: "MIIB",
				CSR: []byte{0x30, 0x00}, Status: banking.CertRequestCreated, CreatedAt: at}
			if tc.eio {
				r.Login = u.Login
			}
			if err := s.CreateCertRequest(ctx, r); err != nil {
				t.Fatal(err)
			}
			// Filing the request is not enough: the bank makes the owner
			// executive when it issues the certificate.
			if got, err := s.GetUser(ctx, tc.user); err != nil || got.Executive {
				t.Fatalf("EIO %v: owner before activation %+v %v, want not executive", tc.eio, got, err)
			}
			c := banking.Certificate{UUID: "ffffffff-0000-4000-8000-00000000000" + string(rune('1'+i)), UserID: tc.user, OrgID: banking.SandboxOrgID,
				DER: []byte{byte(i)}, TypeName: "TOKEN", Role: banking.RoleSoleAuthority, Active: true}
			if _, err := s.ActivateCertRequest(ctx, banking.SandboxOrgID, tc.request, at, c); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetUser(ctx, tc.user)
			if err != nil || got.Executive != tc.eio {
				t.Fatalf("EIO %v: owner after activation %+v %v, want executive %v", tc.eio, got, err, tc.eio)
			}
		}
	})
}
