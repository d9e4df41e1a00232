package bankingsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// IdentityStore is banking.IdentityStore on SQLite or PostgreSQL.
type IdentityStore struct {
	db *sqldb.DB
	// caches are db's read caches (token_cache.go), found once here: every
	// create looks up its token, account, organisation and certificate,
	// and finding the caches by db in the process-wide map cost each of
	// those lookups an interface hash.
	caches *dbCaches
}

// NewIdentityStore wraps db (already migrated with MigrateIdentity).
func NewIdentityStore(db *sqldb.DB) *IdentityStore {
	return &IdentityStore{db: db, caches: cachesFor(db)}
}

var _ banking.IdentityStore = (*IdentityStore)(nil)

type idExecer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// insertErr turns a unique violation into banking.ErrDuplicate.
func idInsertErr(what string, err error) error {
	if err == nil {
		return nil
	}
	if sqldb.IsUniqueViolation(err) {
		return fmt.Errorf("%s: %w", what, banking.ErrDuplicate)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func idNotFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return banking.ErrNotFound
	}
	return err
}

func idNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func idFromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func idBool(b bool) int {
	if b {
		return 1
	}
	return 0
}

const idIgnoreDup = " ON CONFLICT DO NOTHING"

func insertOrg(ctx context.Context, e idExecer, o banking.Organisation, suffix string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO banking_orgs (id, name, full_name, inn, kpp, ogrn, juridical_address, ter_bank) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`+suffix,
		o.ID, o.Name, o.FullName, o.INN, o.KPP, o.OGRN, o.JuridicalAddress, o.TerBank)
	return idInsertErr("org", err)
}

func insertAccount(ctx context.Context, e idExecer, a banking.Account, suffix string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO banking_accounts (number, org_id, bic, corr_account, currency, name, status, open_date, close_date) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`+suffix,
		a.Number, a.OrgID, a.BIC, a.CorrAccount, a.Currency, a.Name, a.Status, a.OpenDate, a.CloseDate)
	return idInsertErr("account", err)
}

func insertUser(ctx context.Context, e idExecer, u banking.User, suffix string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO banking_users (id, org_id, login, name, email, password_hash, signing_method, phone, executive) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`+suffix,
		u.ID, u.OrgID, u.Login, u.Name, u.Email, u.PasswordHash, u.SigningMethodOf(), u.Phone, idBool(u.Executive))
	return idInsertErr("user", err)
}

func insertApp(ctx context.Context, e idExecer, a banking.PartnerApp, suffix string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO banking_apps (client_id, name, secret_hash, redirect_uris, secret_expires_at, scopes) VALUES ($1,$2,$3,$4,$5,$6)`+suffix,
		a.ClientID, a.Name, a.SecretHash, strings.Join(a.RedirectURIs, " "), idNanos(a.SecretExpiresAt), strings.Join(a.Scopes, " "))
	return idInsertErr("app", err)
}

func insertOffer(ctx context.Context, e idExecer, clientID, account, suffix string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO banking_offers (client_id, account_number) VALUES ($1,$2)`+suffix, clientID, account)
	return idInsertErr("offer", err)
}

func insertCert(ctx context.Context, e idExecer, c banking.Certificate, suffix string) error {
	// A certificate's uuid is stored in lower case, the form GetCertificate
	// looks up: partners may name it in either case (a UUID's hex digits are
	// case-insensitive), and the same certificate cannot be added twice in
	// two cases.
	_, err := e.ExecContext(ctx, `INSERT INTO banking_certs (uuid, user_id, org_id, der, issuer, serial, type_name, role, active) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`+suffix,
		strings.ToLower(c.UUID), c.UserID, c.OrgID, c.DER, c.Issuer, c.Serial, c.TypeName, string(c.Role), idBool(c.Active))
	return idInsertErr("certificate", err)
}

// tokenChain is the chain a token is stored in: a token given none starts
// its own, named by its hash, as the migration named the older tokens'.
func tokenChain(t banking.Token) string {
	if t.Chain == "" {
		return t.Hash
	}
	return t.Chain
}

func insertToken(ctx context.Context, e idExecer, t banking.Token) error {
	_, err := e.ExecContext(ctx, `INSERT INTO banking_tokens (hash, kind, client_id, org_id, user_id, scopes, expires_at, revoked_at, reserve_until, chain) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
		t.Hash, t.Kind, t.ClientID, t.OrgID, t.UserID, strings.Join(t.Scopes, " "), idNanos(t.ExpiresAt), idNanos(t.RevokedAt), idNanos(t.ReserveUntil), tokenChain(t))
	return idInsertErr("token", err)
}

func (s *IdentityStore) CreateOrg(ctx context.Context, o banking.Organisation) error {
	return insertOrg(ctx, s.db.W, o, "")
}

func (s *IdentityStore) GetOrg(ctx context.Context, id string) (banking.Organisation, error) {
	return s.caches.orgs.get(id, func() (banking.Organisation, error) { // token_cache.go
		var o banking.Organisation
		err := s.db.R.QueryRowContext(ctx, `SELECT id, name, full_name, inn, kpp, ogrn, juridical_address, ter_bank FROM banking_orgs WHERE id = $1`, id).
			Scan(&o.ID, &o.Name, &o.FullName, &o.INN, &o.KPP, &o.OGRN, &o.JuridicalAddress, &o.TerBank)
		return o, idNotFound(err)
	})
}

func (s *IdentityStore) AddAccount(ctx context.Context, a banking.Account) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM banking_orgs WHERE id = $1`, a.OrgID).Scan(&one); err != nil {
			return fmt.Errorf("account org %s: %w", a.OrgID, idNotFound(err))
		}
		return insertAccount(ctx, tx, a, "")
	})
}

const accountCols = `number, org_id, bic, corr_account, currency, name, status, open_date, close_date`

func scanAccount(sc interface{ Scan(...any) error }) (banking.Account, error) {
	var a banking.Account
	err := sc.Scan(&a.Number, &a.OrgID, &a.BIC, &a.CorrAccount, &a.Currency, &a.Name, &a.Status, &a.OpenDate, &a.CloseDate)
	return a, err
}

func (s *IdentityStore) GetAccount(ctx context.Context, number string) (banking.Account, error) {
	return s.caches.accounts.get(number, func() (banking.Account, error) { // token_cache.go
		a, err := scanAccount(s.db.QueryRowContext(ctx, `SELECT `+accountCols+` FROM banking_accounts WHERE number = $1`, number))
		return a, idNotFound(err)
	})
}

func (s *IdentityStore) ListAccounts(ctx context.Context, orgID string) ([]banking.Account, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+accountCols+` FROM banking_accounts WHERE org_id = $1 ORDER BY number`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []banking.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (s *IdentityStore) CreateUser(ctx context.Context, u banking.User) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM banking_orgs WHERE id = $1`, u.OrgID).Scan(&one); err != nil {
			return fmt.Errorf("user org %s: %w", u.OrgID, idNotFound(err))
		}
		return insertUser(ctx, tx, u, "")
	})
}

const userCols = `id, org_id, login, name, email, password_hash, signing_method, phone, executive`

func scanUser(sc interface{ Scan(...any) error }) (banking.User, error) {
	var u banking.User
	var executive int
	err := sc.Scan(&u.ID, &u.OrgID, &u.Login, &u.Name, &u.Email, &u.PasswordHash, &u.SigningMethod, &u.Phone, &executive)
	u.Executive = executive != 0
	return u, err
}

func (s *IdentityStore) getUser(ctx context.Context, where string, arg string) (banking.User, error) {
	u, err := scanUser(s.db.R.QueryRowContext(ctx, `SELECT `+userCols+` FROM banking_users WHERE `+where+` = $1`, arg))
	return u, idNotFound(err)
}

func (s *IdentityStore) GetUser(ctx context.Context, id string) (banking.User, error) {
	return s.getUser(ctx, "id", id)
}

func (s *IdentityStore) GetUserByLogin(ctx context.Context, login string) (banking.User, error) {
	return s.getUser(ctx, "login", login)
}

func (s *IdentityStore) ListUsers(ctx context.Context, orgID string) ([]banking.User, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+userCols+` FROM banking_users WHERE org_id = $1 ORDER BY login`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []banking.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

func (s *IdentityStore) SetUserSigningMethod(ctx context.Context, id, method string) error {
	res, err := s.db.W.ExecContext(ctx, `UPDATE banking_users SET signing_method = $1 WHERE id = $2`, method, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return banking.ErrNotFound
	}
	return nil
}

func (s *IdentityStore) CreateApp(ctx context.Context, a banking.PartnerApp) error {
	return insertApp(ctx, s.db.W, a, "")
}

func (s *IdentityStore) GetApp(ctx context.Context, clientID string) (banking.PartnerApp, error) {
	var a banking.PartnerApp
	var uris, scopes string
	var exp int64
	err := s.db.R.QueryRowContext(ctx, `SELECT client_id, name, secret_hash, redirect_uris, secret_expires_at, scopes FROM banking_apps WHERE client_id = $1`, clientID).
		Scan(&a.ClientID, &a.Name, &a.SecretHash, &uris, &exp, &scopes)
	a.RedirectURIs, a.SecretExpiresAt, a.Scopes = strings.Fields(uris), idFromNanos(exp), banking.ParseScopes(scopes)
	return a, idNotFound(err)
}

func (s *IdentityStore) SetAppScopes(ctx context.Context, clientID string, scopes []string) error {
	res, err := s.db.W.ExecContext(ctx, `UPDATE banking_apps SET scopes = $2 WHERE client_id = $1`, clientID, strings.Join(scopes, " "))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return banking.ErrNotFound
	}
	return nil
}

func (s *IdentityStore) SetAppSecret(ctx context.Context, clientID, secretHash string, expiresAt time.Time) error {
	res, err := s.db.W.ExecContext(ctx, `UPDATE banking_apps SET secret_hash = $2, secret_expires_at = $3 WHERE client_id = $1`, clientID, secretHash, idNanos(expiresAt))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return banking.ErrNotFound
	}
	return nil
}

func (s *IdentityStore) ChangeAppSecret(ctx context.Context, clientID, oldHash, newHash string, expiresAt time.Time) error {
	// The old hash in the WHERE makes the check and the write one
	// statement, which both engines run atomically.
	res, err := s.db.W.ExecContext(ctx, `UPDATE banking_apps SET secret_hash = $3, secret_expires_at = $4 WHERE client_id = $1 AND secret_hash = $2`,
		clientID, oldHash, newHash, idNanos(expiresAt))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return banking.ErrNotFound
	}
	return nil
}

func (s *IdentityStore) SignOffer(ctx context.Context, clientID, account string) error {
	err := insertOffer(ctx, s.db.W, clientID, account, idIgnoreDup)
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "foreign key") {
		return fmt.Errorf("offer %s/%s: %w", clientID, account, banking.ErrNotFound)
	}
	return err
}

func (s *IdentityStore) OfferSigned(ctx context.Context, clientID, account string) (bool, error) {
	var one int
	err := s.db.R.QueryRowContext(ctx, `SELECT 1 FROM banking_offers WHERE client_id = $1 AND account_number = $2`, clientID, account).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (s *IdentityStore) AddCertificate(ctx context.Context, c banking.Certificate) error {
	// Forgotten once committed, so no read before it is cached past it.
	defer forgetCertificate(s.db, strings.ToLower(c.UUID))
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		var org string
		if err := tx.QueryRowContext(ctx, `SELECT org_id FROM banking_users WHERE id = $1`, c.UserID).Scan(&org); err != nil {
			return fmt.Errorf("certificate user %s: %w", c.UserID, idNotFound(err))
		}
		c.OrgID = org
		return insertCert(ctx, tx, c, "")
	})
}

const certCols = `uuid, user_id, org_id, der, issuer, serial, type_name, role, active`

func scanCert(sc interface{ Scan(...any) error }) (banking.Certificate, error) {
	var c banking.Certificate
	var active int
	var role string
	err := sc.Scan(&c.UUID, &c.UserID, &c.OrgID, &c.DER, &c.Issuer, &c.Serial, &c.TypeName, &role, &active)
	c.Active, c.Role = active != 0, banking.SignatureRole(role)
	return c, err
}

// GetCertificate reads a certificate through the database's read cache
// (token_cache.go). A cached row is shared: its DER is never written.
//
// The uuid is matched whatever its case: it is looked up in lower case, the
// form rows are written in (insertCert), and only on a miss compared
// case-insensitively, for a row written in another case before uuids were
// folded. A miss is an unknown certificate, rare and refused, so the scan
// it costs stays off the signing path.
func (s *IdentityStore) GetCertificate(ctx context.Context, uuid string) (banking.Certificate, error) {
	key := strings.ToLower(uuid)
	return s.caches.certs.get(key, func() (banking.Certificate, error) {
		c, err := scanCert(s.db.QueryRowContext(ctx, `SELECT `+certCols+` FROM banking_certs WHERE uuid = $1`, key))
		if errors.Is(err, sql.ErrNoRows) {
			c, err = scanCert(s.db.QueryRowContext(ctx, `SELECT `+certCols+` FROM banking_certs WHERE lower(uuid) = $1`, key))
		}
		return c, idNotFound(err)
	})
}

func (s *IdentityStore) ListCertificates(ctx context.Context, userID string) ([]banking.Certificate, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+certCols+` FROM banking_certs WHERE user_id = $1 ORDER BY uuid`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []banking.Certificate
	for rows.Next() {
		c, err := scanCert(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (s *IdentityStore) SaveTokens(ctx context.Context, ts ...banking.Token) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, t := range ts {
			if err := insertToken(ctx, tx, t); err != nil {
				return err
			}
		}
		return nil
	})
}

func getToken(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, hash string) (banking.Token, error) {
	var t banking.Token
	var scopes string
	var exp, rev, res int64
	err := q.QueryRowContext(ctx, `SELECT hash, kind, client_id, org_id, user_id, scopes, expires_at, revoked_at, reserve_until, chain FROM banking_tokens WHERE hash = $1`, hash).
		Scan(&t.Hash, &t.Kind, &t.ClientID, &t.OrgID, &t.UserID, &scopes, &exp, &rev, &res, &t.Chain)
	if err != nil {
		return banking.Token{}, idNotFound(err)
	}
	t.Scopes = strings.Fields(scopes)
	t.ExpiresAt, t.RevokedAt, t.ReserveUntil = idFromNanos(exp), idFromNanos(rev), idFromNanos(res)
	return t, nil
}

func (s *IdentityStore) GetToken(ctx context.Context, hash string) (banking.Token, error) {
	return s.caches.tokens.get(hash, func() (banking.Token, error) { return getToken(ctx, s.db, hash) }) // token_cache.go
}

func (s *IdentityStore) RevokeToken(ctx context.Context, hash string, now time.Time) error {
	res, err := s.db.W.ExecContext(ctx, `UPDATE banking_tokens SET revoked_at = $2 WHERE hash = $1 AND revoked_at = 0`, hash, idNanos(now))
	forgetToken(s.db, hash)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return banking.ErrNotFound
	}
	return nil
}

func (s *IdentityStore) RotateRefresh(ctx context.Context, old string, now, reserveUntil time.Time, newTokens ...banking.Token) (banking.Token, error) {
	var t banking.Token
	var superseded []string
	defer func() {
		// Forgotten once committed (or rolled back), so no read before the
		// change is cached past it.
		forgetToken(s.db, old)
		for _, h := range superseded {
			forgetToken(s.db, h)
		}
	}()
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		t, err = getToken(ctx, tx, old)
		if err != nil {
			return err
		}
		chain := tokenChain(t)
		if s.db.Dialect == sqldb.Postgres {
			// Two rotations of one chain at once (a client retrying with the
			// reserve while its first try still runs, or using the reserve and
			// the newest token together) would each revoke the tokens the other
			// has not committed yet and both leave a live token. The lock
			// serialises them; the token is read again under it, since the
			// other rotation may have revoked it.
			if err := lockChain(ctx, tx, s.db.Dialect, chain); err != nil {
				return err
			}
			if t, err = getToken(ctx, tx, old); err != nil {
				return err
			}
		}
		n := idNanos(now)
		if t.Kind != banking.TokenRefresh || !t.RevokedAt.IsZero() || idNanos(t.ExpiresAt) <= n ||
			(!t.ReserveUntil.IsZero() && idNanos(t.ReserveUntil) <= n) {
			return banking.ErrNotFound
		}
		if t.ReserveUntil.IsZero() {
			// Only the first use starts the reserve: retrying with the old
			// token must not extend its life.
			if _, err := tx.ExecContext(ctx, `UPDATE banking_tokens SET reserve_until = $2 WHERE hash = $1 AND reserve_until = 0`, old, idNanos(reserveUntil)); err != nil {
				return err
			}
			t.ReserveUntil = reserveUntil
		}
		// The chain keeps the token just used, as its reserve, and the pair
		// made now: the newest token a retry with the reserve replaces, and
		// the reserve before it, both stop refreshing here.
		if superseded, err = updatedHashes(ctx, tx, `UPDATE banking_tokens SET revoked_at = $3 WHERE chain = $1 AND kind = 'refresh' AND hash <> $2 AND revoked_at = 0 RETURNING hash`, chain, old, n); err != nil {
			return err
		}
		for _, nt := range newTokens {
			nt.Chain = chain
			if err := insertToken(ctx, tx, nt); err != nil {
				return err
			}
		}
		return nil
	})
	return t, err
}

func (s *IdentityStore) SaveCode(ctx context.Context, c banking.AuthCode) error {
	_, err := s.db.W.ExecContext(ctx, `INSERT INTO banking_auth_codes (hash, client_id, org_id, user_id, redirect_uri, scopes, challenge, nonce, expires_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
		c.Hash, c.ClientID, c.OrgID, c.UserID, c.RedirectURI, strings.Join(c.Scopes, " "), c.Challenge, c.Nonce, idNanos(c.ExpiresAt))
	return idInsertErr("code", err)
}

func (s *IdentityStore) ConsumeCode(ctx context.Context, hash string, now time.Time) (banking.AuthCode, error) {
	return s.RedeemCode(ctx, hash, now, func(banking.AuthCode) ([]banking.Token, error) { return nil, nil })
}

// RedeemCode deletes the code and inserts the tokens issue makes of it in
// one transaction. DELETE … RETURNING makes the single use atomic: two
// concurrent redemptions cannot both get the row (on PostgreSQL the second
// waits for the first's commit and then finds nothing to delete). A token
// insert that fails rolls the delete back with it, so the code outlives a
// failed exchange; an expired code, or one issue refuses, is deleted and
// the refusal committed.
func (s *IdentityStore) RedeemCode(ctx context.Context, hash string, now time.Time, issue func(banking.AuthCode) ([]banking.Token, error)) (banking.AuthCode, error) {
	var c banking.AuthCode
	var refused error
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var scopes string
		var exp int64
		err := tx.QueryRowContext(ctx, `DELETE FROM banking_auth_codes WHERE hash = $1 RETURNING hash, client_id, org_id, user_id, redirect_uri, scopes, challenge, nonce, expires_at`, hash).
			Scan(&c.Hash, &c.ClientID, &c.OrgID, &c.UserID, &c.RedirectURI, &scopes, &c.Challenge, &c.Nonce, &exp)
		if err != nil {
			return idNotFound(err)
		}
		c.Scopes, c.ExpiresAt = strings.Fields(scopes), idFromNanos(exp)
		if !now.Before(c.ExpiresAt) {
			refused = banking.ErrNotFound
			return nil
		}
		toks, err := issue(c)
		if err != nil {
			refused = err
			return nil
		}
		for _, t := range toks {
			if err := insertToken(ctx, tx, t); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = refused
	}
	if err != nil {
		return banking.AuthCode{}, err
	}
	return c, nil
}

func (s *IdentityStore) PurgeExpired(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		b := idNanos(before)
		res, err := tx.ExecContext(ctx, `DELETE FROM banking_tokens WHERE expires_at <= $1
			OR (revoked_at > 0 AND revoked_at <= $1) OR (reserve_until > 0 AND reserve_until <= $1)`, b)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		res, err = tx.ExecContext(ctx, `DELETE FROM banking_auth_codes WHERE expires_at <= $1`, b)
		if err != nil {
			return err
		}
		m, _ := res.RowsAffected()
		n += m
		return nil
	})
	return n, err
}

func (s *IdentityStore) Seed(ctx context.Context, d banking.SeedData) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, o := range d.Orgs {
			if err := insertOrg(ctx, tx, o, idIgnoreDup); err != nil {
				return err
			}
		}
		for _, a := range d.Accts {
			if err := insertAccount(ctx, tx, a, idIgnoreDup); err != nil {
				return err
			}
		}
		for _, u := range d.Users {
			if err := insertUser(ctx, tx, u, idIgnoreDup); err != nil {
				return err
			}
		}
		for _, a := range d.Apps {
			if err := insertApp(ctx, tx, a, idIgnoreDup); err != nil {
				return err
			}
		}
		for _, o := range d.Offers {
			if err := insertOffer(ctx, tx, o[0], o[1], idIgnoreDup); err != nil {
				return err
			}
		}
		for _, c := range d.Certs {
			if err := insertCert(ctx, tx, c, idIgnoreDup); err != nil {
				return err
			}
		}
		return nil
	})
}
