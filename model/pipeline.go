package model

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// A batch longer than Options.MicroBatch is cut into micro-batches, and the host
// enqueues them one after the other, each through every stage, without waiting: since
// every device runs its queue asynchronously and each hop is ordered by its transfer's
// events, stage k computes micro-batch i+1 while stage k+1 computes micro-batch i. Each
// micro-batch uses its own rows of the batch scratch, so no micro-batch overwrites
// what a neighbour still reads. A micro-batch computes exactly what a batch of its size
// computes, so the results are those of running the micro-batches one by one.

// layout is the views of the session's scratch for one batch shape: n rows, logits for
// rows [first, first+count), in micro-batches of ub rows. It is rebuilt only when the
// shape changes, so steady decoding does not allocate.
type layout struct {
	n, first, count, ub int
	tokens              backend.Buffer   // stage 0's (n, 1) tokens
	pos                 []backend.Buffer // every stage's (n, 1) positions
	in, out             [][]activations  // per micro-batch, per stage
	logits              backend.Buffer   // the last stage's (count, vocab) logits
}

// layout returns the views for a batch of n rows with logits for [first, first+count).
func (s *Session) layout(n, first, count int) *layout {
	ub := s.m.opts.MicroBatch
	if l := &s.lay; l.tokens != nil && l.n == n && l.first == first && l.count == count && l.ub == ub {
		return l
	}
	l := layout{n: n, first: first, count: count, ub: ub}
	l.tokens = s.stages[0].full.tokens.Slice(0, n)
	for k := range s.stages {
		l.pos = append(l.pos, s.stages[k].full.pos.Slice(0, n))
	}
	for row0 := 0; row0 < n; row0 += ub {
		mn := min(ub, n-row0)
		in, out := make([]activations, len(s.stages)), make([]activations, len(s.stages))
		for k := range s.stages {
			in[k] = s.stages[k].full.rows(row0, mn)
			lo, hi := max(first, row0), min(first+count, row0+mn)
			if hi > lo {
				out[k] = s.stages[k].full.outRows(lo, hi-lo, row0, lo-first)
			}
		}
		l.in, l.out = append(l.in, in), append(l.out, out)
	}
	if count > 0 {
		l.logits = s.stages[len(s.stages)-1].full.logits.Slice(0, count)
	}
	s.lay = l
	return &s.lay
}

// rows returns views of rows [row0, row0+n) of a batch scratch.
func (f *activations) rows(row0, n int) activations {
	sl := func(b backend.Buffer) backend.Buffer {
		if b == nil {
			return nil
		}
		return b.Slice(row0, n)
	}
	return activations{n: n, tokens: sl(f.tokens), pos: sl(f.pos), x: sl(f.x), xb: sl(f.xb),
		wireIn: sl(f.wireIn), wireOut: sl(f.wireOut), q: sl(f.q), k: sl(f.k), v: sl(f.v),
		att: sl(f.att), hb: sl(f.hb), hb2: sl(f.hb2), logits: sl(f.logits)}
}

// outRows returns the views for count output rows: x and xb at batch row lo, hb and hb2
// at the micro-batch's first row row0, logits at row lrow of the logits scratch.
func (f *activations) outRows(lo, count, row0, lrow int) activations {
	o := activations{n: count, x: f.x.Slice(lo, count), xb: f.xb.Slice(lo, count),
		hb: f.hb.Slice(row0, count), hb2: f.hb2.Slice(row0, count)}
	if f.logits != nil {
		o.logits = f.logits.Slice(lrow, count)
	}
	return o
}

// batch runs one batch at s.pos and downloads the logits of rows [first, first+count)
// into dst.
func (s *Session) batch(tokens []int32, first, count int, dst []float32) error {
	if s.m.rank != nil { // one rank of a multi-process pipeline (rank.go)
		return s.m.rank.batch(s, tokens, first, count, dst)
	}
	n := len(tokens)
	l := s.layout(n, first, count)
	ids, pos := s.staged[:4*n], s.staged[4*n:8*n]
	for i, t := range tokens {
		binary.LittleEndian.PutUint32(ids[4*i:], uint32(t))
		binary.LittleEndian.PutUint32(pos[4*i:], uint32(s.pos+i))
	}
	if err := s.stages[0].dev.Upload(l.tokens, ids); err != nil {
		return err
	}
	for k := range s.stages {
		if err := s.stages[k].dev.Upload(l.pos[k], pos); err != nil {
			return err
		}
	}
	if err := s.run(l); err != nil {
		return errors.Join(err, s.sync())
	}
	if err := s.sync(); err != nil {
		return err
	}
	if count > 0 {
		last := s.stages[len(s.stages)-1].dev
		if err := last.Download(tensor.Float32Bytes(dst[:count*s.m.cfg.NVocab]), l.logits); err != nil {
			return err
		}
	}
	s.pos += n
	return nil
}

// run enqueues the forward pass of every micro-batch of l. A one-token batch records
// each stage on a device that records (backend.Recorder) once per session, and replays
// it later: its tokens and positions were uploaded into the same device buffers.
func (s *Session) run(l *layout) error {
	var keys []string
	if l.n == 1 {
		keys = s.keys[min(l.count, 1)]
	}
	for i := range l.in {
		if err := s.m.forward(l.in[i], l.out[i], s.caches, keys); err != nil {
			return fmt.Errorf("micro-batch %d: %w", i, err)
		}
	}
	return nil
}

// sync waits for every stage's device and returns their failures.
func (s *Session) sync() error {
	var errs []error
	for k := range s.stages {
		if err := s.stages[k].dev.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("stage %d on %s: %w", k, s.stages[k].dev.Name(), err))
		}
	}
	return errors.Join(errs...)
}
