package model

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// One forward pass evaluates the rows of one or more sequences (sessions), each row at
// its own position, concatenated in the order given. The matmuls, norms and RoPE run
// once over all rows; the KV cache writes and attention run per sequence, on its rows
// and its own cache, so a sequence's rows never see another's (attention row i reads
// cache rows 0..positions[i] of its session's cache).
//
// A pass longer than Options.MicroBatch is cut into micro-batches, and the host
// enqueues them one after the other, each through every stage, without waiting: since
// every device runs its queue asynchronously and each hop is ordered by its transfer's
// events, stage k computes micro-batch i+1 while stage k+1 computes micro-batch i. Each
// micro-batch uses its own rows of the scratch, so no micro-batch overwrites what a
// neighbour still reads. A micro-batch computes exactly what a batch of its size
// computes, so the results are those of running the micro-batches one by one; a cut
// may fall inside a sequence, whose later rows then attend to cache rows the earlier
// micro-batch wrote.

// seqIn is one sequence of a pass: tokens appended to s at s.pos, and the logits of its
// last logits rows downloaded into out (logits × vocab floats).
type seqIn struct {
	s      *Session
	tokens []int32
	logits int
	out    []float32
}

// seqShape is what a layout depends on for one sequence.
type seqShape struct {
	s         *Session
	n, logits int
}

// layout is the views of a scratch for one batch shape: the sequences' row counts and
// output rows, in micro-batches of ub rows. It is rebuilt only when the shape changes,
// so steady decoding does not allocate.
type layout struct {
	shape   []seqShape
	n, ub   int
	tokens  backend.Buffer   // stage 0's (n, 1) tokens
	pos     []backend.Buffer // every stage's (n, 1) positions
	in, out [][]activations  // per micro-batch, per stage
	logits  []backend.Buffer // per sequence, the last stage's (logits, vocab) rows; nil for none
}

// matches reports whether l was built for seqs in micro-batches of ub.
func (l *layout) matches(seqs []seqIn, ub int) bool {
	if l.tokens == nil || l.ub != ub || len(l.shape) != len(seqs) {
		return false
	}
	for i, q := range seqs {
		if l.shape[i] != (seqShape{q.s, len(q.tokens), q.logits}) {
			return false
		}
	}
	return true
}

// layout returns the views for a pass over seqs.
func (sc *scratch) layout(seqs []seqIn) *layout {
	ub := sc.ub
	if sc.lay.matches(seqs, ub) {
		return &sc.lay
	}
	l := layout{ub: ub}
	var outLo, outHi []int // each sequence's output rows [outLo, outHi) of the batch
	for _, q := range seqs {
		l.shape = append(l.shape, seqShape{q.s, len(q.tokens), q.logits})
		l.n += len(q.tokens)
		outLo, outHi = append(outLo, l.n-q.logits), append(outHi, l.n)
	}
	l.tokens = sc.stages[0].full.tokens.Slice(0, l.n)
	for k := range sc.stages {
		l.pos = append(l.pos, sc.stages[k].full.pos.Slice(0, l.n))
	}
	for row0 := 0; row0 < l.n; row0 += ub {
		mn := min(ub, l.n-row0)
		lo, hi := outputSpan(outLo, outHi, row0, row0+mn)
		in, out := make([]activations, len(sc.stages)), make([]activations, len(sc.stages))
		for k := range sc.stages {
			f := &sc.stages[k].full
			in[k] = f.rows(row0, mn)
			in[k].seqs = f.seqRows(seqs, k, row0, mn)
			if hi > lo {
				out[k] = f.outRows(lo, hi-lo, row0, lo)
			}
		}
		l.in, l.out = append(l.in, in), append(l.out, out)
	}
	last := &sc.stages[len(sc.stages)-1].full
	for i, q := range seqs {
		var b backend.Buffer
		if q.logits > 0 {
			b = last.logits.Slice(outLo[i], q.logits)
		}
		l.logits = append(l.logits, b)
	}
	sc.lay = l
	return &sc.lay
}

// outputSpan returns the rows [lo, hi) of the micro-batch [row0, end) from its first to
// its last output row (lo == hi when it has none). The last block's feed-forward, the
// final norm and the head run on that span: the output rows of the sequences in it and
// any rows between them.
func outputSpan(outLo, outHi []int, row0, end int) (lo, hi int) {
	lo, hi = end, row0
	for i := range outLo {
		a, b := max(outLo[i], row0), min(outHi[i], end)
		if a < b {
			lo, hi = min(lo, a), max(hi, b)
		}
	}
	if hi < lo {
		return 0, 0
	}
	return lo, hi
}

// seqRows returns, for the micro-batch of rows [row0, row0+n) of f on stage k, the
// views of each sequence's rows in it with the sequence's cache on stage k.
func (f *activations) seqRows(seqs []seqIn, k, row0, n int) []seqRows {
	var out []seqRows
	start := 0
	for _, q := range seqs {
		a, b := max(start, row0), min(start+len(q.tokens), row0+n)
		start += len(q.tokens)
		if a >= b {
			continue
		}
		out = append(out, seqRows{pos: f.pos.Slice(a, b-a), q: f.q.Slice(a, b-a), k: f.k.Slice(a, b-a),
			v: f.v.Slice(a, b-a), att: f.att.Slice(a, b-a), cache: q.s.caches[k]})
	}
	return out
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

// pass runs one forward pass over seqs (at most sc.rows tokens in all, already
// checked), downloads each sequence's logits into its out and advances the sessions.
// ctx is checked before every micro-batch: when it is done, the micro-batches already
// enqueued finish, no session advances, and the error is ctx's. keys, when not nil,
// names each stage's recording (a one-token step of one session).
func (sc *scratch) pass(ctx context.Context, seqs []seqIn, keys []string) error {
	l := sc.layout(seqs)
	ids, pos := sc.stageRows(seqs, l.n)
	if err := sc.stages[0].dev.Upload(l.tokens, ids); err != nil {
		return err
	}
	for k := range sc.stages {
		if err := sc.stages[k].dev.Upload(l.pos[k], pos); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := sc.run(ctx, l, keys); err != nil {
		return errors.Join(err, sc.sync())
	}
	if err := sc.sync(); err != nil {
		return err
	}
	last := sc.stages[len(sc.stages)-1].dev
	for i, q := range seqs {
		if q.logits == 0 {
			continue
		}
		if err := last.Download(tensor.Float32Bytes(q.out[:q.logits*sc.m.cfg.NVocab]), l.logits[i]); err != nil {
			return err
		}
	}
	for _, q := range seqs {
		q.s.pos += len(q.tokens)
	}
	return nil
}

// stageRows writes the n rows of seqs into the host staging, each token and its
// position (the session's position onward), and returns the two (n, 1) int32 halves.
func (sc *scratch) stageRows(seqs []seqIn, n int) (ids, pos []byte) {
	ids, pos = sc.staged[:4*n], sc.staged[4*n:8*n]
	r := 0
	for _, q := range seqs {
		for i, t := range q.tokens {
			binary.LittleEndian.PutUint32(ids[4*r:], uint32(t))
			binary.LittleEndian.PutUint32(pos[4*r:], uint32(q.s.pos+i))
			r++
		}
	}
	return ids, pos
}

// run enqueues the forward pass of every micro-batch of l, stopping early when ctx is
// done. On a device that records (backend.Recorder), keys name each stage's recording.
func (sc *scratch) run(ctx context.Context, l *layout, keys []string) error {
	for i := range l.in {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := sc.m.forward(l.in[i], l.out[i], keys); err != nil {
			return fmt.Errorf("micro-batch %d: %w", i, err)
		}
	}
	return nil
}

// sync waits for every stage's device and returns their failures.
func (sc *scratch) sync() error {
	var errs []error
	for k := range sc.stages {
		if err := sc.stages[k].dev.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("stage %d on %s: %w", k, sc.stages[k].dev.Name(), err))
		}
	}
	return errors.Join(errs...)
}
