package bankingsql

import (
	"context"
	"strings"

	"partnerapi/internal/banking"
)

// SetCertificateActive sets whether the bank takes signatures made with the
// certificate uuid (any case); banking.ErrNotFound when there is none. It
// changes nothing else: documents signed with it keep their signatures. The
// row is dropped from this database's read cache at once; another process
// (a server, when the CLI deactivates) sees the change within
// readCacheTTL.
func (s *IdentityStore) SetCertificateActive(ctx context.Context, uuid string, active bool) error {
	key := strings.ToLower(uuid)
	defer forgetCertificate(s.db, key)
	res, err := s.db.W.ExecContext(ctx, `UPDATE banking_certs SET active = $1 WHERE uuid = $2`, idBool(active), key)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		// A row written in another case before uuids were folded
		// (GetCertificate finds those the same way).
		res, err = s.db.W.ExecContext(ctx, `UPDATE banking_certs SET active = $1 WHERE lower(uuid) = $2`, idBool(active), key)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
	}
	if n == 0 {
		return banking.ErrNotFound
	}
	return nil
}
