package cpu

import "sync"

// A task is one kernel's work, split by the pool into contiguous ranges of its units
// (rows, heads, ...). worker is the index of the goroutine running the range, so a task
// can use per-worker scratch without locking.
type task interface {
	run(worker, lo, hi int)
}

// chunk is one range of a task sent to a worker.
type chunk struct {
	t      task
	lo, hi int
}

// pool is a fixed set of worker goroutines created by New and stopped by Close. The
// calling goroutine is worker 0; workers 1..n-1 each read their own channel, so range k
// always runs on worker k and per-worker scratch needs no lock.
type pool struct {
	n    int
	work []chan chunk // work[k] feeds worker k (k ≥ 1)
	wg   sync.WaitGroup
}

func newPool(n int) *pool {
	p := &pool{n: n, work: make([]chan chunk, n)}
	for k := 1; k < n; k++ {
		p.work[k] = make(chan chunk, 1)
		go p.serve(k)
	}
	return p
}

func (p *pool) serve(k int) {
	for c := range p.work[k] {
		c.t.run(k, c.lo, c.hi)
		p.wg.Done()
	}
}

// parallel runs t over units [0, n), cut into at most one range per worker and no range
// smaller than grain units, and returns when every range is done.
func (p *pool) parallel(t task, n, grain int) {
	if n <= 0 {
		return
	}
	parts := min(p.n, max(1, n/max(grain, 1)))
	if parts == 1 {
		t.run(0, 0, n)
		return
	}
	p.wg.Add(parts - 1)
	for k := 1; k < parts; k++ {
		p.work[k] <- chunk{t, k * n / parts, (k + 1) * n / parts}
	}
	t.run(0, 0, n/parts)
	p.wg.Wait()
}

// close stops the workers; the pool must be idle.
func (p *pool) close() {
	for k := 1; k < p.n; k++ {
		close(p.work[k])
	}
}
