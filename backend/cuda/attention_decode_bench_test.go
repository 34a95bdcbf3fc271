//go:build cgo

package cuda

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// decodeAttnCases are the cache capacities and positions BenchmarkAttentionDecodeStep times:
// a short context, and long ones at their start, middle and end; 5071 is issue 16's depth,
// whose `infer bench -d 5071 -n 256` cache holds 5327 rows.
var decodeAttnCases = []struct{ ctx, pos int }{
	{512, 511}, {4096, 2048}, {5327, 5071}, {8192, 5071}, {8192, 511}, {8192, 8191},
}

// attnStep is the attention of one batch-1 decode step through the 32 blocks of a
// llama-2-7B (32 heads of 128, no grouping): one query row at position pos over an F16
// K and V cache of ctx rows per block, 32 distinct caches so that they overflow the L2
// as a real step's do.
type attnStep struct {
	q, dst, posBuf backend.Buffer
	k, v           []backend.Buffer
	at             backend.Attention
	pos            int
}

func newAttnStep(tb testing.TB, d *Device, ctx, pos int) *attnStep {
	return newAttnStepKV(tb, d, ctx, pos, heads7B)
}

// newAttnStepKV is newAttnStep with kvHeads K/V heads (8: llama 3 8B's grouping).
func newAttnStepKV(tb testing.TB, d *Device, ctx, pos, kvHeads int) *attnStep {
	alloc := func(dt tensor.DType, rows, cols int) backend.Buffer {
		buf, err := d.Alloc(dt, rows, cols)
		if err != nil {
			tb.Fatal(err)
		}
		return buf
	}
	hd := dim7B / heads7B
	s := &attnStep{pos: pos, at: backend.Attention{Heads: heads7B, KVHeads: kvHeads, HeadDim: hd, Scale: 0.088}}
	s.q, s.dst, s.posBuf = alloc(tensor.F32, 1, dim7B), alloc(tensor.F32, 1, dim7B), alloc(tensor.I32, 1, 1)
	for range layers7B {
		s.k, s.v = append(s.k, alloc(tensor.F16, ctx, kvHeads*hd)), append(s.v, alloc(tensor.F16, ctx, kvHeads*hd))
	}
	r := rand.New(rand.NewPCG(3, 4))
	q := make([]float32, dim7B)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	if err := d.Upload(s.q, tensor.Float32Bytes(q)); err != nil {
		tb.Fatal(err)
	}
	if err := d.Upload(s.posBuf, binary.LittleEndian.AppendUint32(nil, uint32(pos))); err != nil {
		tb.Fatal(err)
	}
	return s
}

func (s *attnStep) free(d *Device) {
	for _, b := range append(append([]backend.Buffer{s.q, s.dst, s.posBuf}, s.k...), s.v...) {
		d.Free(b)
	}
}

// enqueue issues the 32 blocks' attention through k.
func (s *attnStep) enqueue(k backend.Kernels) {
	for l := range s.k {
		k.Attention(s.dst, s.q, s.k[l], s.v[l], s.posBuf, s.at)
	}
}

// cacheBytes is the K and V bytes one block's attention reads.
func (s *attnStep) cacheBytes() float64 {
	return 2 * float64(s.pos+1) * float64(s.at.KVHeads*s.at.HeadDim) * 2
}

// bench times replays of the step recorded as a graph: microseconds per block and the
// cache bytes read per second.
func (s *attnStep) bench(b *testing.B, d *Device) {
	s.enqueue(d) // outside the graph: scratch allocations
	g, err := d.Capture(func(k backend.Kernels) error { s.enqueue(k); return nil })
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	el := timeDevice(b, d, func() { g.Launch() })
	per := el.Seconds() / float64(len(s.k))
	b.ReportMetric(per*1e6, "us/layer")
	b.ReportMetric(s.cacheBytes()/per/1e9, "GB/s(cache)")
}

// BenchmarkAttentionDecodeStep times decode attention alone, 7B shape, over caches of
// 512 to 8192 rows at short and long positions (-bench AttentionDecodeStep), recorded as
// a graph of 32 blocks as a decode step is: us per block and GB/s of K/V cache read.
func BenchmarkAttentionDecodeStep(b *testing.B) {
	d := openTest(b)
	for _, c := range decodeAttnCases {
		s := newAttnStep(b, d, c.ctx, c.pos)
		b.Run(fmt.Sprintf("ctx=%d/pos=%d", c.ctx, c.pos), func(b *testing.B) { s.bench(b, d) })
		s.free(d)
	}
}

// BenchmarkAttentionDecodeGQA is BenchmarkAttentionDecodeStep for llama 3 8B's shape:
// 32 query heads over 8 K/V heads of 128 (-bench AttentionDecodeGQA), with the query
// heads a block serves capped at 1, 2 and 4 (most=).
func BenchmarkAttentionDecodeGQA(b *testing.B) {
	d := openTest(b)
	for _, c := range decodeAttnCases {
		s := newAttnStepKV(b, d, c.ctx, c.pos, 8)
		for _, most := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("ctx=%d/pos=%d/most=%d", c.ctx, c.pos, most), func(b *testing.B) {
				d.attnSplit.group = most
				defer func() { d.attnSplit.group = 0 }()
				s.bench(b, d)
			})
		}
		s.free(d)
	}
}
