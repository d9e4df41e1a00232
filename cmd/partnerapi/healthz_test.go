package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
	"partnerapi/internal/web"
)

// Every API's /healthz is 200 while its store answers and 503 once it does
// not (README, Listeners), on SQLite and on PostgreSQL.
func TestHealthzFollowsTheStore(t *testing.T) {
	storetest.Each(t, nil, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		dir := t.TempDir()
		d := deps{db: db, log: discardLogger(), metrics: web.NewMetrics("test"), dataDir: dir, modelsDir: dir + "/models"}
		handlers := map[string]http.Handler{}
		for _, m := range modules() {
			if err := m.migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			b, err := m.build(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			if b.close != nil {
				defer b.close()
			}
			for _, s := range b.sidecars {
				ended, cancel := context.WithCancel(ctx)
				cancel()
				defer s.stop(ended) // never served: releases the gRPC port
			}
			handlers[m.name()] = b.api.Build(discardLogger(), nil)
		}
		status := func(name string) int {
			rec := httptest.NewRecorder()
			handlers[name].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			return rec.Code
		}
		for name := range handlers {
			if got := status(name); got != http.StatusOK {
				t.Errorf("%s: /healthz = %d while the store answers", name, got)
			}
		}
		db.Close()
		for name := range handlers {
			if got := status(name); got != http.StatusServiceUnavailable {
				t.Errorf("%s: /healthz = %d after the store closed", name, got)
			}
		}
	})
}

// Through serve on PostgreSQL: /healthz is 200, then 503 within its 3 s
// check once the database is gone (dropped under the running server), and
// the server still shuts down cleanly.
func TestServeHealthzWhenPostgresGoesAway(t *testing.T) {
	dbURL, drop := scratchPostgres(t, "health")
	cs := startControlledServer(t, t.TempDir(), "--only", "smarthome", "--database-url", dbURL, "--shutdown-timeout", "5s")
	health := func() int {
		resp, err := http.Get("http://" + cs.urls["smarthome"] + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := health(); got != http.StatusOK {
		t.Fatalf("/healthz = %d on a live database", got)
	}
	if err := drop(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if got := health(); got != http.StatusServiceUnavailable {
		t.Fatalf("/healthz = %d with the database dropped", got)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("/healthz took %s to answer", took)
	}
	cs.cancel()
	if err := <-cs.errc; err != nil {
		t.Errorf("serve: %v", err)
	}
	cs.errc <- nil
}
