package local

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"partnerapi/internal/inference/kernels"
	"partnerapi/internal/inference/model"
	"partnerapi/internal/inference/sampler"
	"partnerapi/internal/ttft"
)

// The scheduler runs continuous batching for one model: a single goroutine
// owns every active sequence, advances all of them with one batched forward
// step (model.Batch: each weight matrix read once per step), samples each,
// and hands the tokens to the requests' own goroutines, which decode and emit
// text. Streaming therefore never stalls the batch on a slow client, and a
// request joins at the next step and leaves as soon as it finishes or is
// cancelled.

// joiner is an admitted request whose prompt is still being prefilled.
type joiner struct {
	req *request
	seq *model.Sequence
	// started is set once the request's choices are in the batch (or have
	// all finished): the joiner then leaves the joining list. Its
	// sequence's position cannot tell, as a choice done at its first token
	// hands the sequence to the prefix cache, which may release it at once.
	started bool
}

// choiceState is one choice's sequence in the batch.
type choiceState struct {
	req     *request
	index   int
	seq     *model.Sequence
	sampler *sampler.Sampler
	history []int
	ntok    int
	next    int    // token to feed at the next step
	in      [1]int // next as the one-token chunk of a step
	done    bool
}

type scheduler struct {
	m      *Model
	batch  *model.Batch
	submit chan *request
	quit   chan struct{}
	exited chan struct{}
	cache  *prefixCache
	kvIdle time.Duration // idle time before the KV pool is trimmed (kvidle.go)

	active  []*choiceState
	joining []*joiner // admitted requests whose prompts are being prefilled, in arrival order

	// Scratch of step, reused so that a decode step allocates nothing.
	stepSeqs   []*model.Sequence
	stepChunks [][]int
	prefilling []*joiner
	finished   []*request

	// The logits and drawn tokens of the active choices in a step, for
	// drawFn (bound once, so handing it to the worker pool allocates
	// nothing).
	drawLogits [][]float32
	drawTokens []int
	drawFn     func(lo, hi int)

	pacer prefillPacer // sizes the prompt chunks of steps that also decode

	mu    sync.Mutex
	stats Stats
}

// Stats is a snapshot of one model's scheduler.
type Stats struct {
	Model          string
	ActiveRequests int // requests whose sequences are in the batch
	QueuedRequests int // calls waiting for a batch slot
	// PrefillingRequests are admitted requests whose prompts are still being
	// prefilled, a chunk between decode steps.
	PrefillingRequests int
	ActiveSequences    int   // sequences in the batch (a request has one per choice)
	KVBytes            int64 // KV cache memory of the active and prefilling sequences
	CachedPrompts      int   // finished prompts kept for prefix reuse
	CachedKVBytes      int64
	// PooledKVBytes is KV memory finished sequences gave back, kept for the
	// next ones (model.Model.PooledKVBytes): reserved, not in use.
	PooledKVBytes int64
	Steps         int64 // batched decode steps run
	MaxBatch      int   // most sequences stepped together so far
	PrefixHits    int64 // requests that reused a cached prefix
	PrefillTokens int64 // prompt tokens run through the model
	DecodedTokens int64 // tokens sampled (end-of-generation included)
	// TimeToFirstToken is the time from a Generate call to its first token,
	// over the calls that got one (ttft.Buckets).
	TimeToFirstToken ttft.Histogram
}

func newScheduler(m *Model, cacheSize int, joinStep, kvIdle time.Duration) *scheduler {
	s := newSchedulerState(m, cacheSize)
	s.pacer = pacerFor(joinStep)
	s.kvIdle = kvIdle
	go s.run()
	return s
}

// newSchedulerState is a scheduler without its goroutine (tests drive it).
func newSchedulerState(m *Model, cacheSize int) *scheduler {
	s := &scheduler{
		m: m, batch: m.Net.NewBatch(),
		submit: make(chan *request), quit: make(chan struct{}), exited: make(chan struct{}),
		cache: &prefixCache{max: cacheSize},
	}
	s.drawFn = s.drawRange
	return s
}

func (s *scheduler) close() {
	close(s.quit)
	<-s.exited
}

func (s *scheduler) snapshot() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

func (s *scheduler) run() {
	defer close(s.exited)
	for {
		if len(s.active) == 0 && len(s.joining) == 0 && !s.waitIdle() {
			return
		}
		// Requests that arrived during the last step join now.
	join:
		for {
			select {
			case r := <-s.submit:
				s.admit(r)
			case <-s.quit:
				s.failAll(errors.New("local: engine closed"))
				return
			default:
				break join
			}
		}
		s.dropCancelled()
		regions := kernels.PoolRegions()
		s.step()
		s.updateStats()
		// After a step that ran parallel regions, let the goroutines it
		// readied run before the next one: the requests' own goroutines
		// that turn its tokens into text and write them to their clients,
		// and whatever else the process serves. The pool's workers spin on
		// the other Ps for a while after each region, so without the yield
		// they waited until the runtime preempted someone: ten streams of
		// the stories15M shape on two cores had their tokens reach their
		// goroutines 5–8 ms after the draw at the median and 19–37 ms at
		// the 99th percentile, with the yield 0.01 ms and 1.1–15 ms, at
		// 0.85–1.03× the decode rate, 0.97 in the median of eight runs
		// (BenchmarkYieldSideBySide). Through the HTTP API (`bench
		// assistant`, ten streams of stories260K) the aggregate measured
		// 0.88–0.98× and the median time to first token 12–15 ms against
		// 13–26: tokens reach their writers a step at a time instead of
		// in clumps. A step that split nothing (a lone stream of a tiny
		// model) leaves the other Ps free, so it does not yield.
		if kernels.PoolRegions() != regions && !noStepYield.Load() {
			runtime.Gosched()
		}
	}
}

// noStepYield turns the yield after each step off, for
// BenchmarkYieldSideBySide.
var noStepYield atomic.Bool

// admit queues a joining request for prefill.
func (s *scheduler) admit(r *request) {
	s.joining = append(s.joining, &joiner{req: r})
}

// attach gives a joining request its sequence, starting from the longest
// prefix it shares with a cached prompt, with a sequence in the batch or
// with a request still being prefilled: requests arriving together with one
// system prompt compute it once, since a later one waits (waitsForPrefix)
// until an earlier one has computed the shared part.
func (s *scheduler) attach(j *joiner) {
	live := make([]cachedSequence, 0, len(s.active)+len(s.joining))
	for _, c := range s.active {
		live = append(live, cachedSequence{seq: c.seq, tokens: c.history[:c.seq.Pos()]})
	}
	// A request whose prompt takes several steps of prefill has its shared
	// part computed before it joins the batch, and a waiter stops waiting
	// as soon as that part is done, so the prompt's sequence must be
	// offered here too, or the waiter would compute the prefix again and
	// its wait would have bought nothing. Only the positions it has filled
	// are listed: the KV entries below Pos are final (a sequence only
	// grows), and those from Pos on are not written yet, even for a prompt
	// prefilled in this very step, since attach runs before the step's
	// forward pass. The waiter gets a copy of them in its own context
	// window (prefixCache.take), never the sequence itself, so the
	// prompt's later chunks, failure or release do not touch it.
	for _, o := range s.joining {
		if o.seq != nil && o.seq.Pos() > 0 {
			live = append(live, cachedSequence{seq: o.seq, tokens: o.req.prompt[:o.seq.Pos()]})
		}
	}
	var cached int
	j.seq, cached = s.cache.take(s.m.Net, j.req.prompt, j.req.params.MaxContext, live)
	j.seq.Reserve(reservation(j.req))
	j.req.precached = cached
	if cached > 0 {
		s.mu.Lock()
		s.stats.PrefixHits++
		s.mu.Unlock()
	}
}

// reservation is how many positions a request's KV cache is made for when
// it joins: its prompt and its max_tokens, at most reserveAhead of them.
// The cache is then not grown (and copied) in the middle of the steps the
// other streams wait for; a request that runs longer grows it as before.
func reservation(r *request) int {
	return len(r.prompt) + min(r.maxTokens, reserveAhead)
}

// reserveAhead bounds the tokens a reservation is made for: the API's
// default max_tokens (512). A request without a limit may run to the end
// of the context, and reserving all of it would back (and populate) tens
// of megabytes it most likely never writes.
const reserveAhead = 512

// prefillBudget is how many prompt tokens one step takes from joining
// requests (in arrival order): all of a chunk while nothing decodes, while
// streams wait for the step as many as fit in the time the pacer allows
// (prefillpacer.go), since every prompt row adds to its cost.
func (s *scheduler) prefillBudget() int {
	if len(s.active) > 0 {
		return s.pacer.budget()
	}
	return prefillStep
}

// start samples each choice's first token from the prompt's logits and adds
// the choices to the batch.
func (s *scheduler) start(r *request, seq *model.Sequence, logits []float32) {
	seed := r.params.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	p := r.params
	choices := make([]*choiceState, max(p.N, 1))
	for i := range choices {
		choices[i] = &choiceState{
			req: r, index: i, seq: seq,
			sampler: sampler.New(sampler.Params{Temperature: p.Temperature, TopP: p.TopP, TopPSet: p.TopPSet, RepetitionPenalty: p.RepetitionPenalty, Seed: seed, Stream: uint64(i)}),
			history: slices.Clip(r.prompt),
		}
		// The n choices share the prompt's KV by copy; the first keeps it.
		if i > 0 {
			choices[i].seq = seq.Clone()
			choices[i].seq.Reserve(reservation(r))
		}
	}
	// Sampling may penalise logits in place: every choice gets its own
	// copy, taken before any of them samples.
	own := make([][]float32, len(choices))
	for i := range choices {
		own[i] = logits
		if i > 0 {
			own[i] = slices.Clone(logits)
		}
	}
	for i, c := range choices {
		s.sample(c, own[i])
		if c.done {
			s.retire(c)
		} else {
			s.active = append(s.active, c)
		}
	}
	s.finishIfDone(r)
}

// retire disposes of a finished choice's sequence: the first choice's
// (prompt plus completion) is kept for prefix reuse, the others' KV memory
// is released.
func (s *scheduler) retire(c *choiceState) {
	if c.index == 0 {
		s.cache.put(c.seq, c.history[:c.seq.Pos()])
	} else {
		c.seq.Release()
	}
}

// sample draws a choice's next token from logits and takes it.
func (s *scheduler) sample(c *choiceState, logits []float32) {
	s.take(c, c.sampler.Sample(logits, c.history))
}

// drawRange draws the next tokens of active choices [lo, hi) from their
// logits. Each choice has its own sampler, history and logits, so choices
// can be drawn on different workers.
func (s *scheduler) drawRange(lo, hi int) {
	for i := lo; i < hi; i++ {
		c := s.active[i]
		s.drawTokens[i] = c.sampler.Sample(s.drawLogits[i], c.history)
	}
}

// drawWork converts drawing a token from a vocabulary of v logits into
// kernels.ParallelFor's multiply-add units: even the greedy argmax is a
// compare and a branch per logit, several quantised multiply-adds' worth.
func drawWork(choices, v int) int { return choices * v * 8 }

// take reports a choice's drawn token and decides whether the choice
// finishes (end of generation or its token budget).
func (s *scheduler) take(c *choiceState, tok int) {
	// Counted before the token is handed over, so a caller that has seen
	// it also sees it counted.
	s.mu.Lock()
	s.stats.DecodedTokens++
	s.mu.Unlock()
	if !c.req.params.IgnoreEOS && s.m.Tokenizer.IsEOG(tok) {
		c.done = true
		c.req.push(event{choice: c.index, tok: -1, finish: FinishStop})
		return
	}
	c.history = append(c.history, tok)
	c.ntok++
	c.req.generated++
	c.next = tok
	ev := event{choice: c.index, tok: tok, at: time.Now()}
	if c.ntok >= c.req.maxTokens {
		c.done = true
		ev.finish = FinishLength
	}
	c.req.push(ev)
}

// step runs one batched forward pass: every active choice's next token and
// the next prompt chunks of joining requests (up to prefillBudget tokens),
// so a joining prompt shares the weight reads of the decode step instead of
// stalling it with a pass of its own. Then it samples each active choice's
// following token and moves requests whose prompts are done into the
// batch.
func (s *scheduler) step() {
	seqs, chunks := s.stepSeqs[:0], s.stepChunks[:0]
	for _, c := range s.active {
		c.in[0] = c.next
		seqs, chunks = append(seqs, c.seq), append(chunks, c.in[:])
	}
	nDecode := len(seqs)
	prefilling := s.prefilling[:0]
	prompt := 0
	for i, budget := 0, s.prefillBudget(); budget > 0 && i < len(s.joining); i++ {
		j := s.joining[i]
		if j.seq == nil && waitsForPrefix(j, prefilling) {
			// The request waits for a prefix that an earlier one is
			// computing in this step, but the requests behind it need
			// not: it is skipped, not stopped at, so unrelated prompts
			// still take the budget it leaves. It keeps its place in
			// s.joining, so once the prefix is ready it is considered
			// before every later arrival, and a later arrival sharing the
			// same prefix waits for it in turn (waitsForPrefix sees it
			// among the prefilling ones), which keeps the waiters of one
			// prefix in arrival order.
			continue
		}
		if j.seq == nil {
			s.attach(j)
		}
		pos := j.seq.Pos()
		n := min(len(j.req.prompt)-pos, budget)
		seqs, chunks = append(seqs, j.seq), append(chunks, j.req.prompt[pos:pos+n])
		prefilling = append(prefilling, j)
		budget -= n
		prompt += n
	}
	s.stepSeqs, s.stepChunks, s.prefilling = seqs, chunks, prefilling
	if len(seqs) == 0 {
		return
	}
	t0 := time.Now()
	out, err := s.batch.StepChunks(seqs, chunks)
	s.pacer.observe(time.Since(t0), nDecode, prompt)
	// The scratch must not keep finished sequences or prompts alive.
	clear(seqs)
	clear(chunks)
	if err != nil {
		// Not expected (budgets keep every sequence inside its context): fail
		// the requests of this step rather than spin; joining requests that
		// were not in it (those the budget did not reach and those waiting
		// for a prefix) go on.
		s.failStep(err, prefilling)
		clear(prefilling)
		return
	}
	s.mu.Lock()
	if nDecode > 0 {
		s.stats.Steps++
		s.stats.MaxBatch = max(s.stats.MaxBatch, nDecode)
	}
	s.stats.PrefillTokens += int64(prompt)
	s.mu.Unlock()
	// The active choices are the first rows of the step. Drawing their
	// tokens (an argmax or a softmax over the vocabulary each) is spread
	// over the worker pool; reporting them stays here, in order.
	s.drawLogits = out[:len(s.active)]
	s.drawTokens = slices.Grow(s.drawTokens[:0], len(s.active))[:len(s.active)]
	kernels.ParallelFor(len(s.active), drawWork(len(s.active), s.m.Net.NVocab), s.drawFn)
	s.drawLogits = nil
	finished := s.finished[:0]
	for i, c := range s.active {
		s.take(c, s.drawTokens[i])
		if c.done {
			s.retire(c)
			if !slices.Contains(finished, c.req) {
				finished = append(finished, c.req)
			}
		}
	}
	s.active = slices.DeleteFunc(s.active, func(c *choiceState) bool { return c.done })
	for _, r := range finished {
		s.finishIfDone(r)
	}
	clear(finished)
	s.finished = finished
	// Joiners whose prompts are done sample their first tokens and join
	// the batch (prefilling holds the joiners of this step in s.joining's
	// order; requests waiting for a prefix may sit between them there).
	for k, j := range prefilling {
		if j.seq.Pos() < len(j.req.prompt) {
			continue
		}
		j.started = true
		s.start(j.req, j.seq, out[nDecode+k])
	}
	s.joining = slices.DeleteFunc(s.joining, func(j *joiner) bool { return j.started })
	clear(prefilling)
}

// finishIfDone lets a request whose choices have all finished leave: the
// first choice's sequence (prompt plus its completion) goes to the prefix
// cache, the others' KV memory is released.
func (s *scheduler) finishIfDone(r *request) {
	if slices.ContainsFunc(s.active, func(c *choiceState) bool { return c.req == r }) {
		return
	}
	s.leave(r, nil)
}

// dropCancelled removes the choices of cancelled requests at once and
// releases their KV memory. Which requests go is decided first, and then
// all of a request's choices go together: the caller sets the flag at any
// moment, and a request whose choices were judged one by one could have its
// later choices dropped and its earlier ones kept after it had left, to
// leave again at the next step or at close (a close of a closed channel
// that CI hit with n > 1 choices).
func (s *scheduler) dropCancelled() {
	var gone []*request
	for _, c := range s.active {
		if !slices.Contains(gone, c.req) && c.req.cancelled.Load() {
			gone = append(gone, c.req)
		}
	}
	for _, j := range s.joining {
		if j.req.cancelled.Load() {
			gone = append(gone, j.req)
		}
	}
	if len(gone) == 0 {
		return
	}
	s.active = slices.DeleteFunc(s.active, func(c *choiceState) bool {
		if !slices.Contains(gone, c.req) {
			return false
		}
		c.seq.Release()
		return true
	})
	s.joining = slices.DeleteFunc(s.joining, func(j *joiner) bool {
		if !slices.Contains(gone, j.req) {
			return false
		}
		j.req.cutPrefill(j.seq)
		if j.seq != nil {
			j.seq.Release()
		}
		return true
	})
	for _, r := range gone {
		s.leave(r, context.Canceled)
	}
}

// failAll ends every request in the batch or joining it with err.
func (s *scheduler) failAll(err error) {
	joining := s.joining
	s.joining = nil
	s.failActive(err)
	for _, j := range joining {
		if j.seq != nil {
			j.seq.Release()
		}
		s.leave(j.req, err)
	}
}

// failStep ends with err the requests of a failed step: those in the
// decode batch and the joining ones it prefilled (inStep). The joiners it
// did not reach stay, whether the budget ran out before them or they wait
// for a prefix: inStep need not be a prefix of s.joining.
func (s *scheduler) failStep(err error, inStep []*joiner) {
	s.joining = slices.DeleteFunc(s.joining, func(j *joiner) bool { return slices.Contains(inStep, j) })
	for _, j := range inStep {
		j.seq.Release()
		s.leave(j.req, err)
	}
	s.failActive(err)
}

// failActive ends the requests in the decode batch with err.
func (s *scheduler) failActive(err error) {
	active := s.active
	s.active = nil
	var gone []*request
	for _, c := range active {
		c.seq.Release()
		if !slices.Contains(gone, c.req) {
			gone = append(gone, c.req)
		}
	}
	for _, r := range gone {
		s.leave(r, err)
	}
}

// leave hands a request back to its caller; its sequences are already out
// of the batch.
func (s *scheduler) leave(r *request, err error) {
	r.err = err
	s.updateStats()
	close(r.left)
}

func (s *scheduler) updateStats() {
	var kv int64
	reqs := 0
	for i, c := range s.active {
		kv += c.seq.KVBytes()
		// A request's choices join together and leave in order, so they
		// are adjacent in the batch.
		if i == 0 || s.active[i-1].req != c.req {
			reqs++
		}
	}
	for _, j := range s.joining {
		if j.seq != nil {
			kv += j.seq.KVBytes()
		}
	}
	n, ckv := s.cache.usage()
	pooled := s.m.Net.PooledKVBytes()
	s.mu.Lock()
	s.stats.PooledKVBytes = pooled
	s.stats.ActiveRequests = reqs
	s.stats.PrefillingRequests = len(s.joining)
	s.stats.ActiveSequences = len(s.active)
	s.stats.KVBytes = kv
	s.stats.CachedPrompts, s.stats.CachedKVBytes = n, ckv
	s.mu.Unlock()
}
