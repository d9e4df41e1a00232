package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"partnerapi/internal/inference/local"
)

// streamsWindow is what measureStreams measured: prefill and decode tok/s,
// and span, the mean number of cached positions the decode window's tokens
// attended to (the prompt, the tokens before and the token itself).
type streamsWindow struct {
	prefill, decode, span float64
	lagP50, lagP99        float64 // seconds from a token's draw to its goroutine
	// Seconds between two tokens of a stream drawn before the last stream
	// had its first token (zero without such tokens).
	joinGapP99, joinGapMax float64
	faultsStep             float64 // minor page faults per decode step
}

// measureStreams starts n greedy generations at once, each from its own
// random prompt, and times the tokens as the scheduler takes them.
// Prefill is all prompt tokens over the time until the last stream has its
// first token. Decode is the steady state after that moment, when all n
// streams share every step: the time until they have produced n·(gen-1)
// more tokens, after which the streams are cancelled (they are allowed to
// run longer, so the streams that joined first do not finish early and
// shrink the batch).
func measureStreams(ctx context.Context, e *local.Engine, name string, vocab, n, prompt, gen int, sampling local.GenerateParams) (streamsWindow, error) {
	r := rand.New(rand.NewPCG(uint64(n), uint64(prompt)))
	prompts := make([][]int, n)
	for i := range prompts {
		prompts[i] = make([]int, prompt)
		for j := range prompts[i] {
			prompts[i][j] = 3 + r.IntN(vocab-3) // no control tokens
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Tokens are timed when the scheduler takes them, not when they reach
	// the stream's goroutine: that may run up to 17 ms later, in bursts
	// (local.Engine.GenerateTokensTimed), which made a 15M stream's decode
	// window of some 100 ms land anywhere within ±20 % of its length.
	type decoded struct {
		at   time.Time
		span int // positions the token's step attended to
	}
	var (
		mu     sync.Mutex
		first  = make([]time.Time, n) // per stream: when its first token came
		tokens = make([]int, n)       // per stream: tokens so far
		joined int                    // streams that have their first token
		allIn  time.Time              // the last of first, once joined == n
		later  []decoded              // every stream's tokens after its first
		lags   []time.Duration        // per token: drawn → received
		prev   = make([]time.Time, n) // per stream: when its last token came
		gaps   []time.Duration        // tokens k ≥ 2 drawn before allIn: since token k-1
		after  int                    // of them, those taken after allIn
		// The process's minor page faults when the last stream joined and
		// when the window was complete.
		faultsIn, faultsOut int64
	)
	target := n * (gen - 1)
	onToken := func(i int, at time.Time) {
		lag := time.Since(at)
		mu.Lock()
		defer mu.Unlock()
		lags = append(lags, lag)
		tokens[i]++
		if tokens[i] == 1 {
			first[i] = at
			if joined++; joined == n {
				faultsIn = minorFaults()
				allIn = slices.MaxFunc(first, time.Time.Compare)
				for _, d := range later {
					if d.at.After(allIn) {
						after++
					}
				}
			}
		} else {
			if joined < n {
				gaps = append(gaps, at.Sub(prev[i]))
			}
			// The k-th token (k ≥ 2) comes from the decode step that
			// appended token k-1 at position prompt+k-2 and attended to
			// prompt+k-1 positions.
			later = append(later, decoded{at, prompt + tokens[i] - 1})
			if joined == n && at.After(allIn) {
				after++
			}
		}
		prev[i] = at
		if joined == n && after >= target && faultsOut == 0 {
			faultsOut = minorFaults()
			cancel()
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			params := sampling
			params.IgnoreEOS, params.Seed = true, uint64(i+1)
			_, errs[i] = e.GenerateTokensTimed(ctx, name, prompts[i], params,
				func(_, _ int, at time.Time) { onToken(i, at) })
		}()
	}
	wg.Wait()
	if joined < n || after < target {
		if err := errors.Join(errs...); err != nil {
			return streamsWindow{}, err
		}
		return streamsWindow{}, fmt.Errorf("the streams ran out of context after %d of %d steady-state tokens", after, target)
	}
	// The window is the first target tokens taken after allIn.
	window := slices.DeleteFunc(later, func(d decoded) bool { return !d.at.After(allIn) })
	slices.SortFunc(window, func(a, b decoded) int { return a.at.Compare(b.at) })
	window = window[:target]
	spans := 0
	for _, d := range window {
		spans += d.span
	}
	slices.Sort(lags)
	var gapP99, gapMax float64
	if len(gaps) > 0 {
		slices.Sort(gaps)
		gapP99, gapMax = gaps[len(gaps)*99/100].Seconds(), gaps[len(gaps)-1].Seconds()
	}
	return streamsWindow{
		joinGapP99: gapP99,
		joinGapMax: gapMax,
		faultsStep: float64(faultsOut-faultsIn) / float64(gen-1),
		lagP50:     lags[len(lags)/2].Seconds(),
		lagP99:     lags[len(lags)*99/100].Seconds(),
		prefill:    float64(n*prompt) / allIn.Sub(start).Seconds(),
		decode:     float64(target) / window[target-1].at.Sub(allIn).Seconds(),
		span:       float64(spans) / float64(target),
	}, nil
}
