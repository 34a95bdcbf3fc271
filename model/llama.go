package model

// The llama forward pass: llama.cpp's llm_build_llama as a sequence of device kernels,
// one batch of tokens at a time. It reads like llama2.c's run.c forward: the residual
// stream x goes through every block (attention, then feed-forward, each behind an RMS
// norm and added back to x), then the final norm and the output head.

// forward runs the batch staged in a through every layer, appending its keys and values
// to the cache, and leaves in o.logits the logits of the rows o holds (o.n may be 0).
// As in llama.cpp (inp_out_ids), the last block computes attention for every row, since
// the cache needs its keys and values, but its feed-forward, the final norm and the
// head run only on the rows whose logits are wanted; the row count decides which
// matmul kernel a row goes through, so this also keeps the numbers llama.cpp's.
func (m *Model) forward(a, o *activations, cache *kvCache) {
	d, w := m.dev, &m.weights
	last := len(w.layers) - 1
	d.Embed(a.x, w.tokenEmbd, a.tokens)
	for l := range w.layers {
		m.attend(a, &w.layers[l], cache, l)
		if l < last {
			m.feedForward(a, &w.layers[l])
		}
	}
	if o.n == 0 {
		return
	}
	m.feedForward(o, &w.layers[last])
	d.RMSNorm(o.xb, o.x, w.outputNorm, m.cfg.NormEps)
	d.MatMul(o.logits, w.output, o.xb)
}

// attend is x += wo·attention(rope(wq·norm(x)), cache), with this batch's keys and
// values stored in the cache rows of their positions first.
func (m *Model) attend(a *activations, ly *layer, cache *kvCache, l int) {
	d, rope := m.dev, m.rope()
	d.RMSNorm(a.xb, a.x, ly.attnNorm, m.cfg.NormEps)
	d.MatMul(a.q, ly.wq, a.xb)
	d.MatMul(a.k, ly.wk, a.xb)
	d.MatMul(a.v, ly.wv, a.xb)
	d.RoPE(a.q, a.pos, rope)
	d.RoPE(a.k, a.pos, rope)
	d.SetRows(cache.k[l], a.k, a.pos)
	d.SetRows(cache.v[l], a.v, a.pos)
	d.Attention(a.att, a.q, cache.k[l], cache.v[l], a.pos, m.attention())
	d.MatMul(a.xb, ly.wo, a.att)
	d.Add(a.x, a.xb)
}

// feedForward is x += down·(silu(gate·norm(x)) ⊙ up·norm(x)).
func (m *Model) feedForward(a *activations, ly *layer) {
	d := m.dev
	d.RMSNorm(a.xb, a.x, ly.ffnNorm, m.cfg.NormEps)
	d.MatMul(a.hb, ly.gate, a.xb)
	d.MatMul(a.hb2, ly.up, a.xb)
	d.SwiGLU(a.hb, a.hb, a.hb2)
	d.MatMul(a.xb, ly.down, a.hb)
	d.Add(a.x, a.xb)
}
