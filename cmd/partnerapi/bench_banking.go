package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/web"
)

func init() { benchmarks["banking"] = benchBanking }

// benchBanking is `partnerapi bench banking`: payment creation (validation,
// digest, sandbox signature policy, one write transaction with history and
// outbox) and state reads through the full stack over loopback, and the same
// request shapes against a bare net/http handler, so the ratio shows what the
// stack and the store cost. The rate limit is off for the run.
func benchBanking(ctx context.Context, args []string, getenv func(string) string, sio stdio) error {
	fs := flag.NewFlagSet("bench banking", flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	conns := fs.Int("connections", 8, "concurrent keep-alive connections")
	dur := fs.Duration("duration", 3*time.Second, "how long each scenario is loaded")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if *conns < 1 || *dur <= 0 {
		return errors.New("--connections must be ≥ 1 and --duration > 0")
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "data-dir" })
	if store.DatabaseURL == "" && !explicit {
		tmp, err := os.MkdirTemp("", "partnerapi-bench-banking-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		store.DataDir = tmp
	}
	db, err := store.open(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer db.Close()
	mod := &bankingModule{}
	mod.registerFlags(flag.NewFlagSet("defaults", flag.ContinueOnError))
	mod.payments.rate = 0
	if err := mod.migrate(ctx, db); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := web.NewMetrics(version)
	b, err := mod.build(ctx, deps{db: db, log: log, metrics: metrics, dataDir: store.DataDir})
	if err != nil {
		return err
	}
	tok, err := banking.NewIdentity(bankingsql.NewIdentityStore(db)).IssueTokens(ctx, banking.SandboxClientID,
		banking.SandboxOrgID, banking.SandboxUserID, []string{banking.ScopePayDocRU})
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	full, stopFull, err := serveLoopback(b.api.Build(log, metrics))
	if err != nil {
		return err
	}
	defer stopFull()
	bare, stopBare, err := serveLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"bankStatus":"IMPLEMENTED"}`))
	}))
	if err != nil {
		return err
	}
	defer stopBare()

	run := fmt.Sprintf("%x", time.Now().UnixNano())
	var seq atomic.Int64
	newID := func() string {
		return fmt.Sprintf("%08x-0000-4000-8000-%012x", seq.Add(1), time.Now().UnixNano()&0xffffffffffff)
	}
	createBody := func(id string) []byte {
		return []byte(`{"externalId":"` + id + `","date":"` + time.Now().UTC().Format(time.DateOnly) + `","amount":1500.50,` +
			`"operationCode":"01","priority":"5","purpose":"Оплата по счёту, без НДС","payerName":"ООО Песочница",` +
			`"payerInn":"` + banking.SandboxOrgINN + `","payerAccount":"` + banking.SandboxAccount + `","payerBankBic":"` + banking.SandboxBIC +
			`","payerBankCorrAccount":"` + banking.SandboxCorrAccount + `","payeeName":"АО Лютик","payeeInn":"7830002293",` +
			`"payeeAccount":"40602810700000000025","payeeBankBic":"049805746","payeeBankCorrAccount":"30101810800000000746",` +
			`"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"` + banking.SandboxCertSole + `"}]}`)
	}
	stateID := newID()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns}}
	do := func(method, url string, body []byte, want int) error {
		req, _ := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	if err := do("POST", full+"/fintech/api/v1/payments", createBody(stateID), 201); err != nil {
		return fmt.Errorf("warm-up create: %w", err)
	}
	fmt.Fprintf(sio.out, "bench banking: %d connections, %s per scenario, store %s (run %s)\n", *conns, *dur, db.Dialect, run)
	fmt.Fprintf(sio.out, "%-22s %9s %10s %9s %9s %7s\n", "scenario", "requests", "req/s", "p50", "p99", "errors")
	type scenario struct {
		name string
		op   func() error
	}
	results := map[string]float64{}
	for _, sc := range []scenario{
		{"create (full stack)", func() error { return do("POST", full+"/fintech/api/v1/payments", createBody(newID()), 201) }},
		{"create (bare net/http)", func() error { return do("POST", bare+"/fintech/api/v1/payments", createBody(newID()), 201) }},
		{"state (full stack)", func() error { return do("GET", full+"/fintech/api/v1/payments/"+stateID+"/state", nil, 200) }},
		{"state (bare net/http)", func() error { return do("GET", bare+"/fintech/api/v1/payments/"+stateID+"/state", nil, 201) }},
	} {
		res := runLoad(ctx, *conns, *dur, sc.op)
		results[sc.name] = res.rps()
		fmt.Fprintf(sio.out, "%-22s %9d %10.0f %9s %9s %7d\n", sc.name, res.ok, res.rps(), res.pct(50), res.pct(99), res.errs)
	}
	fmt.Fprintf(sio.out, "full/bare throughput: create %.2f, state %.2f\n",
		results["create (full stack)"]/results["create (bare net/http)"], results["state (full stack)"]/results["state (bare net/http)"])
	return nil
}
