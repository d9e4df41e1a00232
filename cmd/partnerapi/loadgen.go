package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// loadResult is what one closed-loop load run measured.
type loadResult struct {
	ok, errs  int
	latencies []time.Duration // successful calls, sorted
	elapsed   time.Duration
	firstErr  error
}

func (r loadResult) rps() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// pct returns the p-th percentile latency, or 0 without successful calls.
func (r loadResult) pct(p int) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[(len(r.latencies)-1)*p/100].Round(time.Microsecond)
}

// add merges another run into r (for runs cut into slices); call sort
// before reading percentiles.
func (r *loadResult) add(o loadResult) {
	r.ok += o.ok
	r.errs += o.errs
	r.latencies = append(r.latencies, o.latencies...)
	r.elapsed += o.elapsed
	r.firstErr = errors.Join(r.firstErr, o.firstErr)
}

// sort orders the merged latencies.
func (r *loadResult) sort() { slices.Sort(r.latencies) }

// runLoad calls op from conns goroutines, each as fast as answers come, for
// d; the HTTP benchmarks of every API share it so their figures compare.
func runLoad(ctx context.Context, conns int, d time.Duration, op func() error) loadResult {
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			var errs int
			var firstErr error
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t := time.Now()
				if err := op(); err != nil {
					errs++
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			res.latencies = append(res.latencies, mine...)
			res.errs += errs
			res.firstErr = errors.Join(res.firstErr, firstErr)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.ok = len(res.latencies)
	slices.Sort(res.latencies)
	return res
}

// serveLoopback serves h on a loopback port and returns its base URL.
func serveLoopback(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}
