package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// layer7B is one llama-2-7B block on the device: Q4_0 projections, an F16 KV cache.
type layer7B struct {
	attnNorm, ffnNorm backend.Buffer // (1, dim) F32
	wq, wk, wv, wo    backend.Buffer // (dim, dim)
	gate, up, down    backend.Buffer // (ff, dim), (ff, dim), (dim, ff)
	kCache, vCache    backend.Buffer // (ctx, dim) F16
}

// BenchmarkDecodeLayer records the kernels of one batch-1 decode step through a
// llama-2-7B block (norm, q/k/v, RoPE, cache writes, attention, o, residual, norm,
// gate/up, SwiGLU, down, residual) as a graph over 32 layers, and reports the time per
// layer and the tokens per second of the 32 layers alone (no output head).
func BenchmarkDecodeLayer(b *testing.B) {
	for _, ctx := range []int{512, 4096} {
		b.Run(fmt.Sprintf("Q4_0/ctx=%d/graph", ctx), func(b *testing.B) { benchDecodeLayer(b, tensor.Q4_0, ctx, true) })
	}
	b.Run("Q4_0/ctx=512/eager", func(b *testing.B) { benchDecodeLayer(b, tensor.Q4_0, 512, false) })
}

func benchDecodeLayer(b *testing.B, wt tensor.DType, ctx int, graphed bool) {
	const dim, ff, heads, layers, distinct = 4096, 11008, 32, 32, 4
	d := openTest(b)
	r := rand.New(rand.NewPCG(5, 6))
	alloc := func(dt tensor.DType, rows, cols int, fill bool) backend.Buffer {
		buf, err := d.Alloc(dt, rows, cols)
		if err != nil {
			b.Fatal(err)
		}
		if fill {
			raw := make([]byte, dt.RowBytes(cols)*rows)
			for i := range raw {
				raw[i] = byte(r.Uint32())
			}
			fixScales(dt, raw)
			if dt == tensor.F32 {
				x := tensor.Float32s(raw)
				for i := range x {
					x[i] = 1
				}
			}
			if err := d.Upload(buf, raw); err != nil {
				b.Fatal(err)
			}
		}
		return buf
	}
	ls := make([]layer7B, distinct)
	for i := range ls {
		ls[i] = layer7B{
			attnNorm: alloc(tensor.F32, 1, dim, true), ffnNorm: alloc(tensor.F32, 1, dim, true),
			wq: alloc(wt, dim, dim, true), wk: alloc(wt, dim, dim, true), wv: alloc(wt, dim, dim, true), wo: alloc(wt, dim, dim, true),
			gate: alloc(wt, ff, dim, true), up: alloc(wt, ff, dim, true), down: alloc(wt, dim, ff, true),
			kCache: alloc(tensor.F16, ctx, dim, false), vCache: alloc(tensor.F16, ctx, dim, false),
		}
	}
	x, xb := alloc(tensor.F32, 1, dim, true), alloc(tensor.F32, 1, dim, false)
	q, k, v, att := alloc(tensor.F32, 1, dim, false), alloc(tensor.F32, 1, dim, false), alloc(tensor.F32, 1, dim, false), alloc(tensor.F32, 1, dim, false)
	g, u, h := alloc(tensor.F32, 1, ff, false), alloc(tensor.F32, 1, ff, false), alloc(tensor.F32, 1, ff, false)
	pos := alloc(tensor.I32, 1, 1, false)
	p := []byte{byte(ctx - 1), byte((ctx - 1) >> 8), 0, 0}
	if err := d.Upload(pos, p); err != nil {
		b.Fatal(err)
	}
	rope := backend.Rope{HeadDim: dim / heads, Dims: dim / heads, Base: 10000, Scale: 1}
	at := backend.Attention{Heads: heads, KVHeads: heads, HeadDim: dim / heads, Scale: 0.088}
	step := func() {
		for i := range layers {
			l := &ls[i%distinct]
			d.RMSNorm(xb, x, l.attnNorm, 1e-5)
			d.MatMul(q, l.wq, xb)
			d.MatMul(k, l.wk, xb)
			d.MatMul(v, l.wv, xb)
			d.RoPE(q, pos, rope)
			d.RoPE(k, pos, rope)
			d.SetRows(l.kCache, k, pos)
			d.SetRows(l.vCache, v, pos)
			d.Attention(att, q, l.kCache, l.vCache, pos, at)
			d.MatMul(xb, l.wo, att)
			d.Add(x, xb)
			d.RMSNorm(xb, x, l.ffnNorm, 1e-5)
			d.MatMul(g, l.gate, xb)
			d.MatMul(u, l.up, xb)
			d.SwiGLU(h, g, u)
			d.MatMul(xb, l.down, h)
			d.Add(x, xb)
		}
	}
	step() // warm-up, outside the graph: scratch allocations
	run := step
	if graphed {
		graph, err := d.Capture(func() error { step(); return nil })
		if err != nil {
			b.Fatal(err)
		}
		defer graph.Close()
		run = func() { graph.Launch() }
	}
	el := timeDevice(b, d, run)
	b.ReportMetric(el.Seconds()/layers*1e6, "us/layer")
	b.ReportMetric(1/el.Seconds(), "tok/s(32layers)")
	weights := float64(layers) * float64(4*wt.RowBytes(dim)*dim+3*wt.RowBytes(dim)*ff)
	b.ReportMetric(weights/el.Seconds()/1e9, "GB/s(weights)")
}
