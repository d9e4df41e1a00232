package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
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
	full, stopFull, err := shServeLoopback(b.api.Build(log, metrics))
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
	bare, stopBare, err := shServeLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		res  shLoadResult
	}{{"full stack", rf}, {"bare", rb}} {
		fmt.Fprintf(io.out, "%-12s %10.0f %10s %10s\n", r.name, r.res.rps, r.res.p50, r.res.p99)
	}
	fmt.Fprintf(io.out, "full/bare throughput ratio: %.2f\n", rf.rps/rb.rps)
	return nil
}

func shFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func shServeLoopback(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
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

type shLoadResult struct {
	rps      float64
	p50, p99 time.Duration
}

// load runs conns workers against url for d and reports throughput and
// latency percentiles; any non-200 answer fails the run.
func shLoad(ctx context.Context, c *http.Client, url, user, pass string, conns int, d time.Duration) (shLoadResult, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for ctx.Err() == nil {
				t0 := time.Now()
				_, status, err := shFetch(context.Background(), c, url, user, pass)
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("status %d", status)
				}
				if err != nil {
					mu.Lock()
					firstErr = errors.Join(firstErr, err)
					mu.Unlock()
					break
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return shLoadResult{}, firstErr
	}
	if len(lat) == 0 {
		return shLoadResult{}, errors.New("no requests completed")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return shLoadResult{
		rps: float64(len(lat)) / elapsed.Seconds(),
		p50: lat[len(lat)/2].Round(time.Microsecond),
		p99: lat[len(lat)*99/100].Round(time.Microsecond),
	}, nil
}
