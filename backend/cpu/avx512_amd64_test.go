package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

// The tests below compare the AVX-512 kernels (on a CPU that has them) with the Go
// definitions bit for bit, as avx2_test.go does for the AVX2 kernels, over every
// remainder of the kernels' row and column groups.

// skipNoAVX512 skips t below the AVX-512 level.
func skipNoAVX512(t *testing.T) {
	t.Helper()
	if !hasAVX512 {
		t.Skipf("no AVX-512 kernels at level %v", tensor.Level())
	}
}

// TestVecDotRowsAVX512Bits checks the matrix-vector row kernels against vecDotF32Go and
// vecDotF16Go row by row, for row counts around the groups of four, row lengths with
// and without blocks of 64 and tails, and strides wider than a row.
func TestVecDotRowsAVX512Bits(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(31, 32))
	for _, wt := range []tensor.DType{tensor.F32, tensor.F16} {
		for trial := range 200 {
			n := []int{0, 1, 8, 44, 63, 64, 65, 100, 128, 172, 256, 320}[trial%12]
			rows := 1 + r.IntN(13)
			es := wt.RowBytes(1)
			ws := n*es + es*8*r.IntN(3)
			w, x := randRows(r, wt, rows, max(n, 1), max(ws, es)), randRows(r, wt, 1, max(n, 1), 0)
			xw := make([]float32, max(n, 1)) // x as the kernels take it: F16 values widened
			for i := range xw {
				if wt == tensor.F16 {
					xw[i] = fromF16(uint16s(x)[i])
				} else {
					xw[i] = tensor.Float32s(x)[i]
				}
			}
			dst := make([]float32, rows+1)
			dst[rows] = 42 // must stay
			if wt == tensor.F32 {
				vecDotF32RowsAVX512(&tensor.Float32s(w)[0], ws, &xw[0], n, rows, &dst[0])
			} else {
				vecDotF16F32RowsAVX512(&uint16s(w)[0], ws, &xw[0], n, rows, &dst[0])
			}
			for o := range rows {
				want := goDot(wt, false, w[o*ws:o*ws+n*es], x[:n*es], n)
				if math.Float32bits(dst[o]) != math.Float32bits(want) {
					t.Fatalf("%v n=%d rows=%d [%d]: %g, Go %g", wt, n, rows, o, dst[o], want)
				}
			}
			if dst[rows] != 42 {
				t.Fatalf("%v n=%d rows=%d: wrote past the rows", wt, n, rows)
			}
		}
	}
}

// TestFloatTilesAVX512Bits is TestFloatTilesBits over larger tiles: every remainder of
// the AVX-512 tiles' groups of weight and activation rows.
func TestFloatTilesAVX512Bits(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(33, 34))
	for _, wt := range []tensor.DType{tensor.F32, tensor.F16} {
		for _, sgemm := range []bool{true, false} {
			tile := floatTile(wt, sgemm)
			for trial := range 80 {
				n := []int{16, 48, 64, 80, 172, 256}[trial%6]
				if sgemm && n%16 != 0 {
					continue
				}
				mw, mx := 1+r.IntN(14), 1+r.IntN(14)
				if trial%4 == 3 { // past the tails' groups of 64 weight rows
					mw = 1 + r.IntN(150)
				}
				name := fmt.Sprintf("%v sgemm=%v n=%d %d×%d", wt, sgemm, n, mw, mx)
				es := wt.RowBytes(1)
				wStride := n*es + es*r.IntN(3)*8
				w, x := randRows(r, wt, mw, n, wStride), randRows(r, wt, mx, n, n*es)
				xStride := 4*n + 4*r.IntN(3)*8
				tx := make([]byte, (mx-1)*xStride+4*n) // x widened to float32 (MatMul widens them once a row)
				for i := range mx {
					row := tensor.Float32s(tx[i*xStride:])
					for j := range n {
						if wt == tensor.F16 {
							row[j] = fromF16(uint16s(x[i*n*es:])[j])
						} else {
							row[j] = tensor.Float32s(x[i*n*es:])[j]
						}
					}
				}
				dstStride := mw + r.IntN(3)
				dst := make([]float32, (mx-1)*dstStride+mw)
				tile(n, w, wStride, mw, tx, xStride, mx, dst, dstStride)
				for i := range mx {
					for o := range mw {
						want := goDot(wt, sgemm, w[o*wStride:o*wStride+n*es], x[i*n*es:(i+1)*n*es], n)
						if got := dst[i*dstStride+o]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%s [%d][%d]: %g, Go %g", name, i, o, got, want)
						}
					}
				}
			}
		}
	}
}

// TestChunkMaxBits checks chunkMax (the one-chunk softmax's running maximum) against
// chunkMaxGo for lengths around the groups of sixteen, with ties of signed zeros,
// equal scores, NaNs, infinities and maxima rising late.
func TestChunkMaxBits(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1, 1, -1}
	for trial := range 600 {
		n := 1 + trial%70
		s := make([]float32, n)
		for i := range s {
			switch r.IntN(8) {
			case 0:
				s[i] = specials[r.IntN(len(specials))]
			case 1:
				s[i] = float32(i) * 0.5 // rising
			default:
				s[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(12)-4))
			}
		}
		scale := []float32{1, 0.35355339, 0.125, -1}[trial%4]
		got, want := append([]float32(nil), s...), append([]float32(nil), s...)
		gr, wr := make([]bool, n+1), make([]bool, n+1)
		gr[n] = true // must stay
		chunkMax(got, gr[:n], scale)
		chunkMaxGo(want, wr[:n], scale)
		for i := range n {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || gr[i] != wr[i] {
				t.Fatalf("n=%d [%d] of %v: %g raised %v, Go %g raised %v", n, i, s, got[i], gr[i], want[i], wr[i])
			}
		}
		if !gr[n] {
			t.Fatalf("n=%d: wrote past the flags", n)
		}
	}
}

// TestChunkMax4Bits checks chunkMax4 against chunkMax4Go, and chunkMax4Go against
// chunkMaxGo head by head, on the inputs of TestChunkMaxBits interleaved four ways.
func TestChunkMax4Bits(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1, 1, -1}
	for trial := range 400 {
		nk := 1 + trial%40
		s := make([]float32, chunkHeads*nk)
		for i := range s {
			switch r.IntN(8) {
			case 0:
				s[i] = specials[r.IntN(len(specials))]
			case 1:
				s[i] = float32(i/chunkHeads) * 0.5
			default:
				s[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(12)-4))
			}
		}
		scale := []float32{1, 0.35355339, -1}[trial%3]
		got, want := append([]float32(nil), s...), append([]float32(nil), s...)
		gr, wr := make([]bool, len(s)), make([]bool, len(s))
		chunkMax4(got, gr, scale)
		chunkMax4Go(want, wr, scale)
		for g := range chunkHeads {
			one, or := make([]float32, nk), make([]bool, nk)
			for j := range one {
				one[j] = s[chunkHeads*j+g]
			}
			chunkMaxGo(one, or, scale)
			for j := range one {
				i := chunkHeads*j + g
				if math.Float32bits(want[i]) != math.Float32bits(one[j]) || wr[i] != or[j] {
					t.Fatalf("keys %d head %d [%d]: chunkMax4Go %g %v, chunkMaxGo %g %v", nk, g, j, want[i], wr[i], one[j], or[j])
				}
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || gr[i] != wr[i] {
					t.Fatalf("keys %d head %d [%d]: %g %v, Go %g %v", nk, g, j, got[i], gr[i], want[i], wr[i])
				}
			}
		}
	}
}

// TestScores4x8Bits checks the four-head score kernel against scoreF16Go key by key,
// for odd and even key counts, grouped-query heads sharing KV heads, and values that
// overflow or vanish in the products.
func TestScores4x8Bits(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(39, 40))
	for trial := range 300 {
		kvHeads := 1 + trial%4
		cols := 8 * kvHeads
		nk := 1 + r.IntN(70)
		k := make([]uint16, nk*cols)
		for i := range k {
			k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(30)-15)))
		}
		var offs [chunkHeads]int
		var q4 [8 * chunkHeads]float32
		for g := range offs {
			offs[g] = 2 * 8 * r.IntN(kvHeads)
			for d := range 8 {
				q4[8*g+d] = fromF16(toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(30)-15))))
			}
		}
		if trial%2 == 0 { // large products that cancel in pairs, around small ones
			for i := range q4 {
				q4[i] = fromF16(toF16(float32(math.Ldexp(r.NormFloat64(), -r.IntN(14)))))
			}
			for d := 0; d+1 < 8; d += 2 + r.IntN(3) {
				for g := range chunkHeads {
					q4[8*g+d], q4[8*g+d+1] = 60000, 60000
				}
				for j := range nk * kvHeads {
					k[8*j+d] = toF16(float32(math.Ldexp(1+r.Float64(), 14)))
					k[8*j+d+1] = k[8*j+d] ^ 0x8000
				}
			}
		}
		s := make([]float32, chunkHeads*nk+1)
		s[len(s)-1] = 42 // must stay
		scores4x8F16AVX512(&k[0], 2*cols, &offs, &q4, nk, &s[0])
		for j := range nk {
			for g := range chunkHeads {
				row := k[j*cols+offs[g]/2 : j*cols+offs[g]/2+8]
				if want := float32(scoreF16Go(row, q4[8*g:8*g+8])); math.Float32bits(s[chunkHeads*j+g]) != math.Float32bits(want) {
					t.Fatalf("keys %d [%d] head %d: %g, Go %g", nk, j, g, s[chunkHeads*j+g], want)
				}
			}
		}
		if s[len(s)-1] != 42 {
			t.Fatalf("keys %d: wrote past the scores", nk)
		}
	}
}

// TestExpfRowWideBits checks expfRow against expf bit for bit (NaNs included) over
// random float32 bit patterns and the whole range where expf is neither 0 nor +Inf,
// with lengths that leave every tail of the eight-lane steps.
func TestExpfRowWideBits(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for trial := range 2000 {
		n := 1 + trial%67
		src := make([]float32, n)
		for i := range src {
			if trial%2 == 0 {
				src[i] = math.Float32frombits(r.Uint32())
			} else {
				src[i] = float32(-110 + 200*r.Float64())
			}
		}
		dst := make([]float32, n+1)
		dst[n] = 42 // must stay
		expfRow(dst[:n], src)
		for i, x := range src {
			if want := expf(x); math.Float32bits(dst[i]) != math.Float32bits(want) {
				t.Fatalf("expfRow: expf(%g) = %g (%#x), want %g (%#x)", x, dst[i], math.Float32bits(dst[i]), want, math.Float32bits(want))
			}
		}
		if dst[n] != 42 {
			t.Fatalf("n=%d: wrote past the row", n)
		}
	}
}

// TestAccTileF16Bits checks accTileF16 (attendTiled's V accumulation over a tile)
// against accRowF16Go key by key, for head sizes that leave every remainder of its
// 64-, 32- and 16-element passes, and weights from 0 to 1.
func TestAccTileF16Bits(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for trial := range 300 {
		hd := []int{16, 32, 48, 64, 80, 112, 128, 8}[trial%8]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(100)
		v := make([]uint16, nkeys*cols)
		for i := range v {
			v[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(30)-15)))
		}
		h := kvHead{off: r.IntN(kvHeads) * hd, cols: cols, n: nkeys}
		t0 := r.IntN(nkeys)
		s := make([]float32, min(faTile, nkeys-t0))
		for j := range s {
			s[j] = float32(r.Float64())
		}
		got, want := make([]float32, hd), make([]float32, hd)
		for d := range got {
			got[d] = float32(r.NormFloat64())
			want[d] = got[d]
		}
		accTileF16(got, v, t0, h, s)
		for j, p := range s {
			row := (t0+j)*cols + h.off
			accRowF16Go(want, v[row:row+hd], p)
		}
		for d := range got {
			if math.Float32bits(got[d]) != math.Float32bits(want[d]) {
				t.Fatalf("hd=%d keys %d..%d [%d]: %g, Go %g", hd, t0, t0+len(s), d, got[d], want[d])
			}
		}
	}
}

// attendTiledRef is attendTiled from the Go definitions of its kernels.
func attendTiledRef(out, q []float32, k, v []uint16, h kvHead, scale float32) {
	hd := len(q)
	acc := make([]float32, hd)
	m, sum := float32(math.Inf(-1)), float32(0)
	for t0 := 0; t0 < h.n; t0 += faTile {
		s := make([]float32, min(faTile, h.n-t0))
		tileScoresGo(s, q, k, t0, h, scale)
		tmax := float32(math.Inf(-1))
		for _, x := range s {
			tmax = max(tmax, x)
		}
		if tmax > m {
			ms := expf(m - tmax)
			for d := range acc {
				acc[d] *= ms
			}
			sum *= ms
			m = tmax
		}
		sum = float32(float64(sum) + softmaxExpGo(s, m))
		for j, p := range s {
			r := (t0+j)*h.cols + h.off
			accRowF16Go(acc, v[r:r+hd], p)
		}
	}
	inv := float32(0)
	if sum != 0 {
		inv = 1 / sum
	}
	for d, a := range acc {
		out[d] = a * inv
	}
}

// TestAttendTiledBits checks attendTiled against attendTiledRef for the head sizes the
// tiled path takes and key counts around its tiles of 64.
func TestAttendTiledBits(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for trial := range 200 {
		hd := []int{16, 32, 64, 128}[trial%4]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(200)
		k, v := make([]uint16, nkeys*cols), make([]uint16, nkeys*cols)
		spread := r.IntN(8)
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
		attendTiled(got, q, k, v, h, 0.125, &sc)
		attendTiledRef(want, q, k, v, h, 0.125)
		for d := range got {
			if math.Float32bits(got[d]) != math.Float32bits(want[d]) && !(got[d] != got[d] && want[d] != want[d]) {
				t.Fatalf("hd=%d keys %d [%d]: %g, Go %g", hd, nkeys, d, got[d], want[d])
			}
		}
	}
}

// TestScoresF16x8Bits checks the eight-key score kernel of chunkScores against
// scoreF16Go key by key, on values spread widely enough that the float64 sums round (so
// that the order of the additions shows).
func TestScoresF16x8Bits(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(47, 48))
	for trial := range 300 {
		hd := []int{8, 16, 24, 32, 48, 56}[trial%6]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		n8 := 1 + r.IntN(6)
		k := make([]uint16, 8*n8*cols)
		for i := range k {
			k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-24)))
		}
		q := make([]float32, hd)
		for i := range q {
			q[i] = fromF16(toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-24))))
		}
		off := r.IntN(kvHeads) * hd
		if trial%2 == 0 { // large products that cancel in pairs, around small ones
			var pairs []int
			for d := 0; d+1 < hd; d += 2 + r.IntN(3) {
				pairs = append(pairs, d)
			}
			for d := range q {
				q[d] = fromF16(toF16(float32(math.Ldexp(r.NormFloat64(), -r.IntN(14)))))
			}
			for _, d := range pairs {
				q[d], q[d+1] = 60000, 60000
				for j := range 8 * n8 {
					k[j*cols+off+d] = toF16(float32(math.Ldexp(1+r.Float64(), 14)))
					k[j*cols+off+d+1] = k[j*cols+off+d] ^ 0x8000
				}
			}
		}
		s := make([]float32, 8*n8+1)
		s[8*n8] = 42 // must stay
		scoresF16x8AVX512(&k[off], 2*cols, &q[0], hd, n8, &s[0])
		for j := range 8 * n8 {
			if want := float32(scoreF16Go(k[j*cols+off:j*cols+off+hd], q)); math.Float32bits(s[j]) != math.Float32bits(want) {
				t.Fatalf("hd=%d key %d: %g, Go %g", hd, j, s[j], want)
			}
		}
		if s[8*n8] != 42 {
			t.Fatalf("hd=%d: wrote past the scores", hd)
		}
	}
}
