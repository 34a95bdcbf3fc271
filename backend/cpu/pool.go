package cpu

import (
	"runtime"
	"sync/atomic"
	"time"
)

// A task is one kernel's work, split by the pool into contiguous ranges of its units
// (rows, heads, ...). worker is the index of the goroutine running the range, so a task
// can use per-worker scratch without locking. Which worker runs which range is decided
// at run time, so a task must compute every unit the same way whichever worker takes it.
type task interface {
	run(worker, lo, hi int)
}

// spinFor is how long an idle worker polls for its next job before parking (parallel
// polls for the last chunks for waitSpin only). A decode step runs dozens of
// small kernels a few microseconds apart; waking a parked goroutine costs several
// microseconds each time, so, as ggml's threadpool and OpenMP do, the workers spin
// briefly first.
const spinFor = 200 * time.Microsecond

// waitSpin is how long parallel polls for chunks that other workers are still running
// before it parks until the last one is done. It is short: a worker that takes longer
// was most likely descheduled (a machine shared with other processes), and the caller's
// spinning would only take the processor it needs.
const waitSpin = 20 * time.Microsecond

// chunksPerWorker is how many chunks a job is cut into per worker (at most), so that
// the workers that run take the chunks of one that is late, descheduled or parked.
const chunksPerWorker = 4

// streamChunksPerWorker is chunksPerWorker for the jobs that only stream weights
// (mat-vecs of decoding, parallelStream), whose chunks cost nothing to start. It was 8
// while every worker claimed from the front (BenchmarkDecodeQ4_0: 21.4 cpuGB/s against
// 20.1 with 4); since the caller claims from the front and the others from the back
// (work), each keeps its share of the weights in its cache and 4 do better: synth-256
// decoding (tg32, 2 threads, 80th percentile of 80 runs) +9% (Q4_0) and +4% (Q4_K_M)
// over 8, the two ends alike. MultiMatMul's sections count their products' chunks.
const streamChunksPerWorker = 4

// maxChunks bounds a job's chunk count: claim packs it in 16 bits.
const maxChunks = 1<<16 - 1

// minChunkWork is the least work (multiply-adds, or elements touched) worth a chunk of
// its own: a few microseconds of AVX2 kernel time, about what handing a chunk to
// another worker costs. Smaller jobs run on the caller alone.
const minChunkWork = 1 << 15

// grainFor returns the grain (units per chunk) for units that cost work each: at least
// min, and enough units to make minChunkWork.
func grainFor(work, min int) int {
	return max(min, minChunkWork/max(work, 1))
}

// worker is one goroutine's mailbox, padded to its own cache line.
type worker struct {
	parked atomic.Bool   // the goroutine is (about to be) blocked on wake
	wake   chan struct{} // one token per wake-up of a parked goroutine
	_      [64]byte
}

// pool is a fixed set of worker goroutines created by New and stopped by Close; the
// calling goroutine is worker 0. parallel publishes one job at a time, cut into chunks
// that every worker, the caller included, claims one by one from a shared counter: a
// worker that is slow to wake (parked, or descheduled by the operating system) leaves
// its chunks to the others instead of holding up the whole job.
type pool struct {
	workers []worker // one per worker, len(workers) of them: workers[k] for goroutine k ≥ 1 (workers[0], the caller's, unused)

	// The job: written by parallel before it publishes claim, read by a worker only
	// after it has claimed one of the job's chunks (the job cannot end before that
	// chunk is done, so the fields stay put while it runs).
	t         task
	units     int
	epoch     uint32
	chunks    int
	claim     atomic.Uint64 // epoch<<32 | front<<16 | back: chunks [front, back) are left to claim
	done      atomic.Uint64 // epoch<<32 | chunks done
	waiting   atomic.Uint32 // the epoch of the job parallel is (about to be) parked on, or 0
	callerTok chan struct{}
	quit      atomic.Bool
	// yield is how many polls pass between two runtime.Gosched calls: rarely when every
	// worker can have a processor of its own, at every poll when they cannot (the
	// worker polled for may be waiting for the poller's processor).
	yield int
	_     [64]byte
}

func newPool(n int) *pool {
	p := &pool{workers: make([]worker, n), yield: 1024, callerTok: make(chan struct{}, 1)}
	if runtime.GOMAXPROCS(0) < n {
		p.yield = 1
	}
	for k := 1; k < n; k++ {
		p.workers[k].wake = make(chan struct{}, 1)
		go p.serve(k)
	}
	return p
}

// serve is worker k's loop: wait for a job newer than the last one seen, take its
// chunks until none is left, repeat.
func (p *pool) serve(k int) {
	w := &p.workers[k]
	var seen uint32
	for {
		v := p.claim.Load()
		if uint32(v>>32) == seen {
			if v = p.await(w, seen); p.quit.Load() {
				return
			}
		}
		seen = uint32(v >> 32)
		p.work(k, seen)
	}
}

// chunkBound is where chunk k of chunks starts in a job of units: chunk sizes fall
// linearly from the first chunk to the last (chunk j ∝ chunks−j, trapezoid
// self-scheduling), so that the workers take large chunks first and the last ones,
// which decide how long the others wait at the job's end, are small (a last chunk of
// 1/36 of the job for 8 chunks instead of 1/8). A chunk may be empty.
func chunkBound(k, chunks, units int) int {
	return units * (k * (2*chunks - k + 1)) / (chunks * (chunks + 1))
}

// work runs chunks of job epoch e on worker k until none is left to claim: the caller
// (k = 0) claims them from the front, the other workers from the back. Each worker
// therefore takes about the same units at every call of a job of the same shape, so
// that the weights of its share of a decoding step's mat-vecs stay in its core's cache
// from one token to the next, instead of moving between the cores with the chunks.
func (p *pool) work(k int, e uint32) {
	for {
		v := p.claim.Load()
		front, back := int(v>>16&0xffff), int(v&0xffff)
		if uint32(v>>32) != e || front >= back {
			return
		}
		c, next := front, v+1<<16
		if k > 0 {
			c, next = back-1, v-1
		}
		if !p.claim.CompareAndSwap(v, next) {
			continue // another worker took a chunk: try again
		}
		chunks := p.chunks // read before this chunk is done: the job may end with it
		if lo, hi := p.bound(c), p.bound(c+1); lo < hi {
			p.t.run(k, lo, hi)
		}
		if d := p.done.Add(1); int(uint32(d)) == chunks && p.waiting.Load() == e && p.waiting.CompareAndSwap(e, 0) {
			p.callerTok <- struct{}{}
		}
	}
}

// bound is where chunk c of the current job starts: the chunks of the front half
// (those the caller claims first) fall in size from the job's start to its middle,
// those of the back half from its end to the middle (chunkBound, mirrored), so that
// the last chunks claimed, where the caller and the workers meet, are the small ones.
func (p *pool) bound(c int) int {
	front := (p.chunks + 1) / 2
	mid := p.units * front / p.chunks
	if c <= front {
		return chunkBound(c, front, mid)
	}
	return p.units - chunkBound(p.chunks-c, p.chunks-front, p.units-mid)
}

// await polls for a job other than seen for spinFor, then parks until parallel or close
// wakes it, and returns the claim word it saw.
func (p *pool) await(w *worker, seen uint32) uint64 {
	start := time.Now()
	for i := 1; ; i++ {
		if v := p.claim.Load(); uint32(v>>32) != seen || p.quit.Load() {
			return v
		}
		spinPause()
		if i%p.yield == 0 {
			runtime.Gosched()
		}
		if i%256 == 0 && time.Since(start) > spinFor {
			break
		}
	}
	for {
		w.parked.Store(true)
		if v := p.claim.Load(); uint32(v>>32) != seen || p.quit.Load() {
			if !w.parked.CompareAndSwap(true, false) {
				<-w.wake // parallel saw parked and sent a token: take it
			}
			return v
		}
		<-w.wake
		if v := p.claim.Load(); uint32(v>>32) != seen || p.quit.Load() {
			return v
		}
	}
}

// signal wakes the worker if it is parked.
func (w *worker) signal() {
	if w.parked.Load() && w.parked.CompareAndSwap(true, false) {
		w.wake <- struct{}{}
	}
}

// parallel runs t over units [0, n), cut into at most n/grain chunks (and at most
// chunksPerWorker per worker) of falling sizes (chunkBound), and returns when every
// chunk is done.
func (p *pool) parallel(t task, n, grain int) { p.parallelChunks(t, n, grain, chunksPerWorker) }

// parallelStream is parallel for a job that streams weights: up to
// streamChunksPerWorker chunks per worker.
func (p *pool) parallelStream(t task, n, grain int) {
	p.parallelChunks(t, n, grain, streamChunksPerWorker)
}

// parallelChunks is parallel with up to perWorker chunks per worker.
func (p *pool) parallelChunks(t task, n, grain, perWorker int) {
	if n <= 0 {
		return
	}
	nw := len(p.workers)
	chunks := min(n/max(grain, 1), perWorker*nw, maxChunks)
	if chunks <= 1 || nw <= 1 {
		t.run(0, 0, n)
		return
	}
	p.t, p.units, p.chunks = t, n, chunks
	if p.epoch++; p.epoch == 0 { // 0 is no job (waiting)
		p.epoch++
	}
	e := p.epoch
	p.done.Store(uint64(e) << 32)
	p.claim.Store(uint64(e)<<32 | uint64(chunks))
	for k := 1; k < len(p.workers); k++ {
		p.workers[k].signal()
	}
	p.work(0, e)
	p.wait(e, chunks)
	p.t = nil
}

// wait returns when all chunks of job e are done: it polls for waitSpin, then parks
// until the worker that finishes the last chunk wakes it.
func (p *pool) wait(e uint32, chunks int) {
	want := uint64(e)<<32 | uint64(chunks)
	start := time.Now()
	for i := 1; p.done.Load() != want; i++ {
		spinPause()
		if i%p.yield == 0 {
			runtime.Gosched()
		}
		if i%64 == 0 && time.Since(start) > waitSpin {
			p.waiting.Store(e)
			if p.done.Load() == want {
				if !p.waiting.CompareAndSwap(e, 0) {
					<-p.callerTok
				}
				return
			}
			<-p.callerTok
			return
		}
	}
}

// close stops the workers; the pool must be idle.
func (p *pool) close() {
	p.quit.Store(true)
	for k := 1; k < len(p.workers); k++ {
		p.workers[k].signal()
	}
}
