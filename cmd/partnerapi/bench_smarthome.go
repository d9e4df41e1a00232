package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/web"
)

func init() { benchmarks["smarthome"] = benchSmarthome }

// benchSmarthome is `partnerapi bench smarthome`: catalog reads over
// loopback through the full handler stack (platform middleware, Basic auth
// against the store, version check, cached body) and, in the same run,
// through a bare net/http handler that writes the same bytes, so the ratio
// shows what the stack costs.
func benchSmarthome(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	fs := flag.NewFlagSet("bench smarthome", flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	conns := fs.Int("connections", 8, "concurrent keep-alive connections")
	dur := fs.String("duration", "3s", "how long each side is loaded")
	path := fs.String("path", "/v1/mqtt-gate/categories/light/features", "catalog path to read")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	d, err := durationFlag("duration", *dur)
	if err != nil {
		return err
	}
	if *conns < 1 {
		return errors.New("--connections must be at least 1")
	}
	// Without an explicit store the run uses a throw-away SQLite database.
	if store.DatabaseURL == "" && !shFlagSet(fs, "data-dir") {
		tmp, err := os.MkdirTemp("", "partnerapi-bench-")
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
	mod := &smarthomeModule{}
	if err := mod.migrate(ctx, db); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: slog.LevelError}))
	metrics := web.NewMetrics(version)
	b, err := mod.build(ctx, deps{db: db, log: log, metrics: metrics, dataDir: store.DataDir})
	if err != nil {
		return err
	}
	svc := smarthome.NewService(homesql.New(db))
	login := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	pw, err := svc.CreateCredential(ctx, smarthome.KindAgent, login)
	if err != nil {
		return err
	}
	full, stopFull, err := serveLoopback(b.api.Build(log, metrics))
	if err != nil {
		return err
	}
	defer stopFull()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}}
	body, status, err := shFetch(ctx, client, full+*path, login, pw)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", *path, status, body)
	}
	bare, stopBare, err := serveLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(body)
	}))
	if err != nil {
		return err
	}
	defer stopBare()

	fmt.Fprintf(io.out, "smarthome catalog read %s: %d connections, %s per side, %d-byte body\n", *path, *conns, d, len(body))
	rf, err := shLoad(ctx, client, full+*path, login, pw, *conns, d)
	if err != nil {
		return err
	}
	rb, err := shLoad(ctx, client, bare+*path, login, pw, *conns, d)
	if err != nil {
		return err
	}
	fmt.Fprintf(io.out, "%-12s %10s %10s %10s\n", "handler", "req/s", "p50", "p99")
	for _, r := range []struct {
		name string
		res  loadResult
	}{{"full stack", rf}, {"bare", rb}} {
		fmt.Fprintf(io.out, "%-12s %10.0f %10s %10s\n", r.name, r.res.rps(), r.res.pct(50), r.res.pct(99))
	}
	fmt.Fprintf(io.out, "full/bare throughput ratio: %.2f\n", rf.rps()/rb.rps())
	return nil
}

func shFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func shFetch(ctx context.Context, c *http.Client, url, user, pass string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.SetBasicAuth(user, pass)
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}

// shLoad runs conns workers against url for d; any non-200 answer fails
// the run, since a benchmark of errors measures nothing.
func shLoad(ctx context.Context, c *http.Client, url, user, pass string, conns int, d time.Duration) (loadResult, error) {
	res := runLoad(ctx, conns, d, func() error {
		_, status, err := shFetch(context.Background(), c, url, user, pass)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("status %d", status)
		}
		return err
	})
	if res.firstErr != nil {
		return res, res.firstErr
	}
	if res.ok == 0 {
		return res, errors.New("no requests completed")
	}
	return res, nil
}
