package bankingsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"partnerapi/internal/banking"
)

var _ banking.CertRequestStore = (*IdentityStore)(nil)

const certReqCols = `org_id, external_id, user_id, owner_id, eio, login, number, user_name, org_name, email, user_position,
	bicrypt_id, cms, csr, status, cert_uuid, created_at, printed_at, activated_at`

func scanCertRequest(sc interface{ Scan(...any) error }) (banking.CertRequest, error) {
	var r banking.CertRequest
	var eio int
	var created, printed, activated int64
	err := sc.Scan(&r.OrgID, &r.ExternalID, &r.UserID, &r.OwnerID, &eio, &r.Login, &r.Number, &r.UserName, &r.OrgName,
		&r.Email, &r.UserPosition, &r.BicryptID, &r.CMS, &r.CSR, &r.Status, &r.CertUUID, &created, &printed, &activated)
	r.EIO = eio != 0
	r.CreatedAt, r.PrintedAt, r.ActivatedAt = idFromNanos(created).UTC(), idFromNanos(printed), idFromNanos(activated)
	if !r.PrintedAt.IsZero() {
		r.PrintedAt = r.PrintedAt.UTC()
	}
	if !r.ActivatedAt.IsZero() {
		r.ActivatedAt = r.ActivatedAt.UTC()
	}
	return r, idNotFound(err)
}

// CreateCertRequest stores a request; its externalId is kept in lower case,
// the form every lookup uses, so two cases of one uuid are one request.
func (s *IdentityStore) CreateCertRequest(ctx context.Context, r banking.CertRequest) error {
	_, err := s.db.W.ExecContext(ctx, `INSERT INTO banking_cert_requests (`+certReqCols+`)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19)`,
		r.OrgID, strings.ToLower(r.ExternalID), r.UserID, r.OwnerID, idBool(r.EIO), r.Login, r.Number, r.UserName, r.OrgName,
		r.Email, r.UserPosition, r.BicryptID, r.CMS, r.CSR, r.Status, r.CertUUID, idNanos(r.CreatedAt), idNanos(r.PrintedAt), idNanos(r.ActivatedAt))
	return idInsertErr("certificate request", err)
}

func getCertRequest(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}, orgID, externalID string) (banking.CertRequest, error) {
	return scanCertRequest(q.QueryRowContext(ctx, `SELECT `+certReqCols+` FROM banking_cert_requests WHERE org_id = $1 AND external_id = $2`,
		orgID, strings.ToLower(externalID)))
}

// GetCertRequest reads from the writer, not a replica: a state read right
// after a create or an activation must see it.
func (s *IdentityStore) GetCertRequest(ctx context.Context, orgID, externalID string) (banking.CertRequest, error) {
	return getCertRequest(ctx, s.db.W, orgID, externalID)
}

func (s *IdentityStore) MarkCertRequestPrinted(ctx context.Context, orgID, externalID string, at time.Time) (banking.CertRequest, error) {
	var out banking.CertRequest
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE banking_cert_requests SET status = $1, printed_at = $2
			WHERE org_id = $3 AND external_id = $4 AND status = $5`,
			banking.CertRequestPrinted, idNanos(at), orgID, strings.ToLower(externalID), banking.CertRequestCreated); err != nil {
			return err
		}
		var err error
		out, err = getCertRequest(ctx, tx, orgID, externalID)
		return err
	})
	return out, err
}

func (s *IdentityStore) ActivateCertRequest(ctx context.Context, orgID, externalID string, at time.Time, cert banking.Certificate) (banking.CertRequest, error) {
	// Forgotten once committed, as AddCertificate does, so no read of the
	// new uuid before it is cached past it.
	defer forgetCertificate(s.db, strings.ToLower(cert.UUID))
	var out banking.CertRequest
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE banking_cert_requests SET status = $1, activated_at = $2, cert_uuid = $3
			WHERE org_id = $4 AND external_id = $5 AND status IN ($6, $7)`,
			banking.CertRequestActivated, idNanos(at), strings.ToLower(cert.UUID), orgID, strings.ToLower(externalID),
			banking.CertRequestCreated, banking.CertRequestPrinted)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			// Absent, or activated by a request that got there first.
			if _, err := getCertRequest(ctx, tx, orgID, externalID); err != nil {
				return err
			}
			return fmt.Errorf("certificate request %s: %w", externalID, banking.ErrDuplicate)
		}
		if err := insertCert(ctx, tx, cert, ""); err != nil {
			return err
		}
		if out, err = getCertRequest(ctx, tx, orgID, externalID); err != nil || !out.EIO {
			return err
		}
		// An EIO request certifies the key of the organisation's sole
		// executive body, which user-info tells as individualExecutiveAgency.
		_, err = tx.ExecContext(ctx, `UPDATE banking_users SET executive = 1 WHERE id = $1 AND org_id = $2`, out.OwnerID, out.OrgID)
		return err
	})
	if err != nil && !errors.Is(err, banking.ErrNotFound) && !errors.Is(err, banking.ErrDuplicate) {
		return banking.CertRequest{}, fmt.Errorf("activate certificate request: %w", err)
	}
	return out, err
}
