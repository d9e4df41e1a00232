package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"partnerapi/internal/assistant"
)

// A deployment that outgrows one inference server runs several replicas of
// it (llama-server or vLLM machines) behind one model name. A Pool is that
// name: every request goes to the healthy replica with the fewest requests
// in flight, the first one found from a point that moves on with every
// request, so ties rotate. A replica that fails before any of the answer
// reached the client (it cannot be reached, times out before its headers,
// answers 429, 502, 503 or 504, or its stream breaks) loses the request to
// another healthy replica, once; after the first delta went out a failure
// ends the answer as it would with one server, since the client cannot be
// given a second answer spliced onto the first.
//
// A replica that could not be reached or said it is overloaded is left
// alone until a background probe (GET /v1/models, with backoff) finds it
// answering again; while no replica of the name is healthy, requests fail
// at once with assistant.ErrUnavailable instead of waiting on dial
// timeouts. Each replica is an Engine of its own, so what the engine
// learns of its server (the context window, the /tokenize shape, whether
// it answers n > 1 itself) stays that server's: a request's max_tokens is
// clamped to the window of the replica that serves it.

// Defaults of PoolOptions.
const (
	DefaultProbeInterval    = 500 * time.Millisecond
	DefaultProbeMaxInterval = 15 * time.Second
	DefaultProbeTimeout     = 5 * time.Second
	// DefaultDialTimeout and DefaultHeaderTimeout bound the connection to
	// a replica and the wait for its answer's headers, which a server may
	// send only after its queue and the prompt's prefill: a dead host is
	// noticed in seconds, a long prompt on a busy CPU server still fits.
	DefaultDialTimeout   = 5 * time.Second
	DefaultHeaderTimeout = 2 * time.Minute
)

// PoolOptions tune a Pool; zero values take the defaults.
type PoolOptions struct {
	// Client sends every request to the replicas (nil: NewClient()).
	Client *http.Client
	// Log receives the replicas' health transitions (nil: none).
	Log *slog.Logger
	// ProbeInterval is the wait before the first probe of a replica found
	// down, doubled after each failed probe up to ProbeMaxInterval.
	ProbeInterval, ProbeMaxInterval time.Duration
	// ProbeTimeout bounds one probe.
	ProbeTimeout time.Duration
	// MaxInFlight is the most requests (chats and embeddings) one replica
	// is sent at once, 0 for no limit (limit.go). A chat fanned out as n
	// requests of one choice counts each of them that runs (fanout.go).
	MaxInFlight int
	// MaxQueue is the most requests that wait for a replica under
	// MaxInFlight; one more is ErrEngineBusy at once. 0 is
	// DefaultMaxQueue, a negative number lets none wait.
	MaxQueue int
}

// NewClient is the HTTP client of a pool without one of its own: the
// default transport with dial and header timeouts, and enough idle
// connections per replica that ten concurrent streams reuse theirs instead
// of dialling anew (net/http keeps two by default).
func NewClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = DefaultHeaderTimeout
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: t}
}

// Pool is an assistant.Engine serving one model name from its replicas.
type Pool struct {
	name   string
	served Served
	log    *slog.Logger
	opts   PoolOptions
	// ownClient is set when the pool made its client, whose idle
	// connections (and their goroutines) it then closes with itself.
	ownClient bool

	// stop ends the probes; probes counts them for Close.
	stop   context.Context
	cancel context.CancelFunc
	probes sync.WaitGroup

	// flight merges concurrent Models calls into one round of model lists.
	flight singleflight.Group

	mu       sync.Mutex
	replicas []*replica
	next     int  // where the search for the least busy replica starts
	closed   bool // no probe starts any more
	// waiters are the requests waiting for a replica under MaxInFlight,
	// oldest first (limit.go).
	waiters []*waiter

	// chats measures the chats for metrics (pool_metrics.go).
	chats chatMetrics
}

// replica is one server of a pool. The fields after engine are guarded by
// the pool's mu.
type replica struct {
	engine *Engine
	host   string // the base URL's host and path: no credentials, no query

	healthy bool
	// busy says the replica left rotation because it said it was
	// overloaded (429, or 503 while it loads or queues), not because it
	// could not be reached.
	busy bool
	// lacking says the replica answered 404 for the model: it serves
	// another one, so it gets no requests for this one until its model
	// list shows it (probe).
	lacking bool
	// probing is set while a probe goroutine watches the replica, so a
	// replica that is down and lacking has one probe, not two.
	probing  bool
	inFlight int
	requests int64 // requests sent to it, failovers counted on both sides
	failures int64 // requests that failed for its sake (a serverFault)
	// failuresBy counts failures by reason (FailureReasons).
	failuresBy map[string]int64
}

// NewPool returns the pool serving name (mapped onto the replicas as
// served says) from the servers at bases. Close stops its probes.
func NewPool(name string, served Served, bases []string, opts PoolOptions) *Pool {
	own := opts.Client == nil
	if own {
		opts.Client = NewClient()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.ProbeInterval <= 0 {
		opts.ProbeInterval = DefaultProbeInterval
	}
	if opts.ProbeMaxInterval < opts.ProbeInterval {
		opts.ProbeMaxInterval = max(DefaultProbeMaxInterval, opts.ProbeInterval)
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	switch {
	case opts.MaxQueue == 0:
		opts.MaxQueue = DefaultMaxQueue
	case opts.MaxQueue < 0:
		opts.MaxQueue = 0
	}
	p := &Pool{name: name, served: served, log: opts.Log, opts: opts, ownClient: own}
	p.stop, p.cancel = context.WithCancel(context.Background())
	for _, base := range bases {
		e := New(base, opts.Client)
		e.Serve(name, served)
		r := &replica{engine: e, host: Host(base), healthy: true, failuresBy: map[string]int64{}}
		e.extra = replicaSlots{p, r}
		p.replicas = append(p.replicas, r)
	}
	return p
}

// Host is how a replica's base URL is named in metrics and logs: its host
// and path, without the userinfo (credentials), query or fragment it may
// carry.
func Host(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "invalid"
	}
	return u.Host + strings.TrimRight(u.EscapedPath(), "/")
}

// Close stops the probes of replicas that are down and waits for them,
// and closes the idle connections of a client the pool made. Requests
// still under way finish as they would.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.probes.Wait()
	if p.ownClient {
		p.opts.Client.CloseIdleConnections()
	}
}

// Name is the model name the pool serves.
func (p *Pool) Name() string { return p.name }

// ReplicaStats is one replica's state, for metrics.
type ReplicaStats struct {
	Model, Host        string
	Healthy            bool
	InFlight           int
	Requests, Failures int64
	// FailuresBy splits Failures by reason; every one of FailureReasons
	// is there, zero or not.
	FailuresBy map[string]int64
}

// Stats reports every replica in the order they were configured.
func (p *Pool) Stats() []ReplicaStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ReplicaStats, 0, len(p.replicas))
	for _, r := range p.replicas {
		by := make(map[string]int64, len(FailureReasons))
		for _, reason := range FailureReasons {
			by[reason] = r.failuresBy[reason]
		}
		out = append(out, ReplicaStats{Model: p.name, Host: r.host, Healthy: r.healthy, InFlight: r.inFlight, Requests: r.requests, Failures: r.failures, FailuresBy: by})
	}
	return out
}

// release ends r's request with err: a fault of r counts against it, one
// that says r is down takes it out of rotation until a probe finds it
// answering again, and one that says r lacks the model keeps requests for
// it away from r until its model list shows the model.
func (p *Pool) release(r *replica, err error) {
	// The fault is settled first, so a request waiting for room (limit.go)
	// does not take r's freed place while r is about to leave rotation.
	p.fault(r, err)
	p.mu.Lock()
	r.inFlight--
	p.dispatch()
	p.mu.Unlock()
}

// fault counts err against r when it is r's fault, and takes r out of
// rotation (down) or away from the model (lack) as the fault says.
func (p *Pool) fault(r *replica, err error) {
	f := faultOf(err)
	if f == nil {
		return
	}
	p.mu.Lock()
	r.failures++
	r.failuresBy[f.reason]++
	p.mu.Unlock()
	switch {
	case f.down:
		p.down(r, err)
	case f.noModel:
		p.lack(r, err)
	}
}

// down takes r out of rotation, unless it already is, and starts its
// probe. The log line is written after the lock is let go: a flushed
// warning is a write, which requests picking a replica must not wait for.
func (p *Pool) down(r *replica, err error) {
	p.mu.Lock()
	if !r.healthy {
		p.mu.Unlock()
		return
	}
	r.healthy = false
	r.busy = errors.Is(err, assistant.ErrEngineBusy)
	probe := p.startProbe(r)
	p.mu.Unlock()
	p.log.Warn("assistant: upstream replica down", "model", p.name, "replica", r.host, "reason", reason(err))
	if probe {
		go p.probe(r)
	}
}

// lack keeps requests for the model away from r, unless they already
// are, and starts its probe: r answered that it does not serve the model
// (a replica started with another one), and asking it again would only
// cost every request a round trip and a failover.
func (p *Pool) lack(r *replica, err error) {
	p.mu.Lock()
	if r.lacking {
		p.mu.Unlock()
		return
	}
	r.lacking = true
	probe := p.startProbe(r)
	p.mu.Unlock()
	p.log.Warn("assistant: upstream replica lacks the model", "model", p.name, "replica", r.host, "reason", reason(err))
	if probe {
		go p.probe(r)
	}
}

// startProbe reports whether the caller, holding mu, is to start r's
// probe: none runs yet and the pool is open. The probe is counted under
// the lock, so a Close that follows waits for it; the caller starts it
// after its log line, so that line comes before the probe's.
func (p *Pool) startProbe(r *replica) bool {
	if r.probing || p.closed {
		return false
	}
	r.probing = true
	p.probes.Add(1)
	return true
}

// reason is err as logged: the transport's error without the URL it names
// (which may carry credentials), or the start of the server's answer.
func reason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	s := err.Error()
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// probe asks r for its model list until it answers and, when r lacks the
// model, until the list shows it, waiting longer after every failure. A
// replica that answers is put back into rotation with what its engine knew
// of the server forgotten.
func (p *Pool) probe(r *replica) {
	defer p.probes.Done()
	wait := p.opts.ProbeInterval
	for {
		t := time.NewTimer(wait)
		select {
		case <-p.stop.Done():
			t.Stop()
			p.mu.Lock()
			r.probing = false
			p.mu.Unlock()
			return
		case <-t.C:
		}
		wait = min(2*wait, p.opts.ProbeMaxInterval)
		p.mu.Lock()
		lacking := r.lacking
		p.mu.Unlock()
		listed, err := r.engine.lists(p.stop, p.opts.ProbeTimeout, lacking)
		if err != nil || p.stop.Err() != nil {
			continue
		}
		p.mu.Lock()
		back := !r.healthy
		if back {
			r.engine.forget()
			r.healthy = true
		}
		found := r.lacking && listed
		if found {
			r.lacking = false
		}
		if back || found {
			p.dispatch()
		}
		done := !r.lacking
		if done {
			r.probing = false
		}
		p.mu.Unlock()
		if back {
			p.log.Info("assistant: upstream replica back", "model", p.name, "replica", r.host)
		}
		if found {
			p.log.Info("assistant: upstream replica serves the model again", "model", p.name, "replica", r.host)
		}
		if done {
			return
		}
	}
}

// run calls do on the least busy healthy replica and, when that fails for
// the replica's sake before sent reports anything sent to the client, once
// more on another. A replica that says it lacks the model does not use up
// that one failover: its answer is immediate and says nothing of the
// others, so every replica is asked once before the request fails. With
// no replica in rotation it is noReplica's error at once; a failover that
// finds none is the first replica's error, as a lone server's would be,
// except that a 404 for the model gives way to any other fault (the
// replica that failed otherwise may well serve the model).
func (p *Pool) run(ctx context.Context, limited bool, sent func() bool, do func(*Engine) error) error {
	var tried []*replica
	var first error
	faults := 0
	for {
		r, err := p.acquire(ctx, tried, limited)
		if err != nil {
			return err
		}
		if r == nil {
			if first != nil {
				return first
			}
			return p.noReplica()
		}
		tried = append(tried, r)
		err = do(r.engine)
		p.release(r, err)
		f := faultOf(err)
		if err == nil || f == nil || ctx.Err() != nil || sent() {
			return err
		}
		if first == nil || faultOf(first).noModel {
			first = err
		}
		if !f.noModel {
			if faults++; faults == 2 {
				return first
			}
		}
	}
}

func nothingSent() bool { return false }

// noReplica is the answer while no replica is in rotation. When one of
// them left it for saying it was overloaded, the name is busy, not gone:
// ErrEngineBusy is a 429 with Retry-After, which clients retry, as a lone
// server's own 429 was answered before pools; a server that loads its
// model or drains a full queue is back within a probe interval. Only
// replicas that could not be reached at all make it ErrUnavailable (503).
//
// When every replica is in rotation but lacks the model, the name is not
// served by any of them: ErrNoSuchModel, as the first request's 404 was.
func (p *Pool) noReplica() error {
	p.mu.Lock()
	busy, out := false, false
	for _, r := range p.replicas {
		busy = busy || (!r.healthy && r.busy)
		out = out || !r.healthy
	}
	p.mu.Unlock()
	if !out {
		return fmt.Errorf("upstream: %w: no replica of %s serves it", assistant.ErrNoSuchModel, p.name)
	}
	if busy {
		return fmt.Errorf("upstream: %w: every replica of %s is busy", assistant.ErrEngineBusy, p.name)
	}
	return fmt.Errorf("upstream: %w: no replica of %s answers", assistant.ErrUnavailable, p.name)
}

var (
	_ assistant.Engine               = (*Pool)(nil)
	_ assistant.NativeFunctionCaller = (*Pool)(nil)
	_ assistant.Embedder             = (*Pool)(nil)
)

// Generate runs on a replica (run). Whether any of the answer reached the
// client is whether emit was called: the transports may have written it.
//
// The first delta is timed from the call, and the usage counted, for
// metrics (pool_metrics.go); a request without emit (no stream) is given
// one all the same, so its first token is timed too, but it is never
// "sent", and may still fail over.
func (p *Pool) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	start := time.Now()
	var emitted, first atomic.Bool
	relay := func(d assistant.Delta) error {
		if !first.Swap(true) {
			p.chats.firstToken(time.Since(start))
		}
		if emit == nil {
			return nil
		}
		emitted.Store(true)
		return emit(d)
	}
	var res assistant.Result
	err := p.run(ctx, true, emitted.Load, func(e *Engine) error {
		var err error
		res, err = e.Generate(ctx, req, relay)
		return err
	})
	p.chats.used(res.Usage)
	return res, err
}

// CountTokens counts with a healthy replica's tokenizer; when none can be
// reached the count is estimated, as a lone upstream's always was.
func (p *Pool) CountTokens(ctx context.Context, model, text string) (int, error) {
	var n int
	// Counting is a quick /tokenize, not a generation: it does not wait
	// behind the generations that fill the replicas' limits.
	err := p.run(ctx, false, nothingSent, func(e *Engine) error {
		var err error
		n, err = e.countTokens(ctx, model, text)
		return err
	})
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if err != nil {
		return EstimateTokens(text), nil
	}
	return n, nil
}

// Embed runs on a replica; nothing reaches the client before the vectors
// are all there, so any replica's fault may fail over.
func (p *Pool) Embed(ctx context.Context, model string, inputs []string) ([]assistant.Embedding, error) {
	if p.served.Type != assistant.TypeEmbedder {
		return nil, assistant.ErrNotEmbedder
	}
	var out []assistant.Embedding
	err := p.run(ctx, true, nothingSent, func(e *Engine) error {
		var err error
		out, err = e.Embed(ctx, model, inputs)
		return err
	})
	return out, err
}

// ModelInfo describes the served model; every replica serves it alike, so
// the first replica whose list told its owner answers (replica 0 may be the
// one that has been down since the start).
func (p *Pool) ModelInfo(name string) assistant.ModelInfo {
	for _, r := range p.replicas {
		if r.engine.learntOwner(name) {
			return r.engine.ModelInfo(name)
		}
	}
	return p.replicas[0].engine.ModelInfo(name)
}

// NativeFunctionCalls implements assistant.NativeFunctionCaller.
func (p *Pool) NativeFunctionCalls(string) bool { return true }
