//go:build cgo

package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// miniBlock is a small llama block's decode step on one device: the call sequence the
// model issues, which the fusions of fuse.go rewrite.
type miniBlock struct {
	d                            *Device
	kn                           backend.Kernels // d, or the Kernels of a capture in progress
	x, xb, q, k, v, o, g, u, h   backend.Buffer
	att, kc, vc, pos             backend.Buffer
	norm, wq, wk, wv, wo, wg, wu backend.Buffer
	wd                           backend.Buffer
	qNorm, kNorm                 backend.Buffer // per-head norm weights (qwen3), or nil
	bq, bk, bv                   backend.Buffer // q, k and v biases (qwen2), or nil
}

// randomRaw is a rows x cols tensor of dt drawn from r: normal values for F32, random bytes
// with usable block scales (fixScales) for the other types.
func randomRaw(r *rand.Rand, dt tensor.DType, rows, cols int) []byte {
	raw := make([]byte, dt.RowBytes(cols)*rows)
	if dt == tensor.F32 {
		f := tensor.Float32s(raw)
		for i := range f {
			f[i] = float32(r.NormFloat64())
		}
		return raw
	}
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	fixScales(dt, raw)
	return raw
}

func newMiniBlock(t testing.TB, d *Device, wt tensor.DType) *miniBlock {
	const dim, ff = 512, 1024
	r := rand.New(rand.NewPCG(7, uint64(wt)))
	alloc := func(dt tensor.DType, rows, cols int) backend.Buffer {
		b, err := d.Alloc(dt, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Upload(b, randomRaw(r, dt, rows, cols)); err != nil {
			t.Fatal(err)
		}
		return b
	}
	m := &miniBlock{d: d, kn: d}
	m.x, m.xb, m.q, m.o = alloc(tensor.F32, 1, dim), alloc(tensor.F32, 1, dim), alloc(tensor.F32, 1, dim), alloc(tensor.F32, 1, dim)
	m.k, m.v = alloc(tensor.F32, 1, dim/2), alloc(tensor.F32, 1, dim/2)
	m.g, m.u, m.h = alloc(tensor.F32, 1, ff), alloc(tensor.F32, 1, ff), alloc(tensor.F32, 1, ff)
	m.norm = alloc(tensor.F32, 1, dim)
	m.att, m.kc, m.vc = alloc(tensor.F32, 1, dim), alloc(tensor.F16, 8, dim/2), alloc(tensor.F16, 8, dim/2)
	m.pos = alloc(tensor.I32, 1, 1)
	if err := d.Upload(m.pos, []byte{3, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	m.wq, m.wk, m.wv, m.wo = alloc(wt, dim, dim), alloc(wt, dim/2, dim), alloc(wt, dim/2, dim), alloc(wt, dim, dim)
	m.wg, m.wu, m.wd = alloc(wt, ff, dim), alloc(wt, ff, dim), alloc(wt, dim, ff)
	return m
}

// step enqueues the block: norm, q/k/v, RoPE of q and k, the cache stores, attention
// (8 heads of 64 over 4 K/V heads at position 3), o with the residual add, norm,
// gate/up, SwiGLU, down with the residual add; x is normalised after attention to keep
// values bounded.
func (m *miniBlock) step() {
	d := m.kn
	rope := backend.Rope{HeadDim: 64, Dims: 64, Base: 10000, Scale: 1}
	d.RMSNorm(m.xb, m.x, m.norm, 1e-5)
	d.MatMul(m.q, m.wq, m.xb)
	d.MatMul(m.k, m.wk, m.xb)
	d.MatMul(m.v, m.wv, m.xb)
	if m.bq != nil {
		d.Add(m.q, m.bq)
		d.Add(m.k, m.bk)
		d.Add(m.v, m.bv)
	}
	if m.qNorm != nil {
		d.RMSNorm(m.q, m.q, m.qNorm, 1e-6)
		d.RMSNorm(m.k, m.k, m.kNorm, 1e-6)
	}
	d.RoPE(m.q, m.pos, rope)
	d.RoPE(m.k, m.pos, rope)
	d.SetRows(m.kc, m.k, m.pos)
	d.SetRows(m.vc, m.v, m.pos)
	d.Attention(m.att, m.q, m.kc, m.vc, m.pos, backend.Attention{Heads: 8, KVHeads: 4, HeadDim: 64, Scale: 0.125})
	d.MatMul(m.o, m.wo, m.att)
	d.Add(m.x, m.o)
	d.RMSNorm(m.x, m.x, m.norm, 1e-5)
	d.RMSNorm(m.xb, m.x, m.norm, 1e-5)
	d.MatMul(m.g, m.wg, m.xb)
	d.MatMul(m.u, m.wu, m.xb)
	d.SwiGLU(m.h, m.g, m.u)
	d.MatMul(m.o, m.wd, m.h)
	d.Add(m.x, m.o)
}

// addBiases gives the block random q, k and v biases (qwen2).
func (m *miniBlock) addBiases(t testing.TB) {
	r := rand.New(rand.NewPCG(11, 12))
	bias := func(like backend.Buffer) backend.Buffer {
		b, err := m.d.Alloc(tensor.F32, 1, like.Cols())
		if err != nil {
			t.Fatal(err)
		}
		if err := m.d.Upload(b, randomRaw(r, tensor.F32, 1, like.Cols())); err != nil {
			t.Fatal(err)
		}
		return b
	}
	m.bq, m.bk, m.bv = bias(m.q), bias(m.k), bias(m.v)
}

// TestBiasHeld checks that the biases after the q, k and v mat-vecs join the held fused
// launch (TestFusion checks the bits either way), and that neither a row a held mat-vec
// writes nor its own input does.
func TestBiasHeld(t *testing.T) {
	d := openTest(t)
	m := newMiniBlock(t, d, tensor.Q4_0)
	m.addBiases(t)
	held := func() (h *heldMV) {
		if err := d.lock(holdCall, func() error { h = d.held; return nil }); err != nil {
			t.Fatal(err)
		}
		return h
	}
	d.MatMul(m.q, m.wq, m.xb)
	d.MatMul(m.k, m.wk, m.xb)
	d.MatMul(m.v, m.wv, m.xb)
	d.Add(m.q, m.bq)
	d.Add(m.k, m.bk)
	d.Add(m.v, m.bv)
	h := held()
	if h == nil || len(h.dsts) != 3 {
		t.Fatalf("held %+v, want the three mat-vecs", h)
	}
	for i, b := range []backend.Buffer{m.bq, m.bk, m.bv} {
		if h.bias[i] != b.(*Buffer) {
			t.Errorf("matrix %d: bias %v, want %v", i, h.bias[i], b)
		}
	}
	d.Add(m.k, m.v) // v is written by the held launch: a plain Add after it
	if held() != nil {
		t.Error("an Add of a held output into another held output did not launch the held work")
	}
	d.MatMul(m.q, m.wq, m.xb)
	d.Add(m.q, m.xb) // the held mat-vec's own input
	if held() != nil {
		t.Error("the held mat-vec's input joined it as a bias")
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// on runs fn with the block's kernels issued through k (a capture's).
func (m *miniBlock) on(k backend.Kernels, fn func()) {
	m.kn = k
	defer func() { m.kn = m.d }()
	fn()
}

// state downloads the block's activations.
func (m *miniBlock) state(t testing.TB) [][]float32 {
	var out [][]float32
	for _, b := range []backend.Buffer{m.x, m.xb, m.q, m.k, m.v, m.o, m.g, m.u, m.h, m.att} {
		raw := make([]byte, b.(*Buffer).Bytes())
		if err := m.d.Download(raw, b); err != nil {
			t.Fatal(err)
		}
		out = append(out, tensor.Float32s(raw))
	}
	return out
}

// TestFusion runs a block step with the fusions and without and expects the same bits:
// the fused kernels keep the unfused ones' arithmetic and order.
// With qk, the block normalises each head of q and k before RoPE, as qwen3 does; with
// bias, it adds biases to q, k and v, as qwen2 does.
func TestFusion(t *testing.T) {
	d := openTest(t)
	for _, c := range []struct {
		wt       tensor.DType
		qk, bias bool
	}{{tensor.Q4_0, false, false}, {tensor.Q8_0, false, false}, {tensor.Q4_K, false, false}, {tensor.Q6_K, false, false},
		{tensor.F16, false, false}, {tensor.Q4_0, true, false}, {tensor.Q4_K, true, false},
		{tensor.Q4_0, false, true}, {tensor.Q4_K, false, true}, {tensor.F16, false, true}} {
		wt := c.wt
		name := wt.String()
		if c.qk {
			name += "-qknorm"
		}
		if c.bias {
			name += "-bias"
		}
		t.Run(name, func(t *testing.T) {
			var got [2][][]float32
			for i, noFuse := range []bool{true, false} {
				d.noFuse = noFuse
				m := newMiniBlock(t, d, wt)
				if c.qk {
					m.qNorm, m.kNorm = headWeight(t, d, 1), headWeight(t, d, 2)
				}
				if c.bias {
					m.addBiases(t)
				}
				m.step()
				m.step()
				got[i] = m.state(t)
			}
			d.noFuse = false
			names := []string{"x", "xb", "q", "k", "v", "o", "g", "u", "h", "att"}
			for b := range got[0] {
				maxDiff := 0.0
				for i := range got[0][b] {
					want, have := float64(got[0][b][i]), float64(got[1][b][i])
					if math.IsNaN(have) || math.IsNaN(want) {
						t.Fatalf("%s[%d]: NaN (fused %v, unfused %v)", names[b], i, have, want)
					}
					maxDiff = max(maxDiff, math.Abs(want-have))
				}
				if maxDiff > 0 {
					t.Errorf("%s: fused differs from unfused by up to %g", names[b], maxDiff)
				}
			}
		})
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestRecord records a block step, replays it on new inputs and compares with running
// it directly; freeing a buffer the graph uses drops it.
func TestRecord(t *testing.T) {
	d := openTest(t)
	m := newMiniBlock(t, d, tensor.Q4_0)
	ref := newMiniBlock(t, d, tensor.Q4_0) // same seed: same weights and inputs
	calls := 0
	for step := range 3 {
		if err := d.Record("block", func(k backend.Kernels) { calls++; m.on(k, m.step) }); err != nil {
			t.Fatal(err)
		}
		ref.step()
		a, b := m.state(t), ref.state(t)
		for i := range a[0] {
			if a[0][i] != b[0][i] {
				t.Fatalf("step %d: x[%d] = %v replayed, %v direct", step, i, a[0][i], b[0][i])
			}
		}
	}
	if calls != 1 {
		t.Fatalf("enqueue called %d times, want 1", calls)
	}
	d.Free(m.h)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	n := len(d.graphs)
	d.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d graphs kept after freeing a buffer they use, want 0", n)
	}
}

// headWeight is a per-head norm weight of 64 elements around 1, from seed.
func headWeight(t testing.TB, d *Device, seed uint64) backend.Buffer {
	r := rand.New(rand.NewPCG(seed, 64))
	w := make([]float32, 64)
	for i := range w {
		w[i] = float32(1 + 0.3*r.NormFloat64())
	}
	return f32s(t, d, w)
}
