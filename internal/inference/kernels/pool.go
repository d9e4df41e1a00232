package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"
)

// workers is the persistent pool that parallelises rows of a product. The
// caller works on the job itself, so nWorkers-1 goroutines serve it.
var workers = newWorkerPool(min(runtime.GOMAXPROCS(0), 8)) // at most len(poolJob.shares)

// parallelThreshold is the multiply-add count below which a product runs on
// the calling goroutine until CalibrateSplit has measured this machine
// (split.go): waking a parked worker costs microseconds, more than a small
// matrix takes.
const parallelThreshold = 1 << 15

// Workers spin for a bounded time (poolSpin) before parking, and so does a
// caller waiting for the last chunk of its job. An earlier variant that
// polled for 50 µs ran a 135M decode step 0.93–1.03× as fast as parking at
// once while the shared machine's load was above 10; on a quiet machine
// spinning for 200 µs runs a 10-token 135M decode step 1.3–1.5× as fast and
// a one-token step 1.2–1.3× (BenchmarkPoolSpinSideBySide), and an idle
// engine still parks within 200 µs of its last step.

// poolJob is one parallel region. Each participant (the caller is 0, worker
// i is i+1) owns a contiguous share of [0, n) and claims chunks from its
// front, so it walks its rows in one ascending stream: a 135M decode step's
// products are a few hundred kilobytes each, and restarting the hardware
// prefetcher at every claim (when claims alternated between the two cores)
// made them some 10 % slower than one contiguous half per core. A
// participant whose share is done steals chunks from the back of another's,
// so a worker that the OS has descheduled (the machine is shared) does not
// hold the caller up. Claims halve what is left of the share (at least
// min, at most max, so that a descheduled worker holds no more than that
// up), so a thief finds up to half of it to take.
//
// Jobs are recycled (workerPool.run) so that a decode step allocates
// nothing: some 60 regions a step each allocated one, and the garbage
// brought collections whose mark phase had to stop goroutines that spend
// most of their time in assembly. A worker counts itself in users before it
// reads a job and checks that the job is still the published one, and a
// job is reused only while no worker is in it, so a worker that wakes late
// and still holds an earlier region's job never reads it while it is being
// set up for another region: it finds nothing left to claim and leaves.
type poolJob struct {
	fn     func(lo, hi int)
	n      int64
	min    int64            // the smallest claim
	max    int64            // the largest claim
	equal  bool             // claims of exactly min (poolEqualChunks)
	np     int              // participants
	shares [8]atomic.Uint64 // per participant: unclaimed [lo, hi) as lo<<32 | hi
	done   atomic.Int64     // items finished
	users  atomic.Int32     // workers inside work(this job)
}

type poolWorker struct {
	id     int // participant index: 1, 2, …
	parked atomic.Bool
	wake   chan struct{} // capacity 1: one wake-up per park
}

type workerPool struct {
	n       int
	mu      sync.Mutex    // one parallel region at a time; others run serially
	splitAt atomic.Int64  // work from which a product is split: parallelThreshold, or CalibrateSplit's (split.go)
	regions atomic.Uint64 // parallel regions run so far (PoolRegions)
	job     atomic.Pointer[poolJob]
	// seq counts published jobs: a recycled job can be published again, so
	// workers tell a new region from the one they last served by it.
	seq atomic.Uint64
	// ring holds the jobs run reuses in turn (only the holder of mu
	// touches it); a region's job is reused two regions later.
	ring    [2]*poolJob
	next    int
	workers []*poolWorker
	// The caller parks on callerWake if the last chunk is still running
	// when it runs out of chunks; the participant that finishes the job
	// wakes it.
	callerParked atomic.Bool
	callerWake   chan struct{}
	// hint is the next product's weights (Prefetch: a weak handle, so that
	// the pool keeps no model alive); callerCursor is the caller's progress
	// through it (only the holder of mu touches it).
	hint         atomic.Pointer[weak.Pointer[PrefetchHint]]
	callerCursor prefetchCursor
}

func newWorkerPool(n int) *workerPool {
	p := &workerPool{n: min(max(n, 1), len(poolJob{}.shares)), callerWake: make(chan struct{}, 1)}
	p.splitAt.Store(parallelThreshold)
	for i := 1; i < p.n; i++ {
		w := &poolWorker{id: i, wake: make(chan struct{}, 1)}
		p.workers = append(p.workers, w)
		go p.serve(w)
	}
	return p
}

// serve is a worker's loop: run each new job, then park until a caller
// wakes it.
func (p *workerPool) serve(w *poolWorker) {
	var last uint64
	var cur prefetchCursor
	for {
		if seq := p.seq.Load(); seq != last {
			last = seq
			p.join(w.id)
			continue
		}
		// Before spinning, read this worker's share of the next product's
		// weights (prefetch.go), stopping as soon as a region starts.
		cur.run(p.hint.Load(), w.id, p.n, func() bool { return p.seq.Load() != last })
		if p.spinUntilNewJob(last) {
			continue
		}
		// Park. The flag is set before the job is re-read and the caller
		// publishes the job before reading flags, so either this worker sees
		// the new job or the caller sees the flag and sends a wake-up.
		w.parked.Store(true)
		if p.seq.Load() != last && w.parked.CompareAndSwap(true, false) {
			continue
		}
		<-w.wake
	}
}

// join works on the published job as participant self. It counts itself
// in the job's users first and then checks that the job is still the
// published one: run reuses a job only while it has no users, so once the
// check passes the job's fields stay as published until this worker
// leaves. A job replaced in between is left alone (its region may be over
// and the job being set up again); the caller publishes a job before
// moving seq, so the worker comes back for the newer one.
func (p *workerPool) join(self int) {
	j := p.job.Load()
	j.users.Add(1)
	if p.job.Load() == j {
		p.work(j, self)
	}
	j.users.Add(-1)
}

// work claims and runs chunks of j as participant self, first from the
// front of its own share, then from the backs of the others'; whoever
// finishes the last item wakes a parked caller. A participant adds what it
// ran to j.done once, when it finds nothing left to claim, rather than per
// chunk: the counter's cache line then moves between the cores once per
// participant and region instead of once per chunk, and a caller spinning
// on it for the last chunk does not pull it away from the worker in
// between. A 135M-class decode step of one token measured 0.99–1.03× as
// fast, ten tokens 1.00–1.01× (BenchmarkPoolDoneSideBySide, within the
// noise of a shared host); putting each participant's share word on a
// cache line of its own measured no difference on top.
func (p *workerPool) work(j *poolJob, self int) {
	var ran int64
	for {
		lo, hi, ok := j.claimFront(self)
		if !ok {
			if lo, hi, ok = j.steal(self); !ok {
				break
			}
		}
		j.fn(int(lo), int(hi))
		if poolDonePerChunk.Load() {
			if j.done.Add(hi-lo) == j.n && p.callerParked.CompareAndSwap(true, false) {
				p.callerWake <- struct{}{}
			}
			continue
		}
		ran += hi - lo
	}
	if ran > 0 && j.done.Add(ran) == j.n && p.callerParked.CompareAndSwap(true, false) {
		p.callerWake <- struct{}{}
	}
}

// poolDonePerChunk switches the pool back to counting finished items per
// chunk, for BenchmarkPoolDoneSideBySide.
var poolDonePerChunk atomic.Bool

// claimSize is how many of rem unclaimed items of a share one claim takes.
func (j *poolJob) claimSize(rem int64) int64 {
	if j.equal {
		return min(j.min, rem)
	}
	return min(max(j.min, (rem+1)/2), j.max, rem)
}

// claimFront claims a chunk from the front of participant self's share.
func (j *poolJob) claimFront(self int) (lo, hi int64, ok bool) {
	if self >= j.np {
		return 0, 0, false
	}
	s := &j.shares[self]
	for {
		v := s.Load()
		lo, end := int64(v>>32), int64(v&0xffffffff)
		if lo >= end {
			return 0, 0, false
		}
		hi := lo + j.claimSize(end-lo)
		if s.CompareAndSwap(v, uint64(hi)<<32|uint64(end)) {
			return lo, hi, true
		}
	}
}

// steal claims a chunk from the back of another participant's share, the
// one with the most left.
func (j *poolJob) steal(self int) (lo, hi int64, ok bool) {
	for {
		best, bestRem := -1, int64(0)
		var bestV uint64
		for i := range j.np {
			if i == self {
				continue
			}
			v := j.shares[i].Load()
			if rem := int64(v&0xffffffff) - int64(v>>32); rem > bestRem {
				best, bestRem, bestV = i, rem, v
			}
		}
		if best < 0 {
			return 0, 0, false
		}
		start, end := int64(bestV>>32), int64(bestV&0xffffffff)
		lo := end - j.claimSize(end-start)
		if j.shares[best].CompareAndSwap(bestV, uint64(start)<<32|uint64(lo)) {
			return lo, end, true
		}
	}
}

// parallelFor runs fn over [0, n) in contiguous chunks spread over the pool.
// fn may be called several times, with disjoint ranges, on any goroutine.
// It is a variable so that benchmarks can measure the products on another
// pool side by side.
var parallelFor = poolParallelFor

// poolParallelFor is parallelFor for the weight products: split from the
// calibrated threshold (split.go).
func poolParallelFor(n, work int, fn func(lo, hi int)) {
	workers.parallel(n, work, workers.splitAt.Load(), fn)
}

// parallel runs fn over [0, n) on the pool when work reaches threshold,
// else on the caller.
func (p *workerPool) parallel(n, work int, threshold int64, fn func(lo, hi int)) {
	if int64(work) < threshold || p.n == 1 || n < 2*p.n || n >= 1<<32 || !p.mu.TryLock() {
		// Small jobs, and jobs issued while the pool is busy (another
		// caller, or fn itself calling parallelFor), run here.
		fn(0, n)
		return
	}
	defer p.mu.Unlock()
	p.run(n, work, fn)
}

// run is one parallel region of fn over [0, n) on the pool, work being
// the region's size in its caller's units (multiply-adds for a product);
// the caller holds p.mu.
func (p *workerPool) run(n, work int, fn func(lo, hi int)) {
	p.regions.Add(1)
	// Claims shrink as a share drains (half of what is left, at most
	// n ÷ 4·participants and at least claimItems so that claims stay few), and
	// the participants finish within a small chunk of each other. Equal chunks of n ÷ 4·participants
	// (poolEqualChunks) left one of them idle for up to an eighth of each
	// product, spinning until the other's last chunk was done.
	j := p.ring[p.next]
	if j == nil || j.users.Load() != 0 {
		// A worker still holds this slot's job from two regions ago (it
		// woke late and has not left yet): leave that one to it.
		j = new(poolJob)
		p.ring[p.next] = j
	}
	p.next = (p.next + 1) % len(p.ring)
	least := claimItems(n, work)
	j.fn, j.n, j.min, j.max, j.equal, j.np = fn, int64(n), least, max(least, int64(n/(4*p.n))), false, p.n
	if poolEqualChunks.Load() {
		j.min, j.equal = int64((n+4*p.n-1)/(4*p.n)), true
	}
	for i := range j.np {
		j.shares[i].Store(uint64(i*n/p.n)<<32 | uint64((i+1)*n/p.n))
	}
	j.done.Store(0)
	p.job.Store(j)
	p.seq.Add(1)
	// The job must not keep the caller's function (and what it refers
	// to) alive after the region: no claim can succeed once it is over, so
	// no worker reads fn again.
	defer func() { j.fn = nil }()
	// Read each flag before swapping it: a CAS takes the flag's cache line
	// exclusively even when it fails, and a spinning worker, which never
	// writes the flag, then pays a transfer to read it again. On a host
	// whose two cores are far apart that halved the cost of an empty
	// region (BenchmarkParallelForHandoff 2.0 → 1.3 µs; 0.9 µs when the
	// chunks write no shared line) and ran a one-token
	// 15M step about 2 % faster; 135M and ten-token steps did not change.
	for _, w := range p.workers {
		if w.parked.Load() && w.parked.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
	p.work(j, 0)
	if j.done.Load() == j.n {
		return
	}
	// While the last chunks run elsewhere, read the caller's share of the
	// next product's weights (prefetch.go).
	p.callerCursor.run(p.hint.Load(), 0, p.n, func() bool { return j.done.Load() == j.n })
	if j.done.Load() == j.n {
		return
	}
	if p.spinUntilDone(j) {
		return
	}
	p.callerParked.Store(true)
	if j.done.Load() == j.n && p.callerParked.CompareAndSwap(true, false) {
		return
	}
	<-p.callerWake
}

// PoolRegions is the number of parallel regions the worker pool has run:
// a caller that sees it move knows the pool's workers are awake and
// spinning on the other cores for a while (poolSpin), holding them.
func PoolRegions() uint64 { return workers.regions.Load() }

// claimItems is the smallest claim of a region of n items and the given
// work: n ÷ 32, and no less than poolClaimWork of work. A claim is a
// compare-and-swap on a share word both cores write, and on the Zen 5 host
// of 2026-11-27 a 288×288 product of ten tokens (18 groups of rows, 1.4 µs
// of kernel on each core) made five claims on each core of one or two
// groups, 150 ns of kernel each, and its profile showed as much time in
// claiming as in the kernel. With claims of at least poolClaimWork
// (BenchmarkPoolClaimsSideBySide, the products of a decode step):
// 15M-class one token 1.14–1.19× as fast, ten tokens 1.04×; 135M-class,
// whose weights stream from memory, 0.99–1.04×. In a small product a claim
// can now be a participant's whole share (at most about 2·poolClaimWork of
// work): a worker descheduled inside it holds up that much where it held
// an eighth of the product before, while a worker that has not yet arrived
// holds nothing, and its share is stolen as before.
func claimItems(n, work int) int64 {
	least := int64(max(1, n/32))
	if cw := poolClaimWork.Load(); cw > 0 && work > 0 {
		least = max(least, min(int64(n), (int64(n)*cw+int64(work)-1)/int64(work)))
	}
	return least
}

// poolClaimWork is the least work a claim takes (multiply-adds: about
// 1.8 µs of a ten-token product on one core); 0 switches the floor off,
// for BenchmarkPoolClaimsSideBySide.
var poolClaimWork atomic.Int64

func init() { poolClaimWork.Store(defaultClaimWork) }

const defaultClaimWork = 1 << 19

// poolEqualChunks switches the pool back to equal chunks of n ÷
// 4·participants, for BenchmarkPoolChunksSideBySide.
var poolEqualChunks atomic.Bool

// poolSpin is how long a worker polls for the next job, and a caller for the
// last chunk of its job, before parking. A batched decode step is some 150
// parallel regions of 50–300 µs separated by a few microseconds of serial
// work; waking a parked worker through the OS costs tens of microseconds, so
// without spinning the worker joined each region late and the caller did
// about two thirds of the products (measured in a 10-stream 135M profile).
// The spin is bounded, so an idle engine parks within poolSpin of its last
// step. It is atomic so that benchmarks can compare settings side by side.
var poolSpin atomic.Int64

func init() { poolSpin.Store(int64(defaultPoolSpin)) }

const defaultPoolSpin = 200 * time.Microsecond

// spinUntilNewJob polls for up to poolSpin for a job published after the
// one numbered last (seq) and reports whether one arrived.
func (p *workerPool) spinUntilNewJob(last uint64) bool {
	return spin(func() bool { return p.seq.Load() != last })
}

// spinUntilDone polls for j to finish for up to poolSpin and reports whether
// it did.
func (p *workerPool) spinUntilDone(j *poolJob) bool {
	return spin(func() bool { return j.done.Load() == j.n })
}

// spin calls ready until it returns true or poolSpin has passed, reading the
// clock only every 64 polls.
func spin(ready func() bool) bool {
	limit := time.Duration(poolSpin.Load())
	if limit <= 0 {
		return false
	}
	var start time.Time
	for i := 0; ; i++ {
		if ready() {
			return true
		}
		if i%64 == 0 {
			if i == 0 {
				start = time.Now()
			} else if time.Since(start) > limit {
				return false
			}
		}
	}
}
