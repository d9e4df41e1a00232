package bankingsql

import (
	"context"
	"errors"
	"strings"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// A certificate's uuid names it whatever its case: a row added in upper
// case is stored and found in lower case, one written in upper case before
// uuids were folded is still found, and the same uuid in another case is a
// duplicate.
func TestCertificateUUIDCase(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s, _ := sandboxIdentity(t, db)
		const added, legacy = "ABCDEF01-2345-4678-89AB-CDEF01234567", "FEDCBA98-7654-4321-8FED-CBA987654321"
		cert := banking.Certificate{UUID: added, UserID: banking.SandboxUserID, DER: []byte{0x30, 0x00}, Role: banking.RoleFirst, Active: true}
		if err := s.AddCertificate(ctx, cert); err != nil {
			t.Fatal(err)
		}
		// A row written in upper case by an earlier version, bypassing insertCert's folding.
		if _, err := db.W.ExecContext(ctx, `INSERT INTO banking_certs (uuid, user_id, org_id, der, issuer, serial, type_name, role, active)
			VALUES ($1,$2,$3,$4,'','','',$5,1)`, legacy, banking.SandboxUserID, banking.SandboxOrgID, []byte{0x30, 0x00}, string(banking.RoleSecond)); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			uuid string
			role banking.SignatureRole // "" not found
		}{
			{added, banking.RoleFirst},
			{strings.ToLower(added), banking.RoleFirst},
			{legacy, banking.RoleSecond},
			{strings.ToLower(legacy), banking.RoleSecond},
			{strings.ToUpper(banking.SandboxCertSole), banking.RoleSoleAuthority},
			{"00000000-0000-4000-8000-000000000000", ""},
		} {
			got, err := s.GetCertificate(ctx, tc.uuid)
			if tc.role == "" {
				if !errors.Is(err, banking.ErrNotFound) {
					t.Errorf("%s: %+v %v, want not found", tc.uuid, got, err)
				}
				continue
			}
			if err != nil || got.Role != tc.role {
				t.Errorf("%s: %+v %v, want role %s", tc.uuid, got.Role, err, tc.role)
			}
		}
		cert.UUID = strings.ToLower(added)
		if err := s.AddCertificate(ctx, cert); !errors.Is(err, banking.ErrDuplicate) {
			t.Errorf("the same uuid in lower case: %v, want a duplicate", err)
		}
	})
}
