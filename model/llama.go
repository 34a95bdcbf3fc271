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
			if m.idle(k, o) {
				break
			}
			// The hop: the previous stage's hidden state moves to this stage's device.
			if err := m.hop(k, a); err != nil {
				return fmt.Errorf("stage %d -> %d, layer %d: hidden state: %w", k-1, k, st.First, err)
			}
		}
		key := ""
		if keys != nil {
			key = keys[k]
		}
		if err := m.runStage(k, a, o, key); err != nil {
			return err
		}
	}
	return nil
}

// runStage enqueues stage k of the micro-batch a, o (as forward takes them) on its
// device: recorded once under key and replayed when the device records
// (backend.Recorder) and key is not empty, else directly.
func (m *Model) runStage(k int, a, o []activations, key string) error {
	st := &m.stages[k]
	if rec, ok := st.dev.(backend.Recorder); ok && key != "" {
		if err := rec.Record(key, func(kn backend.Kernels) { m.stage(kn, k, &a[k], &o[k]) }); err != nil {
			return fmt.Errorf("stage %d: %w", k, err)
		}
		return nil
	}
	m.stage(st.dev, k, &a[k], &o[k])
	return nil
}

// idle reports whether stage k of the micro-batch whose output rows are o has nothing
// to do: an output-only stage (no layers) with no logits wanted. forward stops there.
func (m *Model) idle(k int, o []activations) bool {
	return k > 0 && m.stages[k].Layers() == 0 && o[k].n == 0
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

// stage enqueues stage k's part of the forward pass through d, its device's kernels (or
// those of the device's recording): the embedding on
// the first stage, its layers, and the final norm and output head on the last. As in
// llama.cpp (inp_out_ids), the last block computes attention for every row, since the
// cache needs its keys and values, but its feed-forward, the final norm and the head
// run only on the rows whose logits are wanted (out); the row count decides which
// matmul kernel a row goes through, so this also keeps the numbers llama.cpp's.
func (m *Model) stage(d backend.Kernels, k int, x, out *activations) {
	st, last := &m.stages[k], len(m.layers)-1
	if k == 0 {
		d.Embed(x.x, st.tokenEmbd, x.tokens)
	}
	for l := st.First; l < st.Last; l++ {
		m.attend(d, st, x, &m.layers[l], l-st.First)
		switch {
		case l < last:
			m.feedForward(d, x, &m.layers[l])
		case out.n > 0:
			m.feedForward(d, out, &m.layers[l])
		}
	}
	if k == len(m.stages)-1 && out.n > 0 {
		d.RMSNorm(out.xb, out.x, st.outputNorm, m.cfg.NormEps)
		d.MatMul(out.logits, st.output, out.xb)
	}
}

// attend is x += wo·attention(rope(wq·norm(x)), cache), with this batch's keys and
// values stored in the cache rows of their positions first; l indexes the stage's
// caches. The projections run over all rows; the cache writes and attention run per
// sequence, each on its rows and its own cache. Between the projections and the
// rotation, shapeQKV applies what the architecture adds to the llama block
// (Config.Block).
func (m *Model) attend(d backend.Kernels, st *stage, a *activations, ly *layer, l int) {
	rope := m.rope(st)
	d.RMSNorm(a.xb, a.x, ly.attnNorm, m.cfg.NormEps)
	a.proj = [...]backend.Product{{Dst: a.q, W: ly.wq}, {Dst: a.k, W: ly.wk}, {Dst: a.v, W: ly.wv}}
	matMuls(d, a.xb, a.proj[:])
	m.shapeQKV(d, a, &ly.blockExtras)
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

// blockExtras are a layer's optional tensors (Config.Block), nil where the architecture
// or the file has none.
type blockExtras struct {
	bq, bk, bv   backend.Buffer // (1, nHead·headDim), (1, nHeadKV·headDim) twice: biases of q, k, v
	qNorm, kNorm backend.Buffer // (1, headDim): RMS norm weights of every head of q and k
}

// loadExtras loads the optional tensors, named p<name>, that m.cfg.Block asks for with
// ld, loadStage's loader (which keeps the first error).
func (m *Model) loadExtras(p string, ld func(name string, matrix bool, dims ...int) backend.Buffer) blockExtras {
	c := m.cfg
	opt := func(n Need, name string, dim int) backend.Buffer {
		if _, ok := m.file.Tensor(p + name); n == Required || n == Optional && ok {
			return ld(p+name, false, dim)
		}
		return nil
	}
	return blockExtras{
		bq:    opt(c.Block.QKVBias, "attn_q.bias", c.QDim()),
		bk:    opt(c.Block.QKVBias, "attn_k.bias", c.KVDim()),
		bv:    opt(c.Block.QKVBias, "attn_v.bias", c.KVDim()),
		qNorm: opt(c.Block.QKNorm, "attn_q_norm.weight", c.HeadDim),
		kNorm: opt(c.Block.QKNorm, "attn_k_norm.weight", c.HeadDim),
	}
}

// shapeQKV adds the biases to the projections (one row added to every row: qwen2) and
// normalises every head of q and k (a weight row of headDim: qwen3), where the layer
// has them.
func (m *Model) shapeQKV(d backend.Kernels, a *activations, e *blockExtras) {
	for _, p := range [...]struct{ x, bias backend.Buffer }{{a.q, e.bq}, {a.k, e.bk}, {a.v, e.bv}} {
		if p.bias != nil {
			d.Add(p.x, p.bias)
		}
	}
	if e.qNorm != nil {
		d.RMSNorm(a.q, a.q, e.qNorm, m.cfg.NormEps)
	}
	if e.kNorm != nil {
		d.RMSNorm(a.k, a.k, e.kNorm, m.cfg.NormEps)
	}
}

// feedForward is x += down·(silu(gate·norm(x)) ⊙ up·norm(x)).
func (m *Model) feedForward(d backend.Kernels, a *activations, ly *layer) {
	d.RMSNorm(a.xb, a.x, ly.ffnNorm, m.cfg.NormEps)
	a.proj = [...]backend.Product{{Dst: a.hb, W: ly.gate}, {Dst: a.hb2, W: ly.up}, {}}
	matMuls(d, a.xb, a.proj[:2])
	d.SwiGLU(a.hb, a.hb, a.hb2)
	d.MatMul(a.xb, ly.down, a.hb)
	d.Add(a.x, a.xb)
}

// matMuls sets p[i].Dst = x·p[i].Wᵀ for every i: in one call where d is a
// backend.MultiMatMuler, else one MatMul each.
func matMuls(d backend.Kernels, x backend.Buffer, p []backend.Product) {
	if mm, ok := d.(backend.MultiMatMuler); ok {
		mm.MultiMatMul(x, p)
		return
	}
	for _, q := range p {
		d.MatMul(q.Dst, q.W, x)
	}
}
