package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

// The tests below compare this level's kernels (assembly where the level has it) with
// the Go definitions bit for bit, on values of widely spread magnitudes. The AVX2
// kernels use true float32 FMAs where fma32 rounds through float64; the two differ
// only on double-rounding ties (about once in 2^29 operations), which these seeds do
// not produce.

// TestSoftmaxExpBits checks softmaxExp against softmaxExpGo: the exponentials written
// back and the float64 sum, for lengths around the 16-lane groups, maxima that make
// some exponentials underflow, and masked (-Inf) scores.
func TestSoftmaxExpBits(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := range 500 {
		n := 1 + trial%70
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(8)))
			if r.IntN(20) == 0 {
				s[i] = float32(math.Inf(-1))
			}
		}
		m := s[0]
		for _, x := range s {
			m = max(m, x)
		}
		if trial%3 == 0 {
			m += float32(r.Float64() * 50)
		}
		got, want := append([]float32(nil), s...), append([]float32(nil), s...)
		gs, ws := softmaxExp(got, m), softmaxExpGo(want, m)
		if math.Float64bits(gs) != math.Float64bits(ws) {
			t.Fatalf("n=%d: sum %g, Go %g", n, gs, ws)
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d [%d]: exp(%g) = %g, Go %g", n, i, s[i]-m, got[i], want[i])
			}
		}
	}
}

// TestChunkScoresBits checks attendOneChunk's scores against vecDotF16Go, key by key,
// for heads of several sizes (under and over the 64 of a block) inside a wider cache row.
func TestChunkScoresBits(t *testing.T) {
	checkChunkScores(t, rand.New(rand.NewPCG(15, 16)), 200, []int{4, 8, 16, 32, 64, 72, 128}, 80,
		chunkScores)
}

// TestFloatTilesBits checks the F32 and F16 tile kernels MatMul uses against the
// per-output Go definitions (sgemmF32Go, vecDotF32Go, sgemmF16Go, vecDotF16Go), for
// odd and even tile sizes, strides wider than a row, and row lengths around the blocks.
func TestFloatTilesBits(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, wt := range []tensor.DType{tensor.F32, tensor.F16} {
		for _, sgemm := range []bool{true, false} {
			tile := floatTile(wt, sgemm)
			if tile == nil {
				t.Logf("%v sgemm=%v: no tile form at level %v", wt, sgemm, tensor.Level())
				continue
			}
			for trial := range 60 {
				n := []int{16, 32, 48, 64, 80, 128, 172, 256, 320}[trial%9]
				if sgemm && n%16 != 0 || n == 0 {
					continue
				}
				mw, mx := 1+r.IntN(7), 1+r.IntN(7)
				name := fmt.Sprintf("%v sgemm=%v n=%d %d×%d", wt, sgemm, n, mw, mx)
				es := wt.RowBytes(1)
				wStride, xStride := n*es+es*r.IntN(3)*8, n*es+es*r.IntN(3)*8
				w, x := randRows(r, wt, mw, n, wStride), randRows(r, wt, mx, n, xStride)
				dstStride := mw + r.IntN(3)
				dst := make([]float32, (mx-1)*dstStride+mw)
				tx, txStride := x, xStride
				if wt == tensor.F16 { // the tile takes the activations widened
					txStride = 4*n + 4*r.IntN(3)*8
					tx = make([]byte, (mx-1)*txStride+4*n)
					for i := range mx {
						row := tensor.Float32s(tx[i*txStride:])
						for j, h := range uint16s(x[i*xStride:])[:n] {
							row[j] = fromF16(h)
						}
					}
				}
				tile(n, w, wStride, mw, tx, txStride, mx, dst, dstStride)
				for i := range mx {
					for o := range mw {
						want := goDot(wt, sgemm, w[o*wStride:o*wStride+n*es], x[i*xStride:i*xStride+n*es], n)
						if got := dst[i*dstStride+o]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%s [%d][%d]: %g, Go %g", name, i, o, got, want)
						}
					}
				}
			}
		}
	}
}

// randRows returns rows rows of n elements of wt (F32 or F16), stride bytes apart,
// with values of widely spread magnitudes and some zeros.
func randRows(r *rand.Rand, wt tensor.DType, rows, n, stride int) []byte {
	b := make([]byte, (rows-1)*stride+wt.RowBytes(n))
	for row := range rows {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(24)-12))
			if r.IntN(16) == 0 {
				v[i] = 0
			}
		}
		if err := tensor.Quantize(wt, b[row*stride:row*stride+wt.RowBytes(n)], v); err != nil {
			panic(err)
		}
	}
	return b
}

// goDot is the Go definition of the dot that a tile computes.
func goDot(wt tensor.DType, sgemm bool, w, x []byte, n int) float32 {
	switch {
	case wt == tensor.F32 && sgemm:
		return sgemmF32Go(tensor.Float32s(w)[:n], tensor.Float32s(x)[:n])
	case wt == tensor.F32:
		return vecDotF32Go(tensor.Float32s(w)[:n], tensor.Float32s(x)[:n], n)
	case sgemm:
		return sgemmF16Go(uint16s(w)[:n], uint16s(x)[:n])
	}
	return vecDotF16Go(uint16s(w)[:n], uint16s(x)[:n])
}

// TestExpfRowBits checks expfRow against expf for every lane position, over the range
// the softmax feeds it (differences of scores, ≤ 0) and the special arguments.
func TestExpfRowBits(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()),
		-87.9, -88, -88.1, -103.9, -104, -150, 88.7, 88.8, 1e-30, -1e-30, -0x1p-149}
	for trial := range 400 {
		n := 1 + trial%37
		src := make([]float32, n)
		for i := range src {
			switch r.IntN(6) {
			case 0:
				src[i] = specials[r.IntN(len(specials))]
			case 1:
				src[i] = float32(-r.Float64() * 120)
			default:
				src[i] = float32(-math.Abs(r.NormFloat64()) * math.Ldexp(1, r.IntN(10)-5))
			}
		}
		dst := make([]float32, n)
		expfRow(dst, src)
		for i, x := range src {
			if want := expf(x); math.Float32bits(dst[i]) != math.Float32bits(want) && !(want != want && dst[i] != dst[i]) {
				t.Fatalf("expfRow: expf(%g) = %g, want %g", x, dst[i], want)
			}
		}
	}
}

// attendOneChunkSeq is attendOneChunk as llama.cpp writes it, one key at a time: the
// definition the phased form must reproduce bit for bit.
func attendOneChunkSeq(out, q []float32, k, v []uint16, h kvHead, scale float32) {
	hd := len(q)
	q16, acc := make([]uint16, hd), make([]uint16, hd)
	for d, x := range q {
		q16[d] = toF16(x)
	}
	m, sum := float32(math.Inf(-1)), float32(0)
	for j := 0; j < h.n; j++ {
		s := vecDotF16Go(k[j*h.cols+h.off:j*h.cols+h.off+hd], q16) * scale
		ms, vs := float32(1), float32(1)
		if s > m {
			ms = expf(m - s)
			m = s
			scaleRowF16Go(acc, ms)
		} else {
			vs = expf(s - m)
		}
		madRowF16Go(acc, v[j*h.cols+h.off:j*h.cols+h.off+hd], vs)
		sum = tensor.Fmaf(sum, ms, vs)
	}
	inv := float32(0)
	if sum != 0 {
		inv = 1 / sum
	}
	for d, a := range acc {
		out[d] = fromF16(a) * inv
	}
}

// TestAttendOneChunkBits checks attendOneChunk against attendOneChunkSeq, for heads of
// several sizes, cache rows wider than a head, and scores spread enough to make
// weights underflow.
func TestAttendOneChunkBits(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := range 300 {
		hd := []int{4, 8, 16, 24, 32, 64, 128}[trial%7]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(100)
		k, v := make([]uint16, nkeys*cols), make([]uint16, nkeys*cols)
		spread := r.IntN(12)
		for i := range k {
			k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(spread+1))))
			v[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(10)-5)))
		}
		q := make([]float32, hd)
		for i := range q {
			q[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(spread+1)))
		}
		h := kvHead{off: r.IntN(kvHeads) * hd, cols: cols, n: nkeys}
		var sc attentionScratch
		sc.grow(nkeys, hd)
		got, want := make([]float32, hd), make([]float32, hd)
		attendOneChunk(got, q, k, v, h, 0.25, &sc)
		attendOneChunkSeq(want, q, k, v, h, 0.25)
		for d := range got {
			if math.Float32bits(got[d]) != math.Float32bits(want[d]) && !(got[d] != got[d] && want[d] != want[d]) {
				t.Fatalf("hd=%d keys %d [%d]: %g, sequential %g", hd, nkeys, d, got[d], want[d])
			}
		}
	}
}

// TestF16RowsBits checks the F32 to F16 row conversions of SetRows and of the F16
// matmul's activations against tensor.F32ToF16, NaNs and overflows included.
func TestF16RowsBits(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), 65504, 65520, 65519.99,
		-65520, 1e-8, 0x1p-24, 0x1p-25, 0x1.8p-25, 5.9604645e-08, math.MaxFloat32,
		float32(math.NaN()), math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00123)}
	for trial := range 300 {
		n := 1 + trial%40
		src := make([]float32, n)
		for i := range src {
			switch r.IntN(8) {
			case 0:
				src[i] = specials[r.IntN(len(specials))]
			case 1:
				src[i] = math.Float32frombits(r.Uint32()) // NaNs among them
			default:
				src[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-25))
			}
		}
		h, w := make([]uint16, n), make([]float32, n)
		f32ToF16Row(h, src)
		roundF16Row(w, src)
		for i, x := range src {
			want := toF16(x)
			if h[i] != want {
				t.Fatalf("f32ToF16Row(%g) = %#x, want %#x", x, h[i], want)
			}
			if math.Float32bits(w[i]) != math.Float32bits(fromF16(want)) {
				t.Fatalf("roundF16Row(%g) = %g, want %g", x, w[i], fromF16(want))
			}
		}
	}
}

// attendSoftmaxRef is attendSoftmax in Go, key by key and column by column.
func attendSoftmaxRef(out, q, k, v []float32, h kvHead, scale float32, n int) {
	s := make([]float32, h.n)
	hd := len(q)
	m := float32(math.Inf(-1))
	for j := range s {
		s[j] = vecDotF32Go(q, k[j*h.cols+h.off:j*h.cols+h.off+hd], hd) * scale
		m = max(m, s[j])
	}
	inv := float32(1 / softmaxExpGo(s, m))
	for j := range s {
		s[j] *= inv
	}
	vcol := make([]float32, h.n)
	for d := range out {
		for j := range vcol {
			vcol[j] = v[j*h.cols+h.off+d]
		}
		if n >= 2 {
			out[d] = sgemmPadded(vcol, s)
		} else {
			out[d] = vecDotF32Go(vcol, s, (h.n+4*lanes-1)&^(4*lanes-1))
		}
	}
}

// TestAttendSoftmaxBits checks attendSoftmax (the F32-cache attention) against
// attendSoftmaxRef for single rows and batches, heads of several sizes (with and
// without blocks of 64) and key counts around the 16- and 64-lane groups.
func TestAttendSoftmaxBits(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for trial := range 300 {
		hd := []int{4, 8, 32, 64, 72, 128}[trial%6]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(150)
		k, v := make([]float32, nkeys*cols), make([]float32, nkeys*cols)
		for i := range k {
			k[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(6)-3))
			v[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(10)-5))
		}
		q := make([]float32, hd)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		h := kvHead{off: r.IntN(kvHeads) * hd, cols: cols, n: nkeys}
		n := 1 + trial%2
		var sc attentionScratch
		sc.grow(nkeys, hd)
		got, want := make([]float32, hd), make([]float32, hd)
		attendSoftmax(got, q, k, v, h, 0.3, n, &sc)
		attendSoftmaxRef(want, q, k, v, h, 0.3, n)
		for d := range got {
			if math.Float32bits(got[d]) != math.Float32bits(want[d]) {
				t.Fatalf("hd=%d keys %d n=%d [%d]: %g, Go %g", hd, nkeys, n, d, got[d], want[d])
			}
		}
	}
}

// TestAttendOneChunksBits checks the four-head one-chunk attention (heads of 8, AVX2 kernels)
// against attendOneChunkSeq head by head, with grouped-query heads sharing KV heads.
func TestAttendOneChunksBits(t *testing.T) {
	if !useAVX2 {
		t.Skipf("attendOneChunks runs at the AVX2 and AVX-512 levels only (level %v)", tensor.Level())
	}
	r := rand.New(rand.NewPCG(27, 28))
	const hd = 8
	for trial := range 300 {
		kvHeads, group := 1+trial%4, 1+trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(120)
		k, v := make([]uint16, nkeys*cols), make([]uint16, nkeys*cols)
		spread := r.IntN(12)
		for i := range k {
			k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(spread+1))))
			v[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(10)-5)))
		}
		var outs, qs [chunkHeads][]float32
		var hs [chunkHeads]kvHead
		h0 := r.IntN(kvHeads * group)
		for g := range chunkHeads {
			outs[g], qs[g] = make([]float32, hd), make([]float32, hd)
			for i := range qs[g] {
				qs[g][i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(spread+1)))
			}
			hs[g] = kvHead{off: ((h0 + g) / group % kvHeads) * hd, cols: cols, n: nkeys}
		}
		var sc attentionScratch
		sc.grow(nkeys, hd)
		attendOneChunks(&outs, &qs, k, v, &hs, 0.25, &sc)
		for g := range chunkHeads {
			want := make([]float32, hd)
			attendOneChunkSeq(want, qs[g], k, v, hs[g], 0.25)
			for d := range want {
				if math.Float32bits(outs[g][d]) != math.Float32bits(want[d]) && !(want[d] != want[d] && outs[g][d] != outs[g][d]) {
					t.Fatalf("keys %d head %d [%d]: %g, sequential %g", nkeys, g, d, outs[g][d], want[d])
				}
			}
		}
	}
}
