package cpu

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// countTask counts how often each unit runs and which workers ran.
type countTask struct {
	units   []atomic.Int32
	workers []atomic.Int32
	sleep   time.Duration // per range run by a worker other than 0
}

func (t *countTask) run(worker, lo, hi int) {
	t.workers[worker].Add(1)
	if worker != 0 && t.sleep > 0 {
		time.Sleep(t.sleep)
	}
	for u := lo; u < hi; u++ {
		t.units[u].Add(1)
	}
}

// TestPoolRunsEveryUnitOnce runs many jobs of many shapes back to back, with as many
// processors as workers and with fewer, and checks that every unit of every job runs
// exactly once and that parallel returns only when its job is done.
func TestPoolRunsEveryUnitOnce(t *testing.T) {
	for _, procs := range []int{1, 4} {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		for _, threads := range []int{1, 2, 3, 5} {
			p := newPool(threads)
			for job := range 3000 {
				n, grain := 1+job%97, 1+job%5
				ct := &countTask{units: make([]atomic.Int32, n), workers: make([]atomic.Int32, threads)}
				p.parallel(ct, n, grain)
				for u := range ct.units {
					if c := ct.units[u].Load(); c != 1 {
						t.Fatalf("procs %d threads %d job %d (n=%d grain %d): unit %d ran %d times", procs, threads, job, n, grain, u, c)
					}
				}
			}
			p.close()
		}
	}
}

// TestPoolDoesNotWaitForSlowWorkers: when the other workers are slow to take their
// chunks, the caller runs the job's chunks itself.
func TestPoolDoesNotWaitForSlowWorkers(t *testing.T) {
	p := newPool(4)
	defer p.close()
	ct := &countTask{units: make([]atomic.Int32, 64), workers: make([]atomic.Int32, 4), sleep: 20 * time.Millisecond}
	p.parallel(ct, 64, 1)
	for u := range ct.units {
		if c := ct.units[u].Load(); c != 1 {
			t.Fatalf("unit %d ran %d times", u, c)
		}
	}
	// 16 chunks; each other worker sleeps in its first, by which time the caller has
	// run all the rest.
	if got := ct.workers[0].Load(); got < 16-3 {
		t.Fatalf("the caller ran %d of 16 chunks, want at least 13", got)
	}
}
