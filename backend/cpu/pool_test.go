package cpu

import (
	"fmt"
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
// exactly once and that parallel (and parallelStream) returns only when its job is done.
func TestPoolRunsEveryUnitOnce(t *testing.T) {
	for _, procs := range []int{1, 4} {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		for _, threads := range []int{1, 2, 3, 5} {
			p := newPool(threads)
			for job := range 3000 {
				n, grain := 1+job%97, 1+job%5
				ct := &countTask{units: make([]atomic.Int32, n), workers: make([]atomic.Int32, threads)}
				if job%2 == 0 {
					p.parallel(ct, n, grain)
				} else {
					p.parallelStream(ct, n, grain)
				}
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

// spinTask burns about work iterations of arithmetic per unit.
type spinTask struct {
	work int
	out  []float64
}

func (t *spinTask) run(worker, lo, hi int) {
	for u := lo; u < hi; u++ {
		x := float64(u)
		for range t.work {
			x = x*1.0000001 + 1e-9
		}
		t.out[u] = x
	}
}

// BenchmarkPoolParallel times one parallel job of 64 units of about 1 µs each (a
// prompt-sized kernel) on 1 and 2 workers: the second worker should halve the time.
func BenchmarkPoolParallel(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			p := newPool(threads)
			defer p.close()
			t := &spinTask{work: 250, out: make([]float64, 64)}
			for b.Loop() {
				p.parallel(t, 64, 1)
			}
		})
	}
}

// TestChunkBound: the chunks of a job cover its units in order, from 0 to units, and
// (but for rounding) shrink from the first to the last.
func TestChunkBound(t *testing.T) {
	for _, tc := range []struct{ chunks, units int }{{2, 2}, {8, 8}, {8, 36}, {8, 1000}, {16, 4000}, {512, 1 << 20}} {
		if b := chunkBound(0, tc.chunks, tc.units); b != 0 {
			t.Errorf("%+v: chunk 0 starts at %d", tc, b)
		}
		if b := chunkBound(tc.chunks, tc.chunks, tc.units); b != tc.units {
			t.Errorf("%+v: last chunk ends at %d", tc, b)
		}
		prev := tc.units
		for k := range tc.chunks {
			lo, hi := chunkBound(k, tc.chunks, tc.units), chunkBound(k+1, tc.chunks, tc.units)
			if hi < lo || hi-lo > prev+1 {
				t.Fatalf("%+v: chunk %d is [%d, %d), after a chunk of %d", tc, k, lo, hi, prev)
			}
			prev = hi - lo
		}
	}
	if first, last := chunkBound(1, 8, 3600), 3600-chunkBound(7, 8, 3600); first != 800 || last != 100 {
		t.Errorf("8 chunks of 3600: first %d, last %d; want 800 and 100", first, last)
	}
}

// TestPoolBoundCoversUnits: the chunks of a job cover its units in order, from 0 to
// units, and, but for rounding, shrink from each end towards the middle.
func TestPoolBoundCoversUnits(t *testing.T) {
	p := &pool{}
	for _, tc := range []struct{ chunks, units int }{{2, 2}, {2, 9}, {3, 3}, {5, 7}, {8, 8}, {8, 1000}, {9, 100}, {16, 4000}} {
		p.chunks, p.units = tc.chunks, tc.units
		if b := p.bound(0); b != 0 {
			t.Errorf("%+v: chunk 0 starts at %d", tc, b)
		}
		if b := p.bound(tc.chunks); b != tc.units {
			t.Errorf("%+v: last chunk ends at %d", tc, b)
		}
		size := func(c int) int { return p.bound(c+1) - p.bound(c) }
		for c := range tc.chunks {
			if size(c) < 0 {
				t.Fatalf("%+v: chunk %d is [%d, %d)", tc, c, p.bound(c), p.bound(c+1))
			}
			if mid := (tc.chunks+1)/2 - 1; c < mid && size(c+1) > size(c)+1 || c > mid+1 && size(c-1) > size(c)+1 {
				t.Fatalf("%+v: chunk %d of %d units is smaller than its neighbour nearer the middle", tc, c, size(c))
			}
		}
	}
	p.chunks, p.units = 8, 3600
	if first, last := p.bound(1), 3600-p.bound(7); first != 720 || last != 720 {
		t.Errorf("8 chunks of 3600: first %d, last %d; want 720 and 720", first, last)
	}
}

// rangeTask records which worker ran each unit.
type rangeTask struct{ by []atomic.Int32 }

func (t *rangeTask) run(worker, lo, hi int) {
	for u := lo; u < hi; u++ {
		t.by[u].Store(int32(worker))
	}
}

// TestPoolCallerTakesTheFront: with two workers the caller runs a prefix of every job's
// units and the other worker the rest, so that each keeps its part of the data a job
// of the same shape reads again.
func TestPoolCallerTakesTheFront(t *testing.T) {
	p := newPool(2)
	defer p.close()
	for job := range 2000 {
		n := 8 + job%200
		rt := &rangeTask{by: make([]atomic.Int32, n)}
		p.parallelStream(rt, n, 1)
		for u := 1; u < n; u++ {
			if rt.by[u].Load() < rt.by[u-1].Load() {
				t.Fatalf("job %d: unit %d ran on worker %d after unit %d on worker %d", job, u, rt.by[u].Load(), u-1, rt.by[u-1].Load())
			}
		}
	}
}
