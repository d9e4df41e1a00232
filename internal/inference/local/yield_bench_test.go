package local

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkYieldSideBySide runs ten greedy streams of the stories15M shape
// without end and switches the scheduler's yield after each step off and
// on every 200 ms, so both settings see the same machine: it reports each
// setting's aggregate tokens per second (a token counted in the window it
// was drawn in), their ratio, and how long after its draw a token reached
// its stream's goroutine (median, 99th percentile). One op is one pair of
// windows. Work the streams' goroutines could not do in a window without
// the yield is done in the next one, so the ratio errs against the yield.
func BenchmarkYieldSideBySide(b *testing.B) {
	e := openRandom15M(b)
	defer noStepYield.Store(false)
	const streams, window = 10, 200 * time.Millisecond
	type token struct{ at, got time.Time }
	var (
		mu     sync.Mutex
		tokens []token
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A stream that fills its context starts again, so that
			// ten stay in the batch in every window.
			for ctx.Err() == nil {
				prompt := []int{1, 300 + i, 400 + i}
				_, _ = e.GenerateTokensTimed(ctx, "random15M", prompt, GenerateParams{IgnoreEOS: true, MaxTokens: 448, MaxContext: 512},
					func(_, _ int, at time.Time) {
						got := time.Now()
						mu.Lock()
						tokens = append(tokens, token{at, got})
						mu.Unlock()
					})
			}
		}()
	}
	time.Sleep(100 * time.Millisecond) // every stream in the batch
	// Windows alternate between the settings; a token belongs to the
	// window in which it was drawn, however late it arrived.
	type span struct {
		from, to time.Time
		k        int
	}
	var spans []span
	for b.Loop() {
		for k := range 2 { // 0: no yield, 1: a yield after every step
			noStepYield.Store(k == 0)
			from := time.Now()
			time.Sleep(window)
			spans = append(spans, span{from, time.Now(), k})
		}
	}
	cancel()
	wg.Wait()
	var counts [2]int
	var lags [2][]time.Duration
	var spent [2]time.Duration
	for _, sp := range spans {
		spent[sp.k] += sp.to.Sub(sp.from)
	}
	for _, t := range tokens {
		for _, sp := range spans {
			if !t.at.Before(sp.from) && t.at.Before(sp.to) {
				counts[sp.k]++
				lags[sp.k] = append(lags[sp.k], t.got.Sub(t.at))
				break
			}
		}
	}
	pct := func(l []time.Duration, p int) float64 {
		if len(l) == 0 {
			return 0
		}
		slices.Sort(l)
		return float64(l[len(l)*p/100].Microseconds()) / 1e3
	}
	rate := func(k int) float64 { return float64(counts[k]) / spent[k].Seconds() }
	for k, name := range []string{"never", "step"} {
		b.ReportMetric(rate(k), "tok/s-"+name)
		b.ReportMetric(pct(lags[k], 50), "lag-p50-ms-"+name)
		b.ReportMetric(pct(lags[k], 99), "lag-p99-ms-"+name)
	}
	b.ReportMetric(rate(1)/rate(0), "speedup")
}
