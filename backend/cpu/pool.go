package cpu

import (
	"runtime"
	"sync/atomic"
	"time"
)

// A task is one kernel's work, split by the pool into contiguous ranges of its units
// (rows, heads, ...). worker is the index of the goroutine running the range, so a task
// can use per-worker scratch without locking.
type task interface {
	run(worker, lo, hi int)
}

// spinFor is how long an idle worker polls for its next range before parking, and how
// long parallel polls for the workers to finish before yielding the processor between
// polls. A decode step runs dozens of small kernels a few microseconds apart; waking a
// parked goroutine costs several microseconds each time, so, as ggml's threadpool and
// OpenMP do, the workers spin briefly first.
const spinFor = 200 * time.Microsecond

// slot is worker k's mailbox. parallel writes t, lo and hi, then bumps seq; the worker
// runs the range and stores seq into done. Only one range is in flight per worker, and
// parallel writes a slot only after its previous range is done, so the fields need no
// lock. The padding keeps workers' slots on separate cache lines.
type slot struct {
	t      task
	lo, hi int
	seq    atomic.Uint64
	done   atomic.Uint64
	parked atomic.Bool   // the worker is (about to be) blocked on wake
	wake   chan struct{} // one token per wake-up of a parked worker
	_      [64]byte
}

// pool is a fixed set of worker goroutines created by New and stopped by Close. The
// calling goroutine is worker 0; range k always runs on worker k, so per-worker scratch
// needs no lock.
type pool struct {
	n     int
	slots []slot // slots[k] feeds worker k (k ≥ 1)
	quit  atomic.Bool
	// yield is how many polls pass between two runtime.Gosched calls: rarely when every
	// worker can have a processor of its own, at every poll when they cannot (the
	// worker polled for may be waiting for the poller's processor).
	yield int
}

func newPool(n int) *pool {
	p := &pool{n: n, slots: make([]slot, n), yield: 1024}
	if runtime.GOMAXPROCS(0) < n {
		p.yield = 1
	}
	for k := 1; k < n; k++ {
		p.slots[k].wake = make(chan struct{}, 1)
		go p.serve(k)
	}
	return p
}

func (p *pool) serve(k int) {
	s := &p.slots[k]
	var seen uint64
	for {
		seq := s.seq.Load()
		if seq == seen {
			seq = p.await(s, seen)
			if seq == seen { // quit
				return
			}
		}
		seen = seq
		s.t.run(k, s.lo, s.hi)
		s.t = nil
		s.done.Store(seq)
	}
}

// await polls s for a sequence number other than seen for spinFor, then parks until
// parallel or close wakes it. It returns seen after close.
func (p *pool) await(s *slot, seen uint64) uint64 {
	start := time.Now()
	for i := 1; ; i++ {
		if seq := s.seq.Load(); seq != seen {
			return seq
		}
		if p.quit.Load() {
			return seen
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
		s.parked.Store(true)
		if seq := s.seq.Load(); seq != seen || p.quit.Load() {
			if !s.parked.CompareAndSwap(true, false) {
				<-s.wake // parallel saw parked and sent a token: take it
			}
			if seq != seen {
				return seq
			}
			return seen
		}
		<-s.wake
		if seq := s.seq.Load(); seq != seen {
			return seq
		}
		if p.quit.Load() {
			return seen
		}
	}
}

// signal wakes worker k if it is parked.
func (s *slot) signal() {
	if s.parked.Load() && s.parked.CompareAndSwap(true, false) {
		s.wake <- struct{}{}
	}
}

// parallel runs t over units [0, n), cut into at most one range per worker and no range
// smaller than grain units, and returns when every range is done.
func (p *pool) parallel(t task, n, grain int) {
	if n <= 0 {
		return
	}
	parts := min(p.n, max(1, n/max(grain, 1)))
	p.run(t, n, parts)
}

// run cuts [0, n) into parts ranges, range k on worker k.
func (p *pool) run(t task, n, parts int) {
	if parts <= 1 {
		t.run(0, 0, n)
		return
	}
	for k := 1; k < parts; k++ {
		s := &p.slots[k]
		s.t, s.lo, s.hi = t, k*n/parts, (k+1)*n/parts
		s.seq.Add(1)
		s.signal()
	}
	t.run(0, 0, n/parts)
	for k := 1; k < parts; k++ {
		s := &p.slots[k]
		want := s.seq.Load()
		for i := 1; s.done.Load() != want; i++ {
			spinPause()
			if i%p.yield == 0 {
				runtime.Gosched()
			}
		}
	}
}

// close stops the workers; the pool must be idle.
func (p *pool) close() {
	p.quit.Store(true)
	for k := 1; k < p.n; k++ {
		p.slots[k].signal()
	}
}
