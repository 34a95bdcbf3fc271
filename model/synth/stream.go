package synth

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
)

// chunkTarget is the size of the pieces a tensor is generated in. Chunk boundaries
// depend only on the tensor's shape, and each chunk has its own random stream, so the
// output does not depend on the number of threads.
const chunkTarget = 1 << 20

// tensorStream generates one tensor's data in chunks on several goroutines and writes
// the chunks in order.
type tensorStream struct {
	spec    TensorSpec
	index   int    // position of the tensor in the plan: part of every chunk's seed
	seed    uint64 // the model's seed
	threads int
	fill    fillFunc
}

// rowsPerChunk is the number of rows generated together.
func (s *tensorStream) rowsPerChunk() int64 {
	rb := int64(s.spec.Type.RowBytes(int(s.spec.Dims[0])))
	return max(1, chunkTarget/rb)
}

// chunk generates chunk i (rows [i·rowsPerChunk, ...)) into buf, reusing its memory.
func (s *tensorStream) chunk(i int64, buf []byte) []byte {
	rb := int64(s.spec.Type.RowBytes(int(s.spec.Dims[0])))
	per := s.rowsPerChunk()
	rows := min(per, s.spec.Rows()-i*per)
	n := int(rows * rb)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	rng := rand.New(rand.NewPCG(s.seed, uint64(s.index)<<40|uint64(i)))
	s.fill(buf, rng)
	return buf
}

// WriteTo generates the tensor and writes it to w. At most 2·threads chunks are in
// memory at once.
func (s *tensorStream) WriteTo(w io.Writer) (int64, error) {
	per := s.rowsPerChunk()
	n := (s.spec.Rows() + per - 1) / per
	results, free, stop := s.start(n)
	defer stop()
	var written int64
	for i := range n {
		buf := <-results[i]
		k, err := w.Write(buf)
		written += int64(k)
		if err != nil {
			return written, fmt.Errorf("synth: write %s: %w", s.spec.Name, err)
		}
		free <- buf
	}
	return written, nil
}

// start launches the generators for n chunks. Chunk i arrives on results[i]; its
// buffer must then be handed back on free. stop ends the generators early and waits
// for them.
func (s *tensorStream) start(n int64) (results []chan []byte, free chan []byte, stop func()) {
	results = make([]chan []byte, n)
	for i := range results {
		results[i] = make(chan []byte, 1)
	}
	free = make(chan []byte, 2*s.threads) // nil = a buffer not made yet
	for range 2 * s.threads {
		free <- nil
	}
	type job struct {
		i   int64
		buf []byte
	}
	jobs, quit := make(chan job), make(chan struct{})
	var wg sync.WaitGroup
	for range s.threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results[j.i] <- s.chunk(j.i, j.buf)
			}
		}()
	}
	// The dispatcher takes a buffer before handing out each chunk, in chunk order, so
	// the oldest chunk not yet written always has one and the pipeline cannot stall.
	go func() {
		defer close(jobs)
		for i := range n {
			select {
			case buf := <-free:
				select {
				case jobs <- job{i, buf}:
				case <-quit:
					return
				}
			case <-quit:
				return
			}
		}
	}()
	return results, free, func() { close(quit); wg.Wait() }
}
