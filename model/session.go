package model

import (
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// Session is one sequence being evaluated: a KV cache and scratch on every stage, and
// the position reached.
type Session struct {
	m      *Model
	stages []sessionStage // one per model stage
	pos    int            // tokens in the cache
	ctx    int            // cache length
	keys   [2][]string    // each stage's decode recording, without and with logits
	caches []*kvCache     // every stage's cache, in stage order
	lay    layout         // views of the scratch for the current batch shape
	staged []byte         // host staging for tokens and positions: (2, batch) int32
	logits []float32      // host logits returned by Eval
}

// sessionStage is a session's state on one stage: the cache of the stage's layers and
// scratch for a whole batch.
type sessionStage struct {
	dev   backend.Device
	cache *kvCache
	full  activations // (batch, ·) buffers
	bufs  []backend.Buffer
}

// activations are the device buffers of one batch of n tokens on one stage. For the
// rows of a batch that get logits (see Model.forward) it holds count rows: x and xb are
// the batch's rows first..first+count-1, hb, hb2 and logits count rows of the scratch,
// and the other fields are nil. tokens is set on the first stage only, logits on the
// last only.
type activations struct {
	n      int
	tokens backend.Buffer // (n, 1) I32
	pos    backend.Buffer // (n, 1) I32: positions, also the cache rows written
	x      backend.Buffer // (n, dim) residual stream; the hidden state handed between stages
	xb     backend.Buffer // (n, dim) normed input and block outputs
	q      backend.Buffer // (n, nHead·headDim)
	k, v   backend.Buffer // (n, nHeadKV·headDim)
	att    backend.Buffer // (n, nHead·headDim) attention output
	hb     backend.Buffer // (n, ff) gate, then silu(gate)⊙up
	hb2    backend.Buffer // (n, ff) up
	logits backend.Buffer // (n, vocab)
	// With the f16 wire (Options.Wire), x crosses a stage boundary as F16: wireOut is x
	// rounded for the next stage (not on the last stage), wireIn is x as received from
	// the previous one (not on the first stage). Both nil with the f32 wire.
	wireIn, wireOut backend.Buffer // (n, dim) F16
}

// NewSession returns a session with an empty KV cache of Options.ContextSize tokens,
// split over the model's stages.
func (m *Model) NewSession() (*Session, error) {
	if err := m.acquire(); err != nil {
		return nil, err
	}
	defer m.release()
	o := m.opts
	s := &Session{m: m, ctx: o.ContextSize, staged: make([]byte, 8*o.BatchSize)}
	id := m.nextKey.Add(1)
	for k := range m.stages {
		s.keys[0] = append(s.keys[0], fmt.Sprintf("model.decode.%p.%d.stage%d.nologits", m, id, k))
		s.keys[1] = append(s.keys[1], fmt.Sprintf("model.decode.%p.%d.stage%d", m, id, k))
	}
	for k := range m.stages {
		ss, err := m.newSessionStage(k)
		if err != nil {
			for k := range s.stages { // not s.Close: the hold is taken
				s.stages[k].free()
			}
			return nil, wrapf(err, "new session: stage %d on %s", k, m.stages[k].dev.Name())
		}
		s.stages, s.caches = append(s.stages, ss), append(s.caches, ss.cache)
	}
	m.track(s)
	return s, nil
}

// newSessionStage allocates stage k's cache and batch scratch, the hidden state's
// buffers last (allocBoundary).
func (m *Model) newSessionStage(k int) (sessionStage, error) {
	c, o, st := m.cfg, m.opts, &m.stages[k]
	ss := sessionStage{dev: st.dev}
	var err error
	if ss.cache, err = newKVCache(st.dev, st.Layers(), o.ContextSize, c.KVDim(), o.KVType); err != nil {
		return ss, err
	}
	n, a := o.BatchSize, &ss.full
	a.n = n
	first, last := k == 0, k == len(m.stages)-1
	for _, b := range []struct {
		dst  *backend.Buffer
		dt   tensor.DType
		cols int
		need bool
	}{
		{&a.tokens, tensor.I32, 1, first}, {&a.pos, tensor.I32, 1, true},
		{&a.xb, tensor.F32, c.NEmbd, true},
		{&a.q, tensor.F32, c.QDim(), true}, {&a.k, tensor.F32, c.KVDim(), true}, {&a.v, tensor.F32, c.KVDim(), true},
		{&a.att, tensor.F32, c.QDim(), true}, {&a.hb, tensor.F32, c.NFF, true}, {&a.hb2, tensor.F32, c.NFF, true},
		{&a.logits, tensor.F32, c.NVocab, last},
	} {
		if !b.need {
			continue
		}
		if *b.dst, err = st.dev.Alloc(b.dt, n, b.cols); err != nil {
			ss.free()
			return ss, fmt.Errorf("scratch: %w", err)
		}
		ss.bufs = append(ss.bufs, *b.dst)
	}
	if err = m.allocBoundary(k, &ss); err != nil {
		ss.free()
		return ss, fmt.Errorf("hidden state: %w", err)
	}
	return ss, nil
}

// allocBoundary allocates stage k's buffers of the hidden state: x and, with the f16
// wire and more than one stage, wireIn and wireOut where the stage has neighbours. The
// buffer the previous stage's transfer writes (x on the f32 wire, wireIn on the f16
// wire) is a boundary buffer.
func (m *Model) allocBoundary(k int, ss *sessionStage) error {
	a, f16, last := &ss.full, m.opts.Wire == WireF16 && len(m.stages) > 1, len(m.stages)-1
	for _, b := range []struct {
		dst            *backend.Buffer
		dt             tensor.DType
		boundary, need bool
	}{
		{&a.x, tensor.F32, !f16, true},
		{&a.wireIn, tensor.F16, true, f16 && k > 0},
		{&a.wireOut, tensor.F16, false, f16 && k < last},
	} {
		if !b.need {
			continue
		}
		var err error
		if *b.dst, err = m.allocHidden(k, b.dt, b.boundary); err != nil {
			return err
		}
		ss.bufs = append(ss.bufs, *b.dst)
	}
	return nil
}

// allocHidden allocates a (batch, dim) buffer of dt on stage k's device. A boundary
// buffer of every stage after the first is allocated with backend.SharedAllocator where
// the device has it, so that the previous stage's device can reach it directly.
func (m *Model) allocHidden(k int, dt tensor.DType, boundary bool) (backend.Buffer, error) {
	n, dim, dev := m.opts.BatchSize, m.cfg.NEmbd, m.stages[k].dev
	if sa, ok := dev.(backend.SharedAllocator); ok && boundary && k > 0 && m.stages[k-1].dev != dev {
		return sa.AllocShared(dt, n, dim, m.stages[k-1].dev)
	}
	return dev.Alloc(dt, n, dim)
}

// free releases the stage's cache and scratch.
func (ss *sessionStage) free() {
	if ss.cache != nil {
		ss.cache.free(ss.dev)
	}
	for _, b := range ss.bufs {
		ss.dev.Free(b)
	}
	ss.bufs = nil
}

// Ctx is the number of tokens the session's KV cache holds.
func (s *Session) Ctx() int { return s.ctx }

// Pos is the number of tokens in the KV cache.
func (s *Session) Pos() int { return s.pos }

// Reset empties the KV cache.
func (s *Session) Reset() { s.pos = 0 }

// Close releases the session's KV cache and scratch buffers on every stage (Model.Close
// has released them already if it ran first).
func (s *Session) Close() error {
	if s.m == nil {
		return nil
	}
	if s.m.acquire() == nil {
		for k := range s.stages {
			s.stages[k].free()
		}
		s.m.untrack(s)
		s.m.release()
	}
	s.m, s.stages = nil, nil
	return nil
}

// Eval appends tokens at Pos() (cut into batches of Options.BatchSize) and returns the
// logits: for every token (len(tokens)·NVocab floats, row i predicting token i+1) when
// all is true, else for the last token only (NVocab floats). The slice is reused by the
// next Eval; copy what must outlive it.
func (s *Session) Eval(tokens []int32, all bool) ([]float32, error) {
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
	V, batch := s.m.cfg.NVocab, s.m.opts.BatchSize
	nOut := V
	if all {
		nOut = len(tokens) * V
	}
	if cap(s.logits) < nOut {
		s.logits = make([]float32, nOut)
	}
	out := s.logits[:nOut]
	for b0 := 0; b0 < len(tokens); b0 += batch {
		n := min(batch, len(tokens)-b0)
		first, count := 0, n
		if !all {
			first, count = n-1, 0
			if b0+n == len(tokens) {
				count = 1
			}
		}
		dst := out
		if all {
			dst = out[b0*V : (b0+n)*V]
		}
		if err := s.batch(tokens[b0:b0+n], first, count, dst); err != nil {
			return nil, wrapf(err, "eval tokens %d..%d at position %d", b0, b0+n-1, s.pos)
		}
	}
	return out, nil
}

// check rejects tokens outside the vocabulary and inputs that overflow the cache.
func (s *Session) check(tokens []int32) error {
	if len(tokens) == 0 {
		return errors.New("model: eval: no tokens")
	}
	if s.pos+len(tokens) > s.ctx {
		return fmt.Errorf("model: eval: %d tokens at position %d overflow the context of %d", len(tokens), s.pos, s.ctx)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= s.m.cfg.NVocab {
			return fmt.Errorf("model: eval: token %d (%d) outside the vocabulary of %d", i, t, s.m.cfg.NVocab)
		}
	}
	return nil
}
