package homemqtt

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestRememberKeepsTheAgentsHeardBounded: with unregistered names served,
// every name published under the root is heard, and each recorded for the
// next leader; the list is cut back to the maxResumed most recent, all a
// next leader reads, so it does not keep a row for every name ever heard.
func TestRememberKeepsTheAgentsHeardBounded(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		store := homesql.New(db)
		r := &Replica{cfg: ReplicaConfig{Store: store, Gate: Config{Root: "r"}},
			log: slog.New(slog.NewTextHandler(io.Discard, nil)), tick: 5 * time.Second}
		const heard = 2*maxResumed + 7
		for i := range heard {
			r.remember(fmt.Sprintf("agent-%05d", i))
		}
		end := time.Now().Unix()
		var rows int
		if err := db.R.QueryRowContext(context.Background(), `SELECT count(*) FROM home_mqtt_agents WHERE root = 'r'`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows > maxResumed+7 {
			t.Fatalf("%d agents heard, %d rows kept; want at most %d", heard, rows, maxResumed+7)
		}
		// What is kept is what a next leader reads: the most recently heard
		// (by the second, names breaking ties), the last name among them.
		names, err := store.GateAgents(context.Background(), "r", maxResumed)
		if err != nil || len(names) != maxResumed {
			t.Fatalf("a next leader reads %d names (%v), want %d", len(names), err, maxResumed)
		}
		// seen_at is in seconds and ties go by name, so the one heard last
		// may lose to its second's others; the newest second must stay.
		var newest int64
		if err := db.R.QueryRowContext(context.Background(), `SELECT max(seen_at) FROM home_mqtt_agents WHERE root = 'r'`).Scan(&newest); err != nil || newest < end-1 {
			t.Fatalf("newest agent heard kept at %d (%v), the last was heard at %d", newest, err, end)
		}
	})
}
