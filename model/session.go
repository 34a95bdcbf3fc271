package model

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// Session is one sequence being evaluated: a KV cache and the position reached.
type Session struct {
	m      *Model
	cache  *kvCache
	full   activations // scratch for a whole batch: (batch, ·) buffers
	pos    int         // tokens in the cache
	ctx    int         // cache length
	bufs   []backend.Buffer
	view   activations // full's first view.n rows, re-sliced when n changes
	out    activations // the rows that get logits, re-sliced when they change
	first  int         // the batch row of out's first row
	none   activations // no rows
	staged []byte      // host staging for tokens and positions: (2, batch) int32
	logits []float32   // host logits returned by Eval
}

// activations are the device buffers of one batch of n tokens. For the rows of a batch
// that get logits (see Model.forward) it holds count rows: x and xb are the batch's
// rows first..first+count-1, hb, hb2 and logits the first count rows of the scratch,
// and the other fields are nil.
type activations struct {
	n      int
	tokens backend.Buffer // (n, 1) I32
	pos    backend.Buffer // (n, 1) I32: positions, also the cache rows written
	x      backend.Buffer // (n, dim) residual stream
	xb     backend.Buffer // (n, dim) normed input and block outputs
	q      backend.Buffer // (n, nHead·headDim)
	k, v   backend.Buffer // (n, nHeadKV·headDim)
	att    backend.Buffer // (n, nHead·headDim) attention output
	hb     backend.Buffer // (n, ff) gate, then silu(gate)⊙up
	hb2    backend.Buffer // (n, ff) up
	logits backend.Buffer // (n, vocab)
}

// NewSession returns a session with an empty KV cache of Options.ContextSize tokens.
func (m *Model) NewSession() (*Session, error) {
	if m.dev == nil {
		return nil, errClosed
	}
	c, o := m.cfg, m.opts
	cache, err := newKVCache(m.dev, c.NLayer, o.ContextSize, c.KVDim(), o.KVType)
	if err != nil {
		return nil, wrapf(err, "new session")
	}
	s := &Session{m: m, cache: cache, ctx: o.ContextSize, staged: make([]byte, 8*o.BatchSize)}
	n := o.BatchSize
	a := &s.full
	a.n = n
	for _, b := range []struct {
		dst  *backend.Buffer
		dt   tensor.DType
		cols int
	}{
		{&a.tokens, tensor.I32, 1}, {&a.pos, tensor.I32, 1},
		{&a.x, tensor.F32, c.NEmbd}, {&a.xb, tensor.F32, c.NEmbd},
		{&a.q, tensor.F32, c.QDim()}, {&a.k, tensor.F32, c.KVDim()}, {&a.v, tensor.F32, c.KVDim()},
		{&a.att, tensor.F32, c.QDim()}, {&a.hb, tensor.F32, c.NFF}, {&a.hb2, tensor.F32, c.NFF},
		{&a.logits, tensor.F32, c.NVocab},
	} {
		if *b.dst, err = m.dev.Alloc(b.dt, n, b.cols); err != nil {
			s.Close()
			return nil, wrapf(err, "new session: scratch")
		}
		s.bufs = append(s.bufs, *b.dst)
	}
	return s, nil
}

// Ctx is the number of tokens the session's KV cache holds.
func (s *Session) Ctx() int { return s.ctx }

// Pos is the number of tokens in the KV cache.
func (s *Session) Pos() int { return s.pos }

// Reset empties the KV cache.
func (s *Session) Reset() { s.pos = 0 }

// Close releases the session's KV cache and scratch buffers.
func (s *Session) Close() error {
	if s.m == nil {
		return nil
	}
	if d := s.m.dev; d != nil {
		s.cache.free(d)
		for _, b := range s.bufs {
			d.Free(b)
		}
	}
	s.m, s.bufs = nil, nil
	return nil
}

// Eval appends tokens at Pos() (cut into batches of Options.BatchSize) and returns the
// logits: for every token (len(tokens)·NVocab floats, row i predicting token i+1) when
// all is true, else for the last token only (NVocab floats). The slice is reused by the
// next Eval; copy what must outlive it.
func (s *Session) Eval(tokens []int32, all bool) ([]float32, error) {
	if s.m == nil || s.m.dev == nil {
		return nil, errClosed
	}
	if err := s.check(tokens); err != nil {
		return nil, err
	}
	V, batch := s.m.cfg.NVocab, s.full.n
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

// batch runs one batch at s.pos and downloads the logits of rows [first, first+count)
// into dst.
func (s *Session) batch(tokens []int32, first, count int, dst []float32) error {
	a := s.activations(len(tokens))
	ids, pos := s.staged[:4*len(tokens)], s.staged[4*len(tokens):8*len(tokens)]
	for i, t := range tokens {
		binary.LittleEndian.PutUint32(ids[4*i:], uint32(t))
		binary.LittleEndian.PutUint32(pos[4*i:], uint32(s.pos+i))
	}
	d := s.m.dev
	if err := d.Upload(a.tokens, ids); err != nil {
		return err
	}
	if err := d.Upload(a.pos, pos); err != nil {
		return err
	}
	o := s.outputs(a, first, count)
	s.m.forward(a, o, s.cache)
	if count > 0 {
		if err := d.Download(tensor.Float32Bytes(dst[:count*s.m.cfg.NVocab]), o.logits); err != nil {
			return err
		}
	}
	if err := d.Sync(); err != nil {
		return err
	}
	s.pos += len(tokens)
	return nil
}

// activations returns views of the scratch for n rows; they are made again only when n
// changes, so steady decoding does not allocate.
func (s *Session) activations(n int) *activations {
	if s.view.n == n && s.view.x != nil {
		return &s.view
	}
	f := &s.full
	s.view = activations{n: n, tokens: f.tokens.Slice(0, n), pos: f.pos.Slice(0, n),
		x: f.x.Slice(0, n), xb: f.xb.Slice(0, n), q: f.q.Slice(0, n), k: f.k.Slice(0, n), v: f.v.Slice(0, n),
		att: f.att.Slice(0, n), hb: f.hb.Slice(0, n), hb2: f.hb2.Slice(0, n), logits: f.logits.Slice(0, n)}
	s.out = activations{}
	return &s.view
}

// outputs returns views of the rows of a that get logits.
func (s *Session) outputs(a *activations, first, count int) *activations {
	if count == 0 {
		return &s.none
	}
	if s.out.x == nil || s.first != first || s.out.n != count {
		s.first = first
		s.out = activations{n: count, x: a.x.Slice(first, count), xb: a.xb.Slice(first, count),
			hb: a.hb.Slice(0, count), hb2: a.hb2.Slice(0, count), logits: a.logits.Slice(0, count)}
	}
	return &s.out
}
