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

// SetCertificateActive turns a certificate off and on again, whatever the
// case of the uuid it is given or stored in, is seen at once by
// GetCertificate and ListCertificates through the read cache, leaves the
// certificate's other fields and other certificates alone, and names an
// unknown certificate ErrNotFound.
func TestSetCertificateActive(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s, seed := sandboxIdentity(t, db)
		const legacy = "FEDCBA98-7654-4321-8FED-CBA987654321"
		// A row written in upper case before uuids were folded.
		if _, err := db.W.ExecContext(ctx, `INSERT INTO banking_certs (uuid, user_id, org_id, der, issuer, serial, type_name, role, active)
			VALUES ($1,$2,$3,$4,'','','',$5,1)`, legacy, banking.SandboxUserID, banking.SandboxOrgID, []byte{0x30, 0x00}, string(banking.RoleSecond)); err != nil {
			t.Fatal(err)
		}
		active := func(uuid string) bool {
			t.Helper()
			c, err := s.GetCertificate(ctx, uuid)
			if err != nil {
				t.Fatal(err)
			}
			return c.Active
		}
		for _, tc := range []struct {
			name, uuid string // uuid as given to SetCertificateActive
			get        string // uuid as read back
		}{
			{"lower case", banking.SandboxCertFirst, banking.SandboxCertFirst},
			{"upper case", strings.ToUpper(banking.SandboxCertSole), banking.SandboxCertSole},
			{"stored in upper case", strings.ToLower(legacy), legacy},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if !active(tc.get) {
					t.Fatal("not active before")
				}
				if err := s.SetCertificateActive(ctx, tc.uuid, false); err != nil {
					t.Fatal(err)
				}
				if active(tc.get) {
					t.Fatal("still active after deactivation (a stale cache?)")
				}
				if err := s.SetCertificateActive(ctx, tc.uuid, true); err != nil {
					t.Fatal(err)
				}
				if !active(tc.get) {
					t.Fatal("not active after activation")
				}
			})
		}
		if err := s.SetCertificateActive(ctx, banking.SandboxCertQualified, false); err != nil {
			t.Fatal(err)
		}
		certs, err := s.ListCertificates(ctx, banking.SandboxUserID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range certs {
			want := c.UUID != banking.SandboxCertQualified
			if c.Active != want {
				t.Errorf("%s: active %v, want %v", c.UUID, c.Active, want)
			}
			if c.UUID == banking.SandboxCertQualified && (string(c.DER) != string(seed.Certs[3].DER) || c.Role != banking.RoleQualified || c.TypeName != "UKEP_UL") {
				t.Errorf("deactivation changed the certificate: %+v", c.Role)
			}
		}
		if err := s.SetCertificateActive(ctx, "00000000-0000-4000-8000-000000000000", false); !errors.Is(err, banking.ErrNotFound) {
			t.Errorf("unknown certificate: %v, want ErrNotFound", err)
		}
	})
}
