package model

import (
	"context"
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
)

// Session is one sequence being evaluated: a KV cache on every stage and the position
// reached. Its own Eval computes in a scratch of Options.BatchSize tokens, allocated by
// the first Eval; sessions evaluated together through a Batch use the Batch's scratch
// instead, so a session that only takes part in batches never allocates one.
type Session struct {
	m      *Model
	caches []*kvCache  // every stage's cache, in stage order
	pos    int         // tokens in the cache
	ctx    int         // cache length
	keys   [2][]string // each stage's decode recording, without and with logits
	sc     *scratch    // Eval's scratch; nil until the first Eval
	one    [1]seqIn    // Eval's one sequence, kept here so that a step does not allocate
	logits []float32   // host logits returned by Eval
}

// NewSession returns a session with an empty KV cache of Options.ContextSize tokens,
// split over the model's stages.
func (m *Model) NewSession() (*Session, error) {
	if err := m.acquire(); err != nil {
		return nil, err
	}
	defer m.release()
	o := m.opts
	s := &Session{m: m, ctx: o.ContextSize}
	id := m.nextKey.Add(1)
	for k := range m.stages {
		s.keys[0] = append(s.keys[0], fmt.Sprintf("model.decode.%p.%d.stage%d.nologits", m, id, k))
		s.keys[1] = append(s.keys[1], fmt.Sprintf("model.decode.%p.%d.stage%d", m, id, k))
	}
	for k := range m.stages {
		st := &m.stages[k]
		c, err := newKVCache(st.dev, st.Layers(), o.ContextSize, m.cfg.KVDim(), o.KVType)
		if err != nil {
			s.freeBuffers() // not s.Close: the hold is taken
			return nil, wrapf(err, "new session: stage %d on %s", k, st.dev.Name())
		}
		s.caches = append(s.caches, c)
	}
	track(m, &m.sessions, s)
	return s, nil
}

// Ctx is the number of tokens the session's KV cache holds.
func (s *Session) Ctx() int { return s.ctx }

// Pos is the number of tokens in the KV cache.
func (s *Session) Pos() int { return s.pos }

// Reset empties the KV cache.
func (s *Session) Reset() { s.pos = 0 }

// Warmup evaluates token as one decode step and empties the cache again, as llama.cpp
// does before it generates: on devices that record a decode step once and replay it
// (backend.Recorder: CUDA graphs), the recording is then made here and not in the
// first generated token's step, which would otherwise pay for it. It does nothing on a
// session that holds tokens already (Pos() > 0), whose stages do not record, or that is
// one rank of a multi-process pipeline.
func (s *Session) Warmup(token int32) error {
	if s.m == nil {
		return ErrClosed
	}
	if s.pos != 0 || s.m.rank != nil || !s.m.records() {
		return nil
	}
	_, err := s.Eval([]int32{token}, false)
	s.Reset()
	return err
}

// records reports whether a stage's device records decode steps (backend.Recorder).
func (m *Model) records() bool {
	for k := range m.stages {
		if _, ok := m.stages[k].dev.(backend.Recorder); ok {
			return true
		}
	}
	return false
}

// Close releases the session's KV cache and scratch buffers on every stage (Model.Close
// has released them already if it ran first).
func (s *Session) Close() error {
	if s.m == nil {
		return nil
	}
	if s.m.acquire() == nil {
		s.freeBuffers()
		untrack(s.m, &s.m.sessions, s)
		s.m.release()
	}
	s.m, s.caches, s.sc = nil, nil, nil
	return nil
}

// freeBuffers releases the session's caches and scratch; it runs under a hold on the
// model (or Close's exclusive one).
func (s *Session) freeBuffers() {
	for k, c := range s.caches {
		c.free(s.m.stages[k].dev)
	}
	s.sc.free()
	s.caches, s.sc = nil, nil
}

// Eval is EvalContext without cancellation.
func (s *Session) Eval(tokens []int32, all bool) ([]float32, error) {
	return s.EvalContext(context.Background(), tokens, all)
}

// EvalContext appends tokens at Pos() (cut into batches of Options.BatchSize) and
// returns the logits: for every token (len(tokens)·NVocab floats, row i predicting
// token i+1) when all is true, else for the last token only (NVocab floats). The slice
// is reused by the next Eval; copy what must outlive it.
//
// ctx is checked before every micro-batch. When it is done, EvalContext waits for the
// work already enqueued and returns ctx.Err(); the position stays at the end of the
// last batch that completed. Tokens that do not fit in the cache are an error wrapping
// ErrContextFull, and leave the session as it was.
func (s *Session) EvalContext(ctx context.Context, tokens []int32, all bool) ([]float32, error) {
	rows := 1
	if all {
		rows = len(tokens)
	}
	return s.evalLast(ctx, tokens, rows)
}

// evalLast is EvalContext returning the logits of the last rows tokens only (rows·NVocab
// floats, none for 0), which only those rows compute.
func (s *Session) evalLast(ctx context.Context, tokens []int32, rows int) ([]float32, error) {
	if s.m == nil {
		return nil, ErrClosed
	}
	if err := s.m.acquire(); err != nil {
		return nil, err
	}
	defer s.m.release()
	if err := s.check(tokens); err != nil {
		return nil, err
	}
	if _, err := s.scratch(); err != nil {
		return nil, fmt.Errorf("model: eval: %w", err)
	}
	V, batch := s.m.cfg.NVocab, s.m.opts.BatchSize
	rows = min(max(rows, 0), len(tokens))
	if cap(s.logits) < rows*V {
		s.logits = make([]float32, rows*V)
	}
	out, lo := s.logits[:rows*V], len(tokens)-rows // lo: the first row with logits
	for b0 := 0; b0 < len(tokens); b0 += batch {
		n := min(batch, len(tokens)-b0)
		q := seqIn{s: s, tokens: tokens[b0 : b0+n]}
		if first := max(lo, b0); first < b0+n { // the batch's last rows from first on
			q.logits, q.out = b0+n-first, out[(first-lo)*V:(b0+n-lo)*V]
		}
		if s.m.rank != nil { // one rank of a multi-process pipeline (rank.go)
			if err := s.m.rank.batch(s, q.tokens, q.logits, q.out); err != nil {
				return nil, wrapf(err, "eval tokens %d..%d at position %d", b0, b0+n-1, s.pos)
			}
			continue
		}
		var keys []string
		if n == 1 {
			keys = s.keys[q.logits]
		}
		s.one[0] = q
		err := s.sc.pass(ctx, s.one[:], keys)
		s.one[0] = seqIn{}
		if err != nil {
			return nil, wrapf(err, "eval tokens %d..%d at position %d", b0, b0+n-1, s.pos)
		}
	}
	return out, nil
}

// scratch returns the session's own scratch of Options.BatchSize tokens, allocating it
// at the first call.
func (s *Session) scratch() (*scratch, error) {
	if s.sc == nil {
		sc, err := s.m.newScratch(s.m.opts.BatchSize)
		if err != nil {
			return nil, err
		}
		s.sc = sc
	}
	return s.sc, nil
}

// check rejects tokens outside the vocabulary and inputs that overflow the cache.
func (s *Session) check(tokens []int32) error {
	if len(tokens) == 0 {
		return errors.New("model: eval: no tokens")
	}
	if s.pos+len(tokens) > s.ctx {
		return fmt.Errorf("%w: %d tokens at position %d overflow the context of %d", ErrContextFull, len(tokens), s.pos, s.ctx)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= s.m.cfg.NVocab {
			return fmt.Errorf("model: eval: token %d (%d) outside the vocabulary of %d", i, t, s.m.cfg.NVocab)
		}
	}
	return nil
}
