//go:build cgo

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// TestAttentionDecode checks the per-row attention kernels against softmax(q·kᵀ)·v in
// float64 (as TestAttentionSplit, as strictly): every head dimension with a coalesced
// kernel and two without, F32 and F16 caches, grouped K/V heads, rows at positions that
// give one split, a few, or all of them (and ones whose warps end on partial tiles),
// under the default split policy and others (warps of one tile or several); and a cache
// too short to split and a batch too large to.
func TestAttentionDecode(t *testing.T) {
	type kernel struct {
		kv tensor.DType
		hd int
	}
	kernels := []kernel{{tensor.F16, 64}, {tensor.F16, 128}, {tensor.F16, 256}, {tensor.F16, 80},
		{tensor.F32, 64}, {tensor.F32, 128}, {tensor.F32, 96}}
	policies := []struct{ keys, warpKeys int }{{splitKeys, warpMinKeys}, {64, 8}, {128, 16}, {1024, 64}}
	d := openTest(t)
	for _, kn := range kernels {
		for _, pol := range policies {
			t.Run(fmt.Sprintf("%s/split=%d,%d", decodeEntry(kn.kv, kn.hd), pol.keys, pol.warpKeys), func(t *testing.T) {
				d.attnSplit.keys, d.attnSplit.warpKeys = pol.keys, pol.warpKeys
				defer func() { d.attnSplit.keys = 0 }()
				const ctx, heads, kvHeads = 1500, 8, 2
				checkAttention(t, d, kn.kv, ctx, heads, kvHeads, kn.hd, []int32{1499, 700, 0, 31, 32, 33, 1000, 127}, uint64(kn.hd))
			})
		}
	}
	t.Run("ctx=100", func(t *testing.T) { checkAttention(t, d, tensor.F16, 100, 4, 2, 128, []int32{99, 0, 50}, 3) })
	t.Run("n=9", func(t *testing.T) { // more rows than split decoding takes: one block per row
		d.noFlash = true
		defer func() { d.noFlash = false }()
		pos := []int32{0, 1, 2, 40, 41, 300, 301, 599, 598}
		checkAttention(t, d, tensor.F16, 600, 4, 4, 128, pos, 1)
		checkAttention(t, d, tensor.F32, 600, 4, 1, 64, pos, 2)
	})
}

// checkAttention runs attention of rows at pos over a random cache of ctx rows on d and
// compares it with attentionRef.
func checkAttention(t *testing.T, d *Device, kv tensor.DType, ctx, heads, kvHeads, hd int, pos []int32, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 9))
	q := randoms(r, len(pos)*heads*hd)
	k, v := randoms(r, ctx*kvHeads*hd), randoms(r, ctx*kvHeads*hd)
	if kv == tensor.F16 {
		k, v = roundF16(k), roundF16(v)
	}
	at := backend.Attention{Heads: heads, KVHeads: kvHeads, HeadDim: hd, Scale: float32(1 / math.Sqrt(float64(hd)))}
	got := runAttention(t, d, kv, q, k, v, pos, at)
	compareAttention(t, got, attentionRef(q, k, v, pos, at), heads*hd)
}

func compareAttention(t *testing.T, got []float32, want []float64, cols int) {
	t.Helper()
	for i := range want {
		if e := math.Abs(float64(got[i]) - want[i]); !(e <= 1e-5+1e-4*math.Abs(want[i])) {
			t.Fatalf("[%d] (row %d) = %g, want %g", i, i/cols, got[i], want[i])
		}
	}
}

// TestAttentionDecodeGraph records one decode attention (the split path, its scratch
// allocated and its counters cleared inside the recording) and replays it at positions
// that change the number of splits with keys, up and down, each replay checked: the
// launch must not depend on the position, and every replay must leave the counters as
// it found them. An eager call afterwards checks them too.
func TestAttentionDecodeGraph(t *testing.T) {
	d := openTest(t)
	const ctx, heads, hd = 2048, 4, 128
	r := rand.New(rand.NewPCG(7, 7))
	q := randoms(r, 2*heads*hd)
	k, v := roundF16(randoms(r, ctx*heads*hd)), roundF16(randoms(r, ctx*heads*hd))
	at := backend.Attention{Heads: heads, KVHeads: heads, HeadDim: hd, Scale: float32(1 / math.Sqrt(float64(hd)))}
	f16 := func(x []float32) []byte {
		b := make([]byte, 2*len(x))
		tensor.Quantize(tensor.F16, b, x)
		return b
	}
	ob, qb, pb := devBuf(t, d, tensor.F32, 2, heads*hd, nil), devBuf(t, d, tensor.F32, 2, heads*hd, tensor.Float32Bytes(q)), devBuf(t, d, tensor.I32, 2, 1, nil)
	kb, vb := devBuf(t, d, tensor.F16, ctx, heads*hd, f16(k)), devBuf(t, d, tensor.F16, ctx, heads*hd, f16(v))
	g, err := d.Capture(func(kn backend.Kernels) error { kn.Attention(ob, qb, kb, vb, pb, at); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	run := func(pos []int32, eager bool) {
		raw := make([]byte, 0, 8)
		for _, p := range pos {
			raw = binary.LittleEndian.AppendUint32(raw, uint32(p))
		}
		if err := d.Upload(pb, raw); err != nil {
			t.Fatal(err)
		}
		if eager {
			d.Attention(ob, qb, kb, vb, pb, at)
		} else if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, 2*heads*hd)
		if err := d.Download(tensor.Float32Bytes(out), ob); err != nil {
			t.Fatal(err)
		}
		compareAttention(t, out, attentionRef(q, k, v, pos, at), heads*hd)
	}
	for _, pos := range [][]int32{{2047, 0}, {5, 1000}, {127, 128}, {2047, 2046}, {300, 64}, {1, 2047}} {
		run(pos, false)
	}
	run([]int32{1999, 200}, true)
}

// BenchmarkAttentionSplitPolicy is BenchmarkAttentionDecodeStep under other split policies
// (splitKeys, warpMinKeys): the data the defaults were chosen from.
func BenchmarkAttentionSplitPolicy(b *testing.B) {
	d := openTest(b)
	policies := []struct{ keys, warpKeys int }{{splitKeys, warpMinKeys}, {splitKeys, 16}, {256, 16}, {1024, 16}, {128, 16}, {64, 16}}
	for _, c := range decodeAttnCases {
		s := newAttnStep(b, d, c.ctx, c.pos)
		for _, p := range policies {
			b.Run(fmt.Sprintf("ctx=%d/pos=%d/split=%d,%d", c.ctx, c.pos, p.keys, p.warpKeys), func(b *testing.B) {
				d.attnSplit.keys, d.attnSplit.warpKeys = p.keys, p.warpKeys
				defer func() { d.attnSplit.keys = 0 }()
				s.bench(b, d)
			})
		}
		s.free(d)
	}
}
