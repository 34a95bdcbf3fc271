package model

import (
	"context"
	"errors"
	"fmt"
)

// A Batch evaluates the tokens of several sessions in one forward pass: the sessions'
// rows are concatenated, the matmuls, norms and RoPE run once over all of them, and
// each session's rows attend only to its own KV cache at their own positions. It is
// how several independent sequences share the weights' reads: perplexity packs chunks
// into one pass this way, and a server steps all its active sessions together.
//
// A sequence's logits do not depend on which other sequences share its pass, beyond
// the order of floating-point sums (on the CPU they are bit-identical to evaluating it
// alone in passes of the same cuts). A Batch owns scratch for Rows tokens on every
// stage; the sessions own only their caches. A Batch is not safe for concurrent use.
type Batch struct {
	m      *Model
	sc     *scratch
	seqs   []seqIn     // the pass being evaluated
	out    [][]float32 // per sequence, its logits
	logits []float32   // host logits of the sequences without SeqInput.Out
}

// BatchOptions configure NewBatch.
type BatchOptions struct {
	// Rows is the most tokens one Eval takes, over all its sequences; 0 =
	// Options.BatchSize.
	Rows int
	// MicroBatch is the most tokens one stage computes at a time; 0 =
	// Options.MicroBatch. Longer passes are cut into micro-batches that flow through
	// the stages as a pipeline; on one stage, larger ones read the weights fewer times.
	MicroBatch int
}

// SeqInput is one sequence's part of a Batch pass.
type SeqInput struct {
	Session *Session // the sequence: its KV cache and position
	Tokens  []int32  // appended at Session.Pos()
	// Logits is how many of the last rows return logits: 0 none, 1 the last token's (a
	// decode step, or the end of a prompt), len(Tokens) every row's (row i predicting
	// token i+1).
	Logits int
	// Out, if not nil, receives the logits (Logits·NVocab floats) instead of the Batch's
	// own buffer, so that they outlive the next Eval.
	Out []float32
}

// NewBatch allocates a batch's scratch on every stage of the model.
func (m *Model) NewBatch(o BatchOptions) (*Batch, error) {
	if err := m.acquire(); err != nil {
		return nil, err
	}
	defer m.release()
	if m.rank != nil {
		return nil, errors.New("model: new batch: a multi-process model evaluates one session at a time")
	}
	if o.Rows < 0 || o.MicroBatch < 0 {
		return nil, fmt.Errorf("model: new batch: %d rows, micro-batches of %d", o.Rows, o.MicroBatch)
	}
	if o.Rows == 0 {
		o.Rows = m.opts.BatchSize
	}
	if o.MicroBatch == 0 {
		o.MicroBatch = m.opts.MicroBatch
	}
	sc, err := m.newScratch(o.Rows)
	if err != nil {
		return nil, fmt.Errorf("model: new batch: %w", err)
	}
	sc.ub = min(o.MicroBatch, o.Rows)
	b := &Batch{m: m, sc: sc}
	track(m, &m.batches, b)
	return b, nil
}

// Rows is the most tokens one Eval takes.
func (b *Batch) Rows() int { return b.sc.rows }

// Close releases the batch's scratch. The sessions stay open.
func (b *Batch) Close() error {
	if b.m == nil {
		return nil
	}
	if b.m.acquire() == nil { // after Model.Close, which freed the scratch already
		b.sc.free()
		untrack(b.m, &b.m.batches, b)
		b.m.release()
	}
	b.m, b.sc = nil, nil
	return nil
}

// Eval appends each sequence's tokens to its session in one forward pass and returns
// each sequence's logits (Logits·NVocab floats, its SeqInput.Out when set): result i
// belongs to seqs[i]. Slices in the Batch's own buffer are reused by the next Eval.
//
// A session may appear once per pass. Inputs are checked before anything runs: tokens
// outside the vocabulary, more tokens than Rows in all, or tokens that do not fit in a
// session's cache (an error wrapping ErrContextFull) leave every session as it was.
// ctx is checked before every micro-batch; when it is done, Eval waits for the work
// already enqueued and returns ctx.Err() without advancing any session.
func (b *Batch) Eval(ctx context.Context, seqs []SeqInput) ([][]float32, error) {
	if b.m == nil {
		return nil, ErrClosed
	}
	if err := b.m.acquire(); err != nil {
		return nil, err
	}
	defer b.m.release()
	nOut, err := b.check(seqs)
	if err != nil {
		return nil, err
	}
	V := b.m.cfg.NVocab
	if cap(b.logits) < nOut*V {
		b.logits = make([]float32, nOut*V)
	}
	b.seqs, b.out = b.seqs[:0], b.out[:0]
	off := 0
	for _, q := range seqs {
		out := q.Out
		if out == nil {
			out = b.logits[off*V : (off+q.Logits)*V]
			off += q.Logits
		}
		out = out[:q.Logits*V]
		b.seqs = append(b.seqs, seqIn{s: q.Session, tokens: q.Tokens, logits: q.Logits, out: out})
		b.out = append(b.out, out)
	}
	err = b.sc.pass(ctx, b.seqs, nil)
	clear(b.seqs) // drop the references to the caller's tokens and sessions
	if err != nil {
		return nil, wrapf(err, "batch of %d sequences", len(seqs))
	}
	return b.out, nil
}

// check validates a pass and returns the logits rows it wants in the Batch's buffer.
func (b *Batch) check(seqs []SeqInput) (nOut int, err error) {
	if len(seqs) == 0 {
		return 0, errors.New("model: batch: no sequences")
	}
	rows := 0
	for i, q := range seqs {
		s := q.Session
		switch {
		case s == nil || s.m == nil:
			return 0, fmt.Errorf("model: batch: sequence %d: %w", i, ErrClosed)
		case s.m != b.m:
			return 0, fmt.Errorf("model: batch: sequence %d: the session belongs to another model", i)
		case q.Logits < 0 || q.Logits > len(q.Tokens):
			return 0, fmt.Errorf("model: batch: sequence %d: %d logits rows of %d tokens", i, q.Logits, len(q.Tokens))
		case q.Out != nil && len(q.Out) < q.Logits*b.m.cfg.NVocab:
			return 0, fmt.Errorf("model: batch: sequence %d: Out holds %d floats, want %d", i, len(q.Out), q.Logits*b.m.cfg.NVocab)
		}
		for _, p := range seqs[:i] {
			if p.Session == s {
				return 0, fmt.Errorf("model: batch: sequence %d: the session appears twice", i)
			}
		}
		if err := s.check(q.Tokens); err != nil {
			return 0, fmt.Errorf("model: batch: sequence %d: %w", i, err)
		}
		rows += len(q.Tokens)
		if q.Out == nil {
			nOut += q.Logits
		}
	}
	if rows > b.sc.rows {
		return 0, fmt.Errorf("model: batch: %d tokens exceed the batch's %d rows", rows, b.sc.rows)
	}
	return nOut, nil
}
