package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
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
// shows what the stack costs. The machine is shared and noisy, so each
// connection count runs several rounds that alternate which side goes
// first, and the figures printed are the medians of the rounds.
func benchSmarthome(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	fs := flag.NewFlagSet("bench smarthome", flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	connList := fs.String("connections", "8,64", "comma-separated counts of concurrent keep-alive connections")
	dur := fs.String("duration", "2s", "how long each side is loaded in each round")
	rounds := fs.Int("rounds", 3, "rounds per connection count (medians are printed)")
	path := fs.String("path", "/v1/mqtt-gate/categories/light/features", "catalog path to read")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memProfile := fs.String("memprofile", "", "write an allocation profile taken after the run to this file")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	d, err := durationFlag("duration", *dur)
	if err != nil {
		return err
	}
	conns, err := shConnections(*connList)
	if err != nil {
		return err
	}
	if *rounds < 1 {
		return errors.New("--rounds must be at least 1")
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
	full, stopFull, err := serveLoopbackLabelled(b.api.Build(log, metrics), "full")
	if err != nil {
		return err
	}
	defer stopFull()

	maxConns := slices.Max(conns)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: maxConns, MaxConnsPerHost: maxConns}}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+pw))
	body, status, err := shFetch(ctx, client, full+*path, auth)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", *path, status, body)
	}
	bare, stopBare, err := serveLoopbackLabelled(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(body)
	}), "bare")
	if err != nil {
		return err
	}
	defer stopBare()

	hdr := http.Header{"Authorization": {auth}}
	clients := map[string]*rawClient{full: newRawClient(full, *path, hdr, maxConns), bare: newRawClient(bare, *path, hdr, maxConns)}
	defer clients[full].close()
	defer clients[bare].close()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Fprintf(io.out, "smarthome catalog read %s: %d-byte body, %d rounds of %s per side, medians of the rounds\n",
		*path, len(body), *rounds, d)
	fmt.Fprintf(io.out, "%-6s %-12s %10s %10s %10s\n", "conns", "handler", "req/s", "p50", "p99")
	for _, n := range conns {
		var fulls, bares []loadResult
		var ratios []float64
		for range *rounds {
			// Each side runs in short slices that alternate with the other
			// side's, and the round's ratio is the median of the ratios of
			// neighbouring slices, so a burst of load from elsewhere on the
			// machine hits both sides alike or is outvoted.
			var rf, rb loadResult
			var pairs []float64
			for i := range shSlices {
				var sf, sb loadResult
				sides := []struct {
					url string
					res *loadResult
				}{{full, &sf}, {bare, &sb}}
				if i%2 == 1 {
					sides[0], sides[1] = sides[1], sides[0]
				}
				for _, side := range sides {
					r, err := shLoad(ctx, clients[side.url], len(body), n, d/shSlices)
					if err != nil {
						return err
					}
					*side.res = r
				}
				rf.add(sf)
				rb.add(sb)
				// On a loaded machine a slice can pass without an answer;
				// such a pair says nothing about the ratio.
				if sf.ok > 0 && sb.ok > 0 {
					pairs = append(pairs, sf.rps()/sb.rps())
				}
			}
			if len(pairs) == 0 {
				return errors.New("no slice completed a request on both sides")
			}
			rf.sort()
			rb.sort()
			fulls, bares = append(fulls, rf), append(bares, rb)
			ratios = append(ratios, shMedianFloat(pairs))
		}
		for _, r := range []struct {
			name string
			res  []loadResult
		}{{"full stack", fulls}, {"bare", bares}} {
			fmt.Fprintf(io.out, "%-6d %-12s %10.0f %10s %10s\n", n, r.name, shMedian(r.res, loadResult.rps),
				time.Duration(shMedian(r.res, func(l loadResult) float64 { return float64(l.pct(50)) })),
				time.Duration(shMedian(r.res, func(l loadResult) float64 { return float64(l.pct(99)) })))
		}
		fmt.Fprintf(io.out, "%-6d full/bare throughput ratio: %.2f (rounds:", n, shMedianFloat(ratios))
		for _, r := range ratios {
			fmt.Fprintf(io.out, " %.2f", r)
		}
		fmt.Fprintln(io.out, ")")
	}
	if *memProfile != "" {
		if err := writeHeapProfile(*memProfile); err != nil {
			return err
		}
	}
	return nil
}

// shSlices is how many alternating slices each side's time in a round is
// cut into.
const shSlices = 20

func shConnections(list string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--connections: %q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func shMedianFloat(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func shMedian(rs []loadResult, f func(loadResult) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return shMedianFloat(xs)
}

func shFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func shFetch(ctx context.Context, c *http.Client, url, auth string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", auth)
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}

// shLoad runs conns workers through c for d (one slice; it may end
// without an answer on a busy machine); an answer other than 200 with the
// expected length fails the run, since a benchmark of errors measures
// nothing.
func shLoad(ctx context.Context, c *rawClient, size, conns int, d time.Duration) (loadResult, error) {
	res := runLoad(ctx, conns, d, func() error {
		status, n, err := c.get()
		if err == nil && (status != http.StatusOK || n != size) {
			err = fmt.Errorf("status %d, %d bytes", status, n)
		}
		return err
	})
	return res, res.firstErr
}

// writeHeapProfile writes the allocation profile (alloc_space shows what
// the run allocated per request).
func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}
