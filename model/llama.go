package model

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/split"
)

// The llama forward pass: llama.cpp's llm_build_llama as a sequence of device kernels,
// one micro-batch of tokens at a time. It reads like llama2.c's run.c forward: the
// residual stream x goes through every block (attention, then feed-forward, each behind
// an RMS norm and added back to x), then the final norm and the output head. The
// blocks are spread over stages; between two stages the hidden state x hops to the next
// stage's device.

// forward runs the micro-batch staged in a (one activations per stage, the same rows of
// each stage's scratch) through every stage, appending each sequence's keys and values
// to its cache on each stage (a[k].seqs), and leaves in o[last].logits the logits of the rows o holds (o[k].n may
// be 0). Between two stages the hidden state hops to the next device. keys, when not
// nil, names each stage's recording (a decode step): a stage whose device implements
// backend.Recorder is then recorded once and replayed, since a one-token step enqueues
// the same kernels on the same buffers every time.
//
// Devices run asynchronously: forward only enqueues work, and each hop is ordered by
// the transfer itself (events on CUDA), so the host never waits between stages.
func (m *Model) forward(a, o []activations, keys []string) error {
	for k := range m.stages {
		st := &m.stages[k]
		if k > 0 {
			if st.Layers() == 0 && o[k].n == 0 {
				break // an output-only stage with no logits wanted
			}
			// The hop: the previous stage's hidden state moves to this stage's device.
			if err := m.hop(k, a); err != nil {
				return fmt.Errorf("stage %d -> %d, layer %d: hidden state: %w", k-1, k, st.First, err)
			}
		}
		if rec, ok := st.dev.(backend.Recorder); ok && keys != nil {
			if err := rec.Record(keys[k], func() { m.stage(k, &a[k], &o[k]) }); err != nil {
				return fmt.Errorf("stage %d: %w", k, err)
			}
			continue
		}
		m.stage(k, &a[k], &o[k])
	}
	return nil
}

// hop enqueues the move of micro-batch a's hidden state from stage k-1 to stage k. On
// the f32 wire x is transferred as is. On the f16 wire the producer rounds x into its
// F16 wireOut, the transfer moves that (half the bytes), and the consumer widens what it
// received, wireIn, back into its x. Like the transfer, the conversions run outside the
// stages' recordings, on buffers that stay the same from step to step.
func (m *Model) hop(k int, a []activations) error {
	from, to := &a[k-1], &a[k]
	if m.opts.Wire != WireF16 {
		return split.Transfer(to.x, from.x)
	}
	m.stages[k-1].dev.Copy(from.wireOut, from.x)
	if err := split.Transfer(to.wireIn, from.wireOut); err != nil {
		return err
	}
	m.stages[k].dev.Copy(to.x, to.wireIn)
	return nil
}

// stage enqueues stage k's part of the forward pass on its device: the embedding on
// the first stage, its layers, and the final norm and output head on the last. As in
// llama.cpp (inp_out_ids), the last block computes attention for every row, since the
// cache needs its keys and values, but its feed-forward, the final norm and the head
// run only on the rows whose logits are wanted (out); the row count decides which
// matmul kernel a row goes through, so this also keeps the numbers llama.cpp's.
func (m *Model) stage(k int, x, out *activations) {
	st, last := &m.stages[k], len(m.layers)-1
	if k == 0 {
		st.dev.Embed(x.x, st.tokenEmbd, x.tokens)
	}
	for l := st.First; l < st.Last; l++ {
		m.attend(st, x, &m.layers[l], l-st.First)
		switch {
		case l < last:
			m.feedForward(st, x, &m.layers[l])
		case out.n > 0:
			m.feedForward(st, out, &m.layers[l])
		}
	}
	if k == len(m.stages)-1 && out.n > 0 {
		st.dev.RMSNorm(out.xb, out.x, st.outputNorm, m.cfg.NormEps)
		st.dev.MatMul(out.logits, st.output, out.xb)
	}
}

// attend is x += wo·attention(rope(wq·norm(x)), cache), with this batch's keys and
// values stored in the cache rows of their positions first; l indexes the stage's
// caches. The projections run over all rows; the cache writes and attention run per
// sequence, each on its rows and its own cache.
func (m *Model) attend(st *stage, a *activations, ly *layer, l int) {
	d, rope := st.dev, m.rope(st)
	d.RMSNorm(a.xb, a.x, ly.attnNorm, m.cfg.NormEps)
	d.MatMul(a.q, ly.wq, a.xb)
	d.MatMul(a.k, ly.wk, a.xb)
	d.MatMul(a.v, ly.wv, a.xb)
	d.RoPE(a.q, a.pos, rope)
	d.RoPE(a.k, a.pos, rope)
	for _, s := range a.seqs {
		d.SetRows(s.cache.k[l], s.k, s.pos)
		d.SetRows(s.cache.v[l], s.v, s.pos)
		d.Attention(s.att, s.q, s.cache.k[l], s.cache.v[l], s.pos, m.attention())
	}
	d.MatMul(a.xb, ly.wo, a.att)
	d.Add(a.x, a.xb)
}

// feedForward is x += down·(silu(gate·norm(x)) ⊙ up·norm(x)).
func (m *Model) feedForward(st *stage, a *activations, ly *layer) {
	d := st.dev
	d.RMSNorm(a.xb, a.x, ly.ffnNorm, m.cfg.NormEps)
	d.MatMul(a.hb, ly.gate, a.xb)
	d.MatMul(a.hb2, ly.up, a.xb)
	d.SwiGLU(a.hb, a.hb, a.hb2)
	d.MatMul(a.xb, ly.down, a.hb)
	d.Add(a.x, a.xb)
}
