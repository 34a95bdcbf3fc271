package model

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// scratch is the memory one forward pass of up to rows tokens computes in: a batch of
// activations on every stage, host staging for the tokens and positions, and the views
// of the last batch shape. A Session owns one for Eval (Options.BatchSize rows), a
// Batch one for the rows of all its sequences; KV caches live in the sessions.
type scratch struct {
	m      *Model
	rows   int            // the most tokens of one pass
	ub     int            // micro-batch rows
	stages []stageScratch // one per model stage
	staged []byte         // host staging for tokens and positions: (2, rows) int32
	lay    layout         // views of the scratch for the current batch shape
}

// stageScratch is the scratch of one stage: a batch of activations and the buffers
// that hold them.
type stageScratch struct {
	dev  backend.Device
	full activations // (rows, ·) buffers
	bufs []backend.Buffer
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
	// proj holds the products of one input that attend and feedForward pass to
	// matMuls (q, k, v; gate, up), kept here so that passing them does not allocate.
	proj [3]backend.Product
	// With the f16 wire (Options.Wire), x crosses a stage boundary as F16: wireOut is x
	// rounded for the next stage (not on the last stage), wireIn is x as received from
	// the previous one (not on the first stage). Both nil with the f32 wire.
	wireIn, wireOut backend.Buffer // (n, dim) F16
	// seqs are the sequences the n rows belong to, in row order, each with its rows'
	// views and this stage's cache: attention runs per sequence. Nil for output rows.
	seqs []seqRows
}

// seqRows are one sequence's rows of a micro-batch on one stage: the views of its
// positions, queries, keys, values and attention output, and its KV cache there.
type seqRows struct {
	pos, q, k, v, att backend.Buffer
	cache             *kvCache
}

// newScratch allocates scratch for rows tokens on every stage of m.
func (m *Model) newScratch(rows int) (*scratch, error) {
	sc := &scratch{m: m, rows: rows, ub: min(m.opts.MicroBatch, rows), staged: make([]byte, 8*rows)}
	for k := range m.stages {
		ss, err := m.newStageScratch(k, rows)
		if err != nil {
			sc.free()
			return nil, wrapf(err, "scratch of %d tokens: stage %d on %s", rows, k, m.stages[k].dev.Name())
		}
		sc.stages = append(sc.stages, ss)
	}
	return sc, nil
}

// free releases the scratch's device buffers; like every caller, it runs under a hold on
// the model or in Close before the weights go (lifetime.go), so the devices are open.
func (sc *scratch) free() {
	if sc == nil {
		return
	}
	for k := range sc.stages {
		sc.stages[k].free()
	}
	sc.stages, sc.lay = nil, layout{}
}

// newStageScratch allocates stage k's activations for n rows, the hidden state's
// buffers last (allocBoundary).
func (m *Model) newStageScratch(k, n int) (stageScratch, error) {
	c, st := m.cfg, &m.stages[k]
	ss := stageScratch{dev: st.dev}
	a := &ss.full
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
		var err error
		if *b.dst, err = st.dev.Alloc(b.dt, n, b.cols); err != nil {
			ss.free()
			return ss, err
		}
		ss.bufs = append(ss.bufs, *b.dst)
	}
	if err := m.allocBoundary(k, n, &ss); err != nil {
		ss.free()
		return ss, fmt.Errorf("hidden state: %w", err)
	}
	return ss, nil
}

// allocBoundary allocates stage k's buffers of the hidden state for n rows: x and, with
// the f16 wire and more than one stage, wireIn and wireOut where the stage has
// neighbours. The buffer the previous stage's transfer writes (x on the f32 wire,
// wireIn on the f16 wire) is a boundary buffer.
func (m *Model) allocBoundary(k, n int, ss *stageScratch) error {
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
		if *b.dst, err = m.allocHidden(k, n, b.dt, b.boundary); err != nil {
			return err
		}
		ss.bufs = append(ss.bufs, *b.dst)
	}
	return nil
}

// allocHidden allocates an (n, dim) buffer of dt on stage k's device. A boundary buffer
// of every stage after the first is allocated with backend.SharedAllocator where the
// device has it, so that the previous stage's device can reach it directly.
func (m *Model) allocHidden(k, n int, dt tensor.DType, boundary bool) (backend.Buffer, error) {
	dim, dev := m.cfg.NEmbd, m.stages[k].dev
	if sa, ok := dev.(backend.SharedAllocator); ok && boundary && k > 0 && m.stages[k-1].dev != dev {
		return sa.AllocShared(dt, n, dim, m.stages[k-1].dev)
	}
	return dev.Alloc(dt, n, dim)
}

// free releases the stage's scratch buffers.
func (ss *stageScratch) free() {
	for _, b := range ss.bufs {
		ss.dev.Free(b)
	}
	ss.bufs = nil
}
