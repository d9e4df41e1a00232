package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/web"
)

// BenchmarkBankingHandler measures the CPU of one request through the full
// banking handler stack without the network, so the profile of a create or
// a state read is not drowned by the load generator.
func BenchmarkBankingHandler(b *testing.B) {
	ctx := context.Background()
	db := storetest.SQLite(b)
	mod := &bankingModule{}
	mod.registerFlags(flag.NewFlagSet("defaults", flag.ContinueOnError))
	mod.payments.rate = 0
	if err := mod.migrate(ctx, db); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := web.NewMetrics(version)
	built, err := mod.build(ctx, deps{db: db, log: log, metrics: metrics})
	if err != nil {
		b.Fatal(err)
	}
	h := built.api.Build(log, metrics)
	tok, err := banking.NewIdentity(bankingsql.NewIdentityStore(db)).IssueTokens(ctx, banking.SandboxClientID,
		banking.SandboxOrgID, banking.SandboxUserID, []string{banking.ScopePayDocRU})
	if err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	call := func(method, path, body string, want int) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	stateID := "5ea7e000-0000-4000-8000-000000000001"
	call("POST", "/fintech/api/v1/payments", string(benchPaymentBody(stateID)), 201)
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(32) // group commit needs concurrent callers
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call("POST", "/fintech/api/v1/payments", string(benchPaymentBody(fmt.Sprintf("%08x-0000-4000-8000-000000000002", seq.Add(1)))), 201)
			}
		})
	})
	b.Run("state", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call("GET", "/fintech/api/v1/payments/"+stateID+"/state", "", 200)
		}
	})
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"bankStatus":"IMPLEMENTED"}`))
		})
		for b.Loop() {
			req := httptest.NewRequest("GET", "/x", nil)
			bare.ServeHTTP(httptest.NewRecorder(), req)
		}
	})
}
