package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// The sandbox clock's offset is the shared one (the operator's) plus the
// organisation's own (migration 0002): an organisation's advance moves no
// other organisation, the shared one moves them all.
func TestCardClockPerOrganisation(t *testing.T) {
	storetest.Each(t, MigrateCards, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewCardStore(db)
		want := func(org string, d time.Duration) {
			t.Helper()
			if got, err := s.ClockOffset(ctx, org); err != nil || got != d {
				t.Fatalf("offset of %q: %v %v, want %v", org, got, err, d)
			}
		}
		want("a", 0)
		for range 2 {
			if err := s.AddOrgClockOffset(ctx, "a", 36*time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		want("a", 72*time.Hour)
		want("b", 0)
		want("", 0)
		if err := s.AddClockOffset(ctx, time.Hour); err != nil {
			t.Fatal(err)
		}
		want("a", 73*time.Hour)
		want("b", time.Hour)
		want("", time.Hour)
	})
}
