package homeapi

import (
	"context"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
)

// newTestService is the smart home service over a migrated SQLite store,
// its catalog loaded: what most tests of this package serve. Tests that
// restrict the catalog or wrap the store before Init build their own.
func newTestService(tb testing.TB) *smarthome.Service {
	tb.Helper()
	ctx := context.Background()
	db := storetest.SQLite(tb)
	if err := homesql.Migrate(ctx, db); err != nil {
		tb.Fatal(err)
	}
	svc := smarthome.NewService(homesql.New(db))
	if err := svc.Init(ctx); err != nil {
		tb.Fatal(err)
	}
	return svc
}
