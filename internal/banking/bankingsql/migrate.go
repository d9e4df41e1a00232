package bankingsql

import (
	"context"
	"embed"
	"io/fs"

	"partnerapi/internal/sqldb"
)

//go:embed migrations/*/*.sql
var migrations embed.FS

// migrateArea applies one banking area's migrations as the domain
// banking_<area>, so the areas keep separate version sequences.
func migrateArea(ctx context.Context, db *sqldb.DB, area string) error {
	sub, err := fs.Sub(migrations, "migrations/"+area)
	if err != nil {
		return err
	}
	return db.Migrate(ctx, "banking_"+area, sub)
}

// MigrateIdentity applies the identity area's migrations.
func MigrateIdentity(ctx context.Context, db *sqldb.DB) error {
	return migrateArea(ctx, db, "identity")
}

// MigratePayments applies the payment area's migrations.
func MigratePayments(ctx context.Context, db *sqldb.DB) error {
	return migrateArea(ctx, db, "payments")
}

// MigrateCards applies the card area's migrations.
func MigrateCards(ctx context.Context, db *sqldb.DB) error { return migrateArea(ctx, db, "cards") }
