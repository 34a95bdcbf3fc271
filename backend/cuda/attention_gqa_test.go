//go:build cgo

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// TestAttentionGroups checks the K/V-head decode kernels (attention_gqa_*) for every way
// a group of query heads maps onto blocks: one head a block (no grouping, a group of 3,
// and groups with the blocks capped at one head: gqaMax's default), two, four (a group
// of 4 in one block, of 8 over two), and a group of 8 over four blocks of two; one row
// and eight, under the default split policy and one of short warps, against
// softmax(q·kᵀ)·v in float64.
func TestAttentionGroups(t *testing.T) {
	d := openTest(t)
	groups := []struct{ heads, kvHeads, most int }{{4, 4, 0}, {6, 2, 0}, {8, 4, 0}, {8, 2, 0}, {8, 1, 0}, {8, 2, 1}, {8, 1, 2},
		{8, 2, 4}, {8, 1, 4}}
	policies := []struct{ keys, warpKeys int }{{splitKeys, warpMinKeys}, {64, 8}}
	for _, hd := range []int{64, 128, 256} {
		for _, gr := range groups {
			for _, pol := range policies {
				entry, _, _ := gqaEntry(tensor.F16, hd, gr.heads/gr.kvHeads, gr.most)
				t.Run(fmt.Sprintf("%s/%d,%d/split=%d,%d", entry, gr.heads, gr.kvHeads, pol.keys, pol.warpKeys), func(t *testing.T) {
					if !d.has(entry) {
						t.Fatalf("%s not loaded", entry)
					}
					d.attnSplit.keys, d.attnSplit.warpKeys, d.attnSplit.group = pol.keys, pol.warpKeys, gr.most
					defer func() { d.attnSplit.keys, d.attnSplit.group = 0, 0 }()
					seed := uint64(hd + 10*gr.heads + gr.kvHeads)
					checkAttention(t, d, tensor.F16, 1500, gr.heads, gr.kvHeads, hd, []int32{1499, 700, 0, 31, 32, 33, 1000, 127}, seed)
					checkAttention(t, d, tensor.F16, 1500, gr.heads, gr.kvHeads, hd, []int32{1234}, seed+1)
				})
			}
		}
	}
}

// TestAttentionMerge checks the merge of the splits' partial results (att_gqa_finish's
// last block) for every number of splits with keys it handles differently: one (no
// merge), two, a few (a partial load batch), a multiple of the batch, past a thread's or
// a lane's first split (129 and more for one head a block, 33 and more for several) and
// the most (maxSplits), at short and long contexts and odd lengths, for one, two and four
// query heads a block and head dimensions 64, 128, 256, against softmax(q·kᵀ)·v in
// float64. At ctx 512 the default policy gives 4 splits (one head a block; 8 and 16 for
// two and four); at ctx 8192 the policy (32, 8) gives maxSplits of 32 keys, a row at
// position p using ⌈(p+1)/32⌉ of them.
func TestAttentionMerge(t *testing.T) {
	d := openTest(t)
	cases := []struct {
		ctx, keys, warpKeys int
		pos                 []int32
	}{
		{512, splitKeys, warpMinKeys, []int32{511, 300, 129, 5, 127, 128, 257, 383}},
		{8192, 32, 8, []int32{8191, 5000, 0, 32, 129, 4095, 4096, 8100}},
		{8192, 32, 8, []int32{255, 1023, 1055, 2000}},
	}
	if got := decodeSplits(8192, 32); got != maxSplits {
		t.Fatalf("decodeSplits(8192, 32) = %d, want maxSplits %d", got, maxSplits)
	}
	groups := []struct{ heads, kvHeads, most int }{{8, 2, 1}, {8, 2, 2}, {8, 1, 4}}
	for _, hd := range []int{64, 128, 256} {
		for _, gr := range groups {
			for ci, c := range cases {
				entry, _, _ := gqaEntry(tensor.F16, hd, gr.heads/gr.kvHeads, gr.most)
				t.Run(fmt.Sprintf("%s/%d,%d/ctx=%d/split=%d,%d/%d", entry, gr.heads, gr.kvHeads, c.ctx, c.keys, c.warpKeys, ci), func(t *testing.T) {
					if !d.has(entry) {
						t.Fatalf("%s not loaded", entry)
					}
					d.attnSplit.keys, d.attnSplit.warpKeys, d.attnSplit.group = c.keys, c.warpKeys, gr.most
					defer func() { d.attnSplit.keys, d.attnSplit.group = 0, 0 }()
					checkAttention(t, d, tensor.F16, c.ctx, gr.heads, gr.kvHeads, hd, c.pos, uint64(hd+100*ci+gr.most))
				})
			}
		}
	}
}

// fusedCase is one shape of TestAttentionFused; most caps the query heads a block
// serves (0: the default).
type fusedCase struct {
	heads, kvHeads, hd, dims int
	neox, factors            bool
	most                     int
}

// TestAttentionFused runs a decode step's RoPE of q and k, cache stores of k and v and
// attention (the model's order) fused into one launch and unfused (noFuse: rope_f32,
// set_rows_f16, the attention kernel alone) on the same inputs, eagerly and replayed
// from a recorded graph at changing positions, and requires the same bits in every
// buffer either writes: the attention output, the rotated q and k, both caches. The
// shapes take one block per K/V head and several (a group over blocks of 1 or 2 heads:
// the rotated k is written back by the last of them). The unfused output is also
// checked against softmax(q·kᵀ)·v in float64 over what the unfused kernels left in q
// and the caches.
func TestAttentionFused(t *testing.T) {
	d := openTest(t)
	for _, c := range []fusedCase{
		{8, 8, 128, 128, false, false, 0}, {8, 2, 128, 128, true, false, 0}, {8, 4, 128, 64, true, true, 0},
		{4, 1, 64, 64, false, true, 0}, {4, 4, 256, 256, true, false, 0}, {12, 3, 128, 128, false, false, 0},
		{8, 2, 128, 128, false, false, 1}, {8, 1, 128, 128, true, false, 2}, {16, 2, 128, 128, false, true, 0},
		{8, 1, 64, 64, false, false, 1},
	} {
		t.Run(fmt.Sprintf("%d,%d/hd=%d/dims=%d/neox=%v/factors=%v/most=%d", c.heads, c.kvHeads, c.hd, c.dims, c.neox, c.factors, c.most), func(t *testing.T) {
			d.attnSplit.group = c.most
			defer func() { d.attnSplit.group = 0 }()
			checkFused(t, d, c)
		})
	}
}

// fusedStep is the buffers of one decode step's attention: the layer's q, k, v rows,
// caches, positions and output.
type fusedStep struct {
	q, k, v, kc, vc, pos, dst backend.Buffer
}

func checkFused(t *testing.T, d *Device, c fusedCase) {
	const ctx = 700
	r := rand.New(rand.NewPCG(uint64(c.hd+c.heads), uint64(c.dims)))
	qCols, kvCols := c.heads*c.hd, c.kvHeads*c.hd
	q, k, v := randoms(r, qCols), randoms(r, kvCols), randoms(r, kvCols)
	f16 := func(x []float32) []byte {
		b := make([]byte, 2*len(x))
		tensor.Quantize(tensor.F16, b, x)
		return b
	}
	kCache, vCache := f16(randoms(r, ctx*kvCols)), f16(randoms(r, ctx*kvCols))
	rope := backend.Rope{HeadDim: c.hd, Dims: c.dims, Base: 10000, Scale: 1, NeoX: c.neox}
	if c.factors {
		f := make([]float32, c.dims/2)
		for i := range f {
			f[i] = 1 + float32(i%7)/3
		}
		rope.Factors = devBuf(t, d, tensor.F32, 1, len(f), tensor.Float32Bytes(f))
		rope.Base, rope.Scale = 500000, 0.5
	}
	at := backend.Attention{Heads: c.heads, KVHeads: c.kvHeads, HeadDim: c.hd, Scale: float32(1 / math.Sqrt(float64(c.hd)))}
	newStep := func() *fusedStep {
		return &fusedStep{
			q: devBuf(t, d, tensor.F32, 1, qCols, nil), k: devBuf(t, d, tensor.F32, 1, kvCols, nil), v: devBuf(t, d, tensor.F32, 1, kvCols, nil),
			kc: devBuf(t, d, tensor.F16, ctx, kvCols, nil), vc: devBuf(t, d, tensor.F16, ctx, kvCols, nil),
			pos: devBuf(t, d, tensor.I32, 1, 1, nil), dst: devBuf(t, d, tensor.F32, 1, qCols, nil),
		}
	}
	reset := func(s *fusedStep, p int32) {
		for _, u := range []struct {
			b   backend.Buffer
			raw []byte
		}{{s.q, tensor.Float32Bytes(q)}, {s.k, tensor.Float32Bytes(k)}, {s.v, tensor.Float32Bytes(v)}, {s.kc, kCache}, {s.vc, vCache},
			{s.pos, binary.LittleEndian.AppendUint32(nil, uint32(p))}, {s.dst, make([]byte, 4*qCols)}} {
			if err := d.Upload(u.b, u.raw); err != nil {
				t.Fatal(err)
			}
		}
	}
	feeds := func(kn backend.Kernels, s *fusedStep) {
		kn.RoPE(s.q, s.pos, rope)
		kn.RoPE(s.k, s.pos, rope)
		kn.SetRows(s.kc, s.k, s.pos)
		kn.SetRows(s.vc, s.v, s.pos)
	}
	step := func(kn backend.Kernels, s *fusedStep) {
		feeds(kn, s)
		kn.Attention(s.dst, s.q, s.kc, s.vc, s.pos, at)
	}
	// held checks that the four calls before attention are held as one chain that the
	// attention call takes (so that the fused kernel is what runs).
	held := func(s *fusedStep) {
		err := d.lock(holdCall, func() error {
			c := d.heldChain()
			_, g, _ := gqaEntry(tensor.F16, c0hd(c), at.Heads/at.KVHeads, d.attnSplit.group)
			if c == nil || c.setV == nil || d.held != nil ||
				!c.feeds(d.buffer(s.dst, ""), d.buffer(s.q, ""), d.buffer(s.kc, ""), d.buffer(s.vc, ""), d.buffer(s.pos, ""), at, g) {
				return fmt.Errorf("the step's RoPEs and stores are not held for attention (chain %+v)", c)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	download := func(s *fusedStep) [][]byte {
		var out [][]byte
		for _, b := range []backend.Buffer{s.dst, s.q, s.k, s.kc, s.vc} {
			raw := make([]byte, b.DType().RowBytes(b.Cols())*b.Rows())
			if err := d.Download(raw, b); err != nil {
				t.Fatal(err)
			}
			out = append(out, raw)
		}
		return out
	}
	names := []string{"attention", "q", "k", "k cache", "v cache"}
	un, fu := newStep(), newStep()
	g, err := d.Capture(func(kn backend.Kernels) error { step(kn, fu); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i, p := range []int32{0, 1, 33, 300, ctx - 1, 5} {
		reset(un, p)
		d.noFuse = true
		step(d, un)
		d.noFuse = false
		want := download(un)
		reset(fu, p)
		if i%2 == 0 {
			feeds(d, fu)
			held(fu)
			d.Attention(fu.dst, fu.q, fu.kc, fu.vc, fu.pos, at)
		} else if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		got := download(fu)
		for j := range want {
			if !slices.Equal(got[j], want[j]) {
				t.Fatalf("pos %d (graph %v): fused %s differs from unfused", p, i%2 == 1, names[j])
			}
		}
		qr, kcr := make([]float32, qCols), make([]float32, ctx*kvCols)
		vcr := make([]float32, ctx*kvCols)
		tensor.Dequantize(tensor.F32, qr, want[1])
		tensor.Dequantize(tensor.F16, kcr, want[3])
		tensor.Dequantize(tensor.F16, vcr, want[4])
		out := make([]float32, qCols)
		tensor.Dequantize(tensor.F32, out, want[0])
		compareAttention(t, out, attentionRef(qr, kcr, vcr, []int32{p}, at), qCols)
	}
}

// TestAttnChainTakes checks, without a GPU, which calls a held chain of RoPEs takes and
// which attention it feeds.
func TestAttnChainTakes(t *testing.T) {
	q, k, v := fakeBuf(0x10000, 1, 4096), fakeBuf(0x20000, 1, 1024), fakeBuf(0x30000, 1, 1024)
	kc := &Buffer{dt: tensor.F16, rows: 512, cols: 1024, ptr: 0x100000}
	vc := &Buffer{dt: tensor.F16, rows: 512, cols: 1024, ptr: 0x200000}
	kc32 := &Buffer{dt: tensor.F32, rows: 512, cols: 1024, ptr: 0x300000}
	pos, pos2 := &Buffer{dt: tensor.I32, rows: 1, cols: 1, ptr: 0x40000}, &Buffer{dt: tensor.I32, rows: 1, cols: 1, ptr: 0x41000}
	o := fakeBuf(0x50000, 1, 4096)
	rp := ropeParams{pos: pos.ptr, headDim: 128, dims: 128, base: 1e4, scale: 1}
	chain := func() *attnChain {
		return &attnChain{q: &heldPair{rope: true, a: q, rows: pos, rp: rp}, k: &heldPair{rope: true, a: k, rows: pos, rp: rp}}
	}
	set := func(dst, src, rows *Buffer) *heldPair { return &heldPair{dst: dst, a: src, rows: rows} }
	for _, c := range []struct {
		name string
		sets []*heldPair // in order; the last is the one checked
		want bool
	}{
		{"k's store", []*heldPair{set(kc, k, pos)}, true},
		{"then v's", []*heldPair{set(kc, k, pos), set(vc, v, pos)}, true},
		{"a third", []*heldPair{set(kc, k, pos), set(vc, v, pos), set(fakeBuf(0x60000, 512, 1024), v, pos)}, false},
		{"v's first", []*heldPair{set(vc, v, pos)}, false},
		{"other positions", []*heldPair{set(kc, k, pos2)}, false},
		{"an F32 cache", []*heldPair{set(kc32, k, pos)}, false},
		{"a cache over q", []*heldPair{set(&Buffer{dt: tensor.F16, rows: 16, cols: 1024, ptr: q.ptr}, k, pos)}, false},
		{"v is q", []*heldPair{set(kc, k, pos), set(vc, fakeBuf(q.ptr, 1, 1024), pos)}, false},
		{"v into k's cache", []*heldPair{set(kc, k, pos), set(kc, v, pos)}, false},
		{"a RoPE", []*heldPair{{rope: true, a: v, rows: pos, rp: rp}}, false},
	} {
		ch := chain()
		var got bool
		for _, s := range c.sets {
			got = ch.takes(s)
		}
		if got != c.want {
			t.Errorf("takes %s: %v, want %v", c.name, got, c.want)
		}
	}

	at := backend.Attention{Heads: 32, KVHeads: 8, HeadDim: 128, Scale: 0.088}
	full := func() *attnChain {
		ch := chain()
		if !ch.takes(set(kc, k, pos)) || !ch.takes(set(vc, v, pos)) {
			t.Fatal("chain refused the stores")
		}
		return ch
	}
	for _, c := range []struct {
		name         string
		ch           *attnChain
		o, q, kc, vc *Buffer
		p            *Buffer
		at           backend.Attention
		g            int
		want         bool
	}{
		{"the step's attention", full(), o, q, kc, vc, pos, at, 4, true},
		{"stores missing", func() *attnChain { ch := chain(); ch.takes(set(kc, k, pos)); return ch }(), o, q, kc, vc, pos, at, 4, false},
		{"two blocks a K/V head", full(), o, q, kc, vc, pos, backend.Attention{Heads: 32, KVHeads: 4, HeadDim: 128}, 4, true},
		{"a block over two groups", full(), o, q, kc, vc, pos, backend.Attention{Heads: 32, KVHeads: 16, HeadDim: 128}, 4, false},
		{"other q", full(), o, fakeBuf(0x70000, 1, 4096), kc, vc, pos, at, 4, false},
		{"caches swapped", full(), o, q, vc, kc, pos, at, 4, false},
		{"other positions", full(), o, q, kc, vc, pos2, at, 4, false},
		{"other head dim", full(), o, q, kc, vc, pos, backend.Attention{Heads: 64, KVHeads: 16, HeadDim: 64}, 4, false},
		{"dst over k", full(), fakeBuf(k.ptr, 1, 4096), q, kc, vc, pos, at, 4, false},
		{"two rows", full(), fakeBuf(0x50000, 2, 4096), q, kc, vc, pos, at, 4, false},
	} {
		if got := c.ch.feeds(c.o, c.q, c.kc, c.vc, c.p, c.at, c.g); got != c.want {
			t.Errorf("feeds %s: %v, want %v", c.name, got, c.want)
		}
	}
}

// c0hd is the head dimension of the chain's RoPEs, 0 without a chain.
func c0hd(c *attnChain) int {
	if c == nil {
		return 0
	}
	return c.q.rp.headDim
}
