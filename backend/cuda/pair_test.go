//go:build cgo

package cuda

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// fakeBuf is a buffer description for the holding logic alone: no device memory.
func fakeBuf(ptr uint64, rows, cols int) *Buffer {
	return &Buffer{dt: tensor.F32, rows: rows, cols: cols, ptr: ptr}
}

// TestHeldNormJoins checks which calls join held per-head norms (no device needed).
func TestHeldNormJoins(t *testing.T) {
	q, k, qw, kw := fakeBuf(0x10000, 1, 4096), fakeBuf(0x20000, 1, 1024), fakeBuf(0x30000, 1, 128), fakeBuf(0x31000, 1, 128)
	pos, pos2 := &Buffer{dt: tensor.I32, rows: 1, cols: 1, ptr: 0x40000}, &Buffer{dt: tensor.I32, rows: 1, cols: 1, ptr: 0x41000}
	rp := ropeParams{pos: pos.ptr, headDim: 128, dims: 128, base: 1e6, scale: 1, neox: 1}
	rope := func(x, p *Buffer, r ropeParams) *heldPair { return &heldPair{rope: true, a: x, rows: p, rp: r} }
	norm := func(x, w *Buffer) heldNorm { return heldNorm{x: x, w: w, eps: 1e-6} }
	held := func(ns ...heldNorm) *heldPair { return &heldPair{norms: ns} }

	for _, c := range []struct {
		name string
		p    *heldPair
		n    heldNorm
		want bool
	}{
		{"k after q", held(norm(q, qw)), norm(k, kw), true},
		{"third norm", held(norm(q, qw), norm(k, kw)), norm(fakeBuf(0x50000, 1, 1024), kw), false},
		{"same matrix", held(norm(q, qw)), norm(q, qw), false},
		{"other head size", held(norm(q, qw)), norm(k, fakeBuf(0x31000, 1, 64)), false},
		{"other rows", held(norm(q, qw)), norm(fakeBuf(0x20000, 2, 1024), kw), false},
		{"other eps", held(norm(q, qw)), heldNorm{x: k, w: kw, eps: 1e-5}, false},
		{"weight inside q", held(norm(q, qw)), norm(k, fakeBuf(0x10000+512, 1, 128)), false},
		{"after q's RoPE", held(heldNorm{x: q, w: qw, eps: 1e-6, rope: rope(q, pos, rp)}), norm(k, kw), false},
	} {
		if got := c.p.takesNorm(c.n); got != c.want {
			t.Errorf("takesNorm %s: %v, want %v", c.name, got, c.want)
		}
	}

	kp := rp
	kp.pos = pos2.ptr
	for _, c := range []struct {
		name  string
		p     *heldPair
		ropes []*heldPair // in order; the last is the one checked
		want  bool
	}{
		{"q's RoPE", held(norm(q, qw), norm(k, kw)), []*heldPair{rope(q, pos, rp)}, true},
		{"then k's", held(norm(q, qw), norm(k, kw)), []*heldPair{rope(q, pos, rp), rope(k, pos, rp)}, true},
		{"k's first", held(norm(q, qw), norm(k, kw)), []*heldPair{rope(k, pos, rp)}, false},
		{"k's at other positions", held(norm(q, qw), norm(k, kw)), []*heldPair{rope(q, pos, rp), rope(k, pos2, kp)}, false},
		{"other head dim", held(norm(q, qw)), []*heldPair{rope(q, pos, ropeParams{pos: pos.ptr, headDim: 64, dims: 64, base: 1e6, scale: 1})}, false},
		{"a view of q", held(norm(q, qw)), []*heldPair{rope(fakeBuf(q.ptr, 1, 2048), pos, rp)}, false},
		{"positions in q", held(norm(q, qw)), []*heldPair{rope(q, &Buffer{dt: tensor.I32, rows: 1, cols: 1, ptr: q.ptr + 64}, rp)}, false},
		{"third RoPE", held(norm(q, qw)), []*heldPair{rope(q, pos, rp), rope(q, pos, rp)}, false},
		{"a SetRows", held(norm(q, qw)), []*heldPair{{a: q, dst: k, rows: pos}}, false},
	} {
		var got bool
		for _, r := range c.ropes {
			got = c.p.takesRope(r)
		}
		if got != c.want {
			t.Errorf("takesRope %s: %v, want %v", c.name, got, c.want)
		}
	}
	if p := held(norm(q, qw)); p.twin(&heldPair{a: q, dst: k, rows: pos}) {
		t.Error("held norms taken as a SetRows twin")
	}
}

// TestNormRopeFusion runs sequences of per-head norms and RoPEs of q and k, fused and
// unfused, and expects the same bits: whatever part of the sequence is held when
// another call comes launches with norm_rope2_f32 as the separate kernels would compute.
func TestNormRopeFusion(t *testing.T) {
	d := openTest(t)
	if !d.has(normEntry) {
		t.Fatalf("kernels without %s", normEntry)
	}
	const qHeads, kHeads = 8, 2
	for _, c := range []struct {
		name     string
		rows, hd int
		rope     backend.Rope
		calls    string // n: norm q, m: norm k, r: RoPE q, s: RoPE k, a: Add (another call)
	}{
		{"qwen3 decode", 1, 128, backend.Rope{HeadDim: 128, Dims: 128, Base: 1e6, Scale: 1, NeoX: true}, "nmrs"},
		{"prompt batch", 7, 128, backend.Rope{HeadDim: 128, Dims: 128, Base: 1e6, Scale: 1, NeoX: true}, "nmrs"},
		{"partial rotary, adjacent pairs", 3, 64, backend.Rope{HeadDim: 64, Dims: 32, Base: 1e4, Scale: 0.5}, "nmrs"},
		{"odd head size", 2, 80, backend.Rope{HeadDim: 80, Dims: 80, Base: 1e4, Scale: 1, NeoX: true}, "nmrs"},
		{"norms alone", 1, 128, backend.Rope{HeadDim: 128, Dims: 128, Base: 1e6, Scale: 1, NeoX: true}, "nma"},
		{"q's RoPE only", 1, 128, backend.Rope{HeadDim: 128, Dims: 128, Base: 1e6, Scale: 1, NeoX: true}, "nmra"},
		{"one norm", 1, 128, backend.Rope{HeadDim: 128, Dims: 128, Base: 1e6, Scale: 1, NeoX: true}, "nrs"},
		{"k's RoPE first", 1, 128, backend.Rope{HeadDim: 128, Dims: 128, Base: 1e6, Scale: 1, NeoX: true}, "nmsr"},
		{"interleaved", 1, 128, backend.Rope{HeadDim: 128, Dims: 128, Base: 1e6, Scale: 1, NeoX: true}, "nrms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got [2][][]float32
			for i, noFuse := range []bool{true, false} {
				d.noFuse = noFuse
				got[i] = normRopeRun(t, d, c.rows, qHeads, kHeads, c.hd, c.rope, c.calls)
			}
			d.noFuse = false
			for b, name := range []string{"q", "k", "x"} {
				for i := range got[0][b] {
					want, have := got[0][b][i], got[1][b][i]
					if math.Float32bits(want) != math.Float32bits(have) || math.IsNaN(float64(have)) {
						t.Fatalf("%s[%d]: fused %v, unfused %v", name, i, have, want)
					}
				}
			}
		})
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// normRopeRun uploads random q (rows, qHeads·hd), k (rows, kHeads·hd), weights and
// positions, issues calls and returns q, k and x (the Add's target) downloaded.
func normRopeRun(t *testing.T, d *Device, rows, qHeads, kHeads, hd int, r backend.Rope, calls string) [][]float32 {
	rng := rand.New(rand.NewPCG(11, uint64(rows*hd)))
	var bufs []backend.Buffer
	alloc := func(rows, cols int, f func(i int) float32) backend.Buffer {
		b, err := d.Alloc(tensor.F32, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float32, rows*cols)
		for i := range v {
			v[i] = f(i)
		}
		if err := d.Upload(b, tensor.Float32Bytes(v)); err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
		return b
	}
	normal := func(int) float32 { return float32(rng.NormFloat64() * 3) }
	q, k, x := alloc(rows, qHeads*hd, normal), alloc(rows, kHeads*hd, normal), alloc(1, 64, normal)
	qw, kw, y := alloc(1, hd, normal), alloc(1, hd, normal), alloc(1, 64, normal)
	pos, err := d.Alloc(tensor.I32, rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]int32, rows)
	for i := range p {
		p[i] = int32(100*i + 37)
	}
	if err := d.Upload(pos, i32Bytes(p)); err != nil {
		t.Fatal(err)
	}
	bufs = append(bufs, pos)
	for _, c := range calls {
		switch c {
		case 'n':
			d.RMSNorm(q, q, qw, 1e-6)
		case 'm':
			d.RMSNorm(k, k, kw, 1e-6)
		case 'r':
			d.RoPE(q, pos, r)
		case 's':
			d.RoPE(k, pos, r)
		case 'a':
			d.Add(x, y)
		}
	}
	var out [][]float32
	for _, b := range []backend.Buffer{q, k, x} {
		raw := make([]byte, b.(*Buffer).Bytes())
		if err := d.Download(raw, b); err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]float32(nil), tensor.Float32s(raw)...))
	}
	for _, b := range bufs {
		d.Free(b)
	}
	return out
}

func i32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}
