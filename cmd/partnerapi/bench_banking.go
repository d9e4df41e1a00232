package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/postgres"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/sqlite"
	"partnerapi/internal/web"
)

func init() { benchmarks["banking"] = benchBanking }

// benchBanking is `partnerapi bench banking`: payment creation (validation,
// digest, sandbox signature policy, a group-committed write of the document,
// its history and outbox row, fsynced before the 201) and state reads through
// the full stack over loopback, on SQLite and, with --database-url, on
// PostgreSQL, and the same request shapes against a bare net/http handler in
// the same run. Scenarios are cut into rounds that alternate between the
// targets, so a noisy neighbour on the machine slows all of them alike and
// the ratios stay fair. After the load, every document that was answered 201
// is looked up in a freshly opened store. The rate limit is off for the run.
// The create-signed scenario (bench_banking_signed.go) loads a second pair of
// full stacks in the production contour with real GOST signatures.
func benchBanking(ctx context.Context, args []string, getenv func(string) string, sio stdio) error {
	fs := flag.NewFlagSet("bench banking", flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	connList := fs.String("connections", "8,64,256", "comma-separated numbers of concurrent keep-alive connections, one run each")
	dur := fs.Duration("duration", 3*time.Second, "how long each scenario is loaded in all (split into --rounds)")
	rounds := fs.Int("rounds", 3, "slices each scenario is cut into, alternating between the targets")
	memprof := fs.String("memprofile", "", "write the run's allocations (pprof allocs profile, every allocation sampled as the runtime's default rate does) to this file when it ends")
	cpuprof := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (pprof label side: bare, sqlite, postgres, signed-sqlite, signed-postgres, floor-sqlite, floor-postgres, load; -tagfocus takes a regexp, so anchor it: side=^sqlite$ leaves floor-sqlite out)")
	scenarioList := fs.String("scenarios", "create,state", "comma-separated scenarios to run: create, state, create-signed "+
		"(create in the production contour, each document with a real GOST R 34.10-2012 signature by the user's sole-authority certificate, "+
		"verified by the server; the documents are signed between the timed slices; the durable floors run with create only)")
	var gcPercent string
	registerGCFlag(fs, &gcPercent) // as serve sets it for a banking-only process
	commitDelay := fs.Duration("banking-commit-delay", defaultCommitDelay, "the servers' --banking-commit-delay")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if err := applyGCPercent(gcPercent, false, getenv); err != nil {
		return err
	}
	conns, err := parseConnections(*connList)
	if err != nil {
		return err
	}
	if *dur <= 0 || *rounds < 1 {
		return errors.New("--duration must be > 0 and --rounds ≥ 1")
	}
	scenarios, err := parseScenarios(*scenarioList)
	if err != nil {
		return err
	}
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *memprof != "" {
		// Deferred first, so it runs last: the whole run, shutdown included.
		defer writeAllocsProfile(*memprof, sio)
	}
	dataDir := store.DataDir
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "data-dir" })
	if !explicit {
		tmp, err := os.MkdirTemp("", "partnerapi-bench-banking-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dataDir = tmp
	}

	// The sandbox stacks serve create and state; a run of create-signed
	// alone starts only its own production-contour stacks.
	var targets []*bankTarget
	sandbox := slices.Contains(scenarios, "create") || slices.Contains(scenarios, "state")
	if sandbox {
		targets = append(targets, &bankTarget{name: "sqlite", open: func(ctx context.Context) (*sqldb.DB, error) { return sqlite.Open(ctx, dataDir) }})
	}
	var pgURL string
	if store.DatabaseURL != "" && sandbox {
		u, drop, err := benchSchema(ctx, store.DatabaseURL)
		if err != nil {
			return err
		}
		defer drop()
		pgURL = u
		targets = append(targets, &bankTarget{name: "postgres", open: func(ctx context.Context) (*sqldb.DB, error) { return postgres.Open(ctx, pgURL) }})
	}
	for _, t := range targets {
		t.commitDelay = *commitDelay
		if err := t.start(ctx); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		defer t.stop()
	}
	// The durable floors (bench_banking_floor.go) run beside the create
	// scenario only.
	var floors []*floorTarget
	if slices.Contains(scenarios, "create") {
		dir, removeDir, err := floorDir()
		if err != nil {
			return err
		}
		defer removeDir()
		floors = newFloorTargets(dir, pgURL)
		for _, f := range floors {
			if err := f.start(ctx, *commitDelay); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			defer f.stop()
		}
	}
	var seq atomic.Int64
	run := time.Now().UnixNano() & 0xffffffffffff
	newID := func() string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", seq.Add(1), run) }
	date := time.Now().UTC().Format(time.DateOnly)
	// Every full stack the run loads: the sandbox ones of create and state,
	// then the production-contour ones of create-signed.
	all := targets
	var signed *signedScenario
	if slices.Contains(scenarios, scenarioCreateSigned) {
		if signed, err = startSignedScenario(ctx, dataDir, store.DatabaseURL, *commitDelay, newID, date); err != nil {
			return err
		}
		defer signed.stop()
		all = append(slices.Clone(targets), signed.targets...)
	}
	bareURL, stopBare, err := serveLoopbackLabelled(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"bankStatus":"IMPLEMENTED"}`))
	}), "bare")
	if err != nil {
		return err
	}
	defer stopBare()

	fmt.Fprintf(sio.out, "bench banking: POST /v1/payments (sole signature → IMPLEMENTED, fsynced before 201) and GET …/state;\n")
	if signed != nil {
		fmt.Fprintf(sio.out, "  create-signed = the create in the production contour with a real GOST R 34.10-2012 CMS signature verified\n  per document (signed by the bench between the timed slices; no floor rows)\n")
	}
	fmt.Fprintf(sio.out, "  %s per scenario in %d interleaved rounds; ratio = full stack ÷ bare net/http handler in the same run,\n  both driven by a raw keep-alive client (net/http's client would cost more CPU than the servers);\n  floor = the bare handler plus the same group-committed, fsynced insert of the request body (durability alone);\n  ÷floor = full stack ÷ the floor on the same database\n", *dur, *rounds)
	fmt.Fprintf(sio.out, "  cpu/req = the whole machine's busy CPU (all cores: server, load generator, PostgreSQL, kernel) per answered\n  request; idle = the cores' idle share (waiting for the disk included) while the row's load ran\n")
	fmt.Fprintf(sio.out, "%6s %-22s %9s %9s %10s %10s %6s %6s %11s %9s %5s %7s\n", "conns", "scenario", "requests", "req/s", "p50", "p99", "errors", "ratio", "docs/commit", "cpu/req", "idle", "÷floor")
	slice := *dur / time.Duration(*rounds)
	// The load generator's goroutines inherit this label; the servers'
	// connections (and the committers they start) carry their own side.
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("side", "load")))
	for _, n := range conns {
		// Raw keep-alive clients, one per server: net/http's client costs
		// more CPU per request than the servers measured here and would take
		// it from them on a small machine.
		bare := newRawClient(bareURL, "/fintech/api/v1/payments/x/state", nil, n)
		for _, t := range all {
			t.client = newRawClient(t.url, "/fintech/api/v1/payments/"+t.stateID+"/state", http.Header{"Authorization": {"Bearer " + t.token}}, n)
		}
		for _, f := range floors {
			f.client = newRawClient(f.url, "/", nil, n)
		}
		for _, op := range scenarios {
			targets := targets // create-signed loads its own production-contour stacks
			if op == scenarioCreateSigned {
				targets = signed.targets
			}
			bareRes := loadResult{}
			res := make([]loadResult, len(targets))
			floorRes := make([]loadResult, len(floors))
			floorBefore := make([]sqldb.GroupStats, len(floors))
			for i, f := range floors {
				floorBefore[i] = f.db.GroupCommitStats()
			}
			before := make([]sqldb.GroupStats, len(targets))
			for i, t := range targets {
				before[i] = t.db.GroupCommitStats()
			}
			for range *rounds {
				mergeLoad(&bareRes, runLoad(ctx, n, slice, func() error {
					switch op {
					case "create":
						return rawExpect(bare, rawPost(bare, "/fintech/api/v1/payments", "", banking.SandboxPaymentJSON(newID(), date)), 201)
					case scenarioCreateSigned:
						return rawExpect(bare, rawPost(bare, "/fintech/api/v1/payments", "", signed.sampleBody), 201)
					}
					return rawExpect(bare, nil, 201)
				}))
				for i, t := range targets {
					mergeLoad(&res[i], t.load(ctx, op, n, slice, newID, date))
				}
				if op == "create" {
					for i, f := range floors {
						mergeLoad(&floorRes[i], runLoad(ctx, n, slice, func() error {
							return rawExpect(f.client, rawPost(f.client, "/", "", banking.SandboxPaymentJSON(newID(), date)), 201)
						}))
					}
				}
			}
			printBankRow(sio.out, n, op+" bare", bareRes, 0, "", 0)
			if op == "create" {
				for i, f := range floors {
					printBankRow(sio.out, n, "create "+f.name, floorRes[i], floorRes[i].rps()/bareRes.rps(), perCommit(floorBefore[i], f.db.GroupCommitStats()), 0)
					if floorRes[i].firstErr != nil {
						fmt.Fprintf(sio.out, "       first error: %v\n", floorRes[i].firstErr)
					}
				}
			}
			for i, t := range targets {
				batch := ""
				if op != "state" {
					batch = perCommit(before[i], t.db.GroupCommitStats())
				}
				// A create beside the durable floor of its own database
				// also gets its ratio to that floor: what the API costs over
				// durability alone on this machine.
				ofFloor := 0.0
				for j, f := range floors {
					if op == "create" && f.name == "floor-"+t.name && floorRes[j].rps() > 0 {
						ofFloor = res[i].rps() / floorRes[j].rps()
					}
				}
				printBankRow(sio.out, n, op+" "+t.name, res[i], res[i].rps()/bareRes.rps(), batch, ofFloor)
				if res[i].firstErr != nil {
					fmt.Fprintf(sio.out, "       first error: %v\n", res[i].firstErr)
				}
			}
		}
		bare.close()
		for _, t := range all {
			t.client.close()
		}
		for _, f := range floors {
			f.client.close()
		}
	}
	var failed error
	for _, t := range all {
		t.stop()
		name := t.name
		if t.signed != nil {
			name = scenarioCreateSigned + " " + t.name
		}
		found, err := t.verify(ctx)
		if err != nil {
			return fmt.Errorf("%s: verify: %w", name, err)
		}
		acked := len(t.acked)
		fmt.Fprintf(sio.out, "durability %s: %d documents answered 201, %d of them found in the reopened store", name, acked, found)
		if found == acked {
			fmt.Fprintln(sio.out, " — all acknowledged documents are stored")
		} else {
			fmt.Fprintf(sio.out, " — %d MISSING\n", acked-found)
			failed = errors.Join(failed, fmt.Errorf("%s: %d acknowledged documents missing", name, acked-found))
		}
	}
	for _, f := range floors {
		f.stop()
		found, err := f.verify(ctx)
		if err != nil {
			return fmt.Errorf("%s: verify: %w", f.name, err)
		}
		acked := f.acked.Load()
		fmt.Fprintf(sio.out, "durability %s: %d rows answered 201, %d rows in the reopened store\n", f.name, acked, found)
		if found < acked {
			failed = errors.Join(failed, fmt.Errorf("%s: %d acknowledged rows missing", f.name, acked-found))
		}
	}
	return failed
}

// bankTarget is one full stack under load: its store, its listener, its
// token (the sandbox's, or with signed the bench's own production-contour
// user's) and the externalIds it acknowledged.
type bankTarget struct {
	name        string
	commitDelay time.Duration
	open        func(context.Context) (*sqldb.DB, error)
	db          *sqldb.DB
	url         string
	token       string
	stateID     string
	stopped     bool
	halt        func()
	client      *rawClient  // the load generator's connections to url
	orgID       string      // the organisation the token acts for
	signed      *signedFeed // create-signed's target (bench_banking_signed.go); nil: the sandbox's

	mu    sync.Mutex
	acked []string
}

func (t *bankTarget) start(ctx context.Context) error {
	db, err := t.open(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	t.db = db
	mod := &bankingModule{}
	mod.registerFlags(flag.NewFlagSet("defaults", flag.ContinueOnError))
	mod.payments.rate = 0
	mod.payments.commitDelay = t.commitDelay
	if t.signed != nil {
		mod.contour = banking.ContourProduction
	}
	if err := mod.migrate(ctx, db); err != nil {
		return err
	}
	log := slog.New(web.NewTextHandler(io.Discard, nil)) // as serve's text logs
	metrics := web.NewMetrics(version)
	b, err := mod.build(ctx, deps{db: db, log: log, metrics: metrics})
	if err != nil {
		return err
	}
	var tok banking.TokenPair
	label := t.name
	t.orgID = banking.SandboxOrgID
	if t.signed != nil {
		// The production contour has no sandbox seed: the bench registers
		// its own organisation, user and certificate.
		t.orgID, label = signedBenchOrgID, "signed-"+t.name
		tok, err = t.signed.signer.provision(ctx, db)
	} else {
		tok, err = banking.NewIdentity(bankingsql.NewIdentityStore(db)).IssueTokens(ctx, banking.SandboxClientID,
			banking.SandboxOrgID, banking.SandboxUserID, []string{banking.ScopePayDocRU})
	}
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	t.token = tok.AccessToken
	base, stop, err := serveLoopbackLabelled(b.api.Build(log, metrics), label)
	if err != nil {
		return err
	}
	t.url, t.halt = base, stop
	if t.signed != nil {
		return t.signed.checkCreate(ctx, t)
	}
	// The document whose state the state scenario reads.
	t.stateID = fmt.Sprintf("5ea7e000-0000-4000-8000-%012x", time.Now().UnixNano()&0xffffffffffff)
	if _, err := benchDo(ctx, http.DefaultClient, "POST", t.url+"/fintech/api/v1/payments", t.token,
		benchPaymentBody(t.stateID), 201); err != nil {
		return fmt.Errorf("warm-up create: %w", err)
	}
	t.acked = append(t.acked, t.stateID)
	return nil
}

// stop closes the listener and the store (idempotent), so verify reads what
// reached the disk, not what a connection still caches.
func (t *bankTarget) stop() {
	if t.stopped {
		return
	}
	t.stopped = true
	t.halt()
	_ = t.db.Close()
}

// call runs one request of scenario op; a created document's externalId is
// remembered for the durability check once it was answered 201.
func (t *bankTarget) call(op string, newID func() string, date string) error {
	if op != "create" {
		return rawExpect(t.client, nil, 200)
	}
	id := newID()
	if err := rawExpect(t.client, rawPost(t.client, "/fintech/api/v1/payments", t.token, banking.SandboxPaymentJSON(id, date)), 201); err != nil {
		return err
	}
	t.mu.Lock()
	t.acked = append(t.acked, id)
	t.mu.Unlock()
	return nil
}

// rawPost prepares a POST of a JSON body for c's server.
func rawPost(c *rawClient, path, token string, body []byte) []byte {
	b := make([]byte, 0, 192+len(token)+len(body))
	b = append(b, "POST "...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.addr...)
	if token != "" {
		b = append(b, "\r\nAuthorization: Bearer "...)
		b = append(b, token...)
	}
	b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}

// rawExpect sends req (nil: c's prepared GET) and wants the status want.
func rawExpect(c *rawClient, req []byte, want int) error {
	var status int
	var err error
	if req == nil {
		status, _, err = c.get()
	} else {
		status, _, err = c.send(req)
	}
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("status %d", status)
	}
	return nil
}

// verify reopens the store and counts how many acknowledged externalIds it
// holds for the target's organisation.
func (t *bankTarget) verify(ctx context.Context) (int, error) {
	db, err := t.open(ctx)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rows, err := db.R.QueryContext(ctx, `SELECT external_id FROM banking_payments WHERE org_id = $1`, t.orgID)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	stored := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		stored[id] = true
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	found := 0
	for _, id := range t.acked {
		if stored[id] {
			found++
		}
	}
	return found, nil
}

// benchSchema makes a fresh schema in the PostgreSQL database for the run
// and returns a URL that uses it and a func dropping it afterwards.
func benchSchema(ctx context.Context, base string) (string, func(), error) {
	if !strings.HasPrefix(base, "postgres://") && !strings.HasPrefix(base, "postgresql://") {
		return "", nil, fmt.Errorf("--database-url must start with postgres://, got %q", redactURL(base))
	}
	admin, err := postgres.Open(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("database %s: %w", redactURL(base), err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "bench_" + hex.EncodeToString(b[:])
	if _, err := admin.W.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, err
	}
	drop := func() {
		_, _ = admin.W.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

func benchDo(ctx context.Context, client *http.Client, method, url, token string, body []byte, want int) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return resp.StatusCode, fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// benchPaymentBody is a valid payment order signed by the sandbox's
// sole-authority certificate, so the full stack runs it to IMPLEMENTED
// (the document row with its walk time, and a webhook outbox row).
func benchPaymentBody(id string) []byte {
	return banking.SandboxPaymentJSON(id, time.Now().UTC().Format(time.DateOnly))
}

// writeAllocsProfile writes the allocations made so far to path; a failure
// is reported and does not fail the run, whose figures are already out.
func writeAllocsProfile(path string, sio stdio) {
	f, err := os.Create(path)
	if err == nil {
		err = errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
	}
	if err != nil {
		fmt.Fprintf(sio.err, "bench banking: memprofile: %v\n", err)
	}
}
