package tensor

import "sync"

// The tile forms of the x86repack.go dots on amd64: the same float operations in the
// same order as the one-output functions, with the work that depends on one side only
// (a weight block's unpacked scales and mins, an activation block's scale and bsums)
// done once per tile instead of once per output.

// q4KTileBufs holds dotQ4KRepackGemmTile's per-tile tables.
type q4KTileBufs struct {
	xd []float32 // d8 of activation row i, block b at [i*nb+b]
	xb []int32   // sub-block bsum sums B_j = bsums[2j]+bsums[2j+1] at [(i*nb+b)*8+j]
	wd []float32 // d, dmin of the weight row's block b at [2b], [2b+1]
	ws []int32   // sc_j, m_j of the weight row's block b at [16b+j], [16b+8+j]
}

var q4KTilePool = sync.Pool{New: func() any { return new(q4KTileBufs) }}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

//go:noescape
func q4KGemmVNNIx4(w, x *byte, xstride, nb int, ws *int32, wd *float32, out *[8]float32)

// dotQ4KRepackGemmTile is the tile form of dotQ4KRepackGemm: for o < mw and i < mx,
// dst[i*dstStride+o] = dotQ4KRepackGemm(n, w[o*wStride:], x[i*xStride:]), bit for bit:
// with FMA the AVX2 kernels (q4KTileAVX2, faster on Zen 4 than q4KGemmVNNIx4); else
// each weight row against four activation rows at a time (q4KGemmVNNIx4), the rest
// one by one, the weight row's scales and mins unpacked once.
func dotQ4KRepackGemmTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if hasFMA && nb > 0 {
		q4KTileAVX2(true, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasFMA {
		dotQ4KRepackGemmTileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasVNNI || nb <= 0 || mw <= 0 || mx <= 0 {
		dotTileBy(dotQ4KRepackGemm, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	_, _ = w[(mw-1)*wStride+nb*q4KBytes-1], x[(mx-1)*xStride+nb*q8KBytes-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	t := q4KTilePool.Get().(*q4KTileBufs)
	defer q4KTilePool.Put(t)
	t.xd, t.xb = growF32(t.xd, mx*nb), grow32(t.xb, mx*nb*8)
	t.wd, t.ws = growF32(t.wd, 2*nb), grow32(t.ws, 16*nb)
	for i := mx - mx%4; i < mx; i++ { // the rows after the groups of four (q4KGemmVNNIx4)
		for b := range nb {
			a := (*[q8KBytes]byte)(x[i*xStride+b*q8KBytes:])
			t.xd[i*nb+b] = q8KScale(a)
			B := (*[8]int32)(t.xb[(i*nb+b)*8:])
			for j := range 8 {
				B[j] = q8KBsum(a, 2*j) + q8KBsum(a, 2*j+1)
			}
		}
	}
	var sums, v [8 * kChunk]int32
	var d [2 * kChunk]float32
	var out [8]float32
	m4 := mx - mx%4
	for o := range mw {
		wo := w[o*wStride:]
		for b := range nb {
			blk := (*[q4KBytes]byte)(wo[b*q4KBytes:])
			t.wd[2*b], t.wd[2*b+1] = halfAt(blk[0:]), halfAt(blk[2:])
			sc, m := unpackScaleMinK4(blk[q4KScales:q4KQs])
			copy(t.ws[16*b:16*b+8], sc[:])
			copy(t.ws[16*b+8:16*b+16], m[:])
		}
		for i := 0; i < m4; i += 4 {
			q4KGemmVNNIx4(&wo[0], &x[i*xStride], xStride, nb, &t.ws[0], &t.wd[0], &out)
			for r := range 4 {
				dst[(i+r)*dstStride+o] = out[r] - out[4+r]
			}
		}
		for i := m4; i < mx; i++ {
			xi := x[i*xStride:]
			var acc [2]float32
			for i0 := 0; i0 < nb; i0 += kChunk {
				cm := min(kChunk, nb-i0)
				q4KSubSumsVNNI(&wo[i0*q4KBytes], &xi[i0*q8KBytes], cm, &sums[0])
				for j := range cm {
					b := i0 + j
					s := (*[8]int32)(sums[8*j:])
					vv := (*[8]int32)(v[8*j:])
					ws := (*[16]int32)(t.ws[16*b:])
					B := (*[8]int32)(t.xb[(i*nb+b)*8:])
					for c := range 4 {
						vv[c] = ws[2*c]*s[2*c] + ws[2*c+1]*s[2*c+1]
						vv[4+c] = ws[8+2*c]*B[2*c] + ws[8+2*c+1]*B[2*c+1]
					}
					d8 := t.xd[i*nb+b]
					d[2*j], d[2*j+1] = float32(t.wd[2*b]*d8), float32(t.wd[2*b+1]*d8)
				}
				q4KGemmFMA(&v[0], &d[0], cm, &acc)
			}
			dst[i*dstStride+o] = acc[0] - acc[1]
		}
	}
}

//go:noescape
func dotQ4_0RepackVNNIx4(w, x *byte, xstride, nb int, dst *float32)

// dotQ4_0RepackTile is the tile form of dotQ4_0Repack: with FMA the AVX2 8-row kernels
// (dotQ4_0RepackTileAVX2, faster on Zen 4 than the VNNI ones); else each weight row
// against four activation rows at a time (dotQ4_0RepackVNNIx4), the rest one by one.
func dotQ4_0RepackTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if hasFMA && nb > 0 {
		dotQ4_0RepackTileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasFMA {
		dotQ4_0RepackTileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasVNNI || nb <= 0 || mx < 4 || mw <= 0 {
		dotTileBy(dotQ4_0Repack, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	var d4 [4]float32
	for o := range mw {
		wo := w[o*wStride:]
		_ = wo[nb*q4_0Bytes-1]
		i := 0
		for ; i+4 <= mx; i += 4 {
			_ = x[(i+3)*xStride+nb*q8_0Bytes-1]
			dotQ4_0RepackVNNIx4(&wo[0], &x[i*xStride], xStride, nb, &d4[0])
			_ = dst[(i+3)*dstStride+o]
			dst[i*dstStride+o], dst[(i+1)*dstStride+o] = d4[0], d4[1]
			dst[(i+2)*dstStride+o], dst[(i+3)*dstStride+o] = d4[2], d4[3]
		}
		for ; i < mx; i++ {
			dst[i*dstStride+o] = dotQ4_0Repack(n, wo, x[i*xStride:])
		}
	}
}

// dotQ5Kx86Tile is the tile form of dotQ5Kx86: with FMA the AVX2 kernels
// (dotQ5Kx86TileAVX2, faster on Zen 4 than q5KLanesVNNI); else dotQ5Kx86's operations for every output,
// with the weight blocks' scales and mins unpacked once per weight row and the
// activation blocks' scales and bsums read once per tile.
func dotQ5Kx86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if hasFMA && nb > 0 {
		dotQ5Kx86TileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasFMA {
		dotQ5Kx86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasVNNI || nb <= 0 || mw <= 0 || mx <= 0 {
		dotTileBy(dotQ5Kx86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	_, _ = w[(mw-1)*wStride+nb*q5KBytes-1], x[(mx-1)*xStride+nb*q8KBytes-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	t := q4KTilePool.Get().(*q4KTileBufs)
	defer q4KTilePool.Put(t)
	t.xd, t.xb = growF32(t.xd, mx*nb), grow32(t.xb, mx*nb*8)
	t.wd, t.ws = growF32(t.wd, 2*nb), grow32(t.ws, 16*nb)
	for i := range mx {
		for b := range nb {
			a := (*[q8KBytes]byte)(x[i*xStride+b*q8KBytes:])
			t.xd[i*nb+b] = q8KScale(a)
			B := (*[8]int32)(t.xb[(i*nb+b)*8:])
			for j := range 8 {
				B[j] = q8KBsum(a, 2*j) + q8KBsum(a, 2*j+1)
			}
		}
	}
	for o := range mw {
		wo := w[o*wStride:]
		for b := range nb {
			blk := (*[q5KBytes]byte)(wo[b*q5KBytes:])
			t.wd[2*b], t.wd[2*b+1] = halfAt(blk[0:]), halfAt(blk[2:])
			sc, m := unpackScaleMinK4(blk[q5KScales:q5KQh])
			copy(t.ws[16*b:16*b+8], sc[:])
			copy(t.ws[16*b+8:16*b+16], m[:])
		}
		for i := range mx {
			xi := x[i*xStride:]
			var acc [lanes8]float32
			var summs float32
			for b := range nb {
				ws := (*[16]int32)(t.ws[16*b:])
				B := (*[8]int32)(t.xb[(i*nb+b)*8:])
				var mins int32
				for j := range 8 {
					mins += B[j] * ws[8+j]
				}
				d8 := t.xd[i*nb+b]
				summs = fmaf(float32(-d8*t.wd[2*b+1]), float32(mins), summs)
				q5KLanesVNNI(&wo[b*q5KBytes], &xi[b*q8KBytes], (*[8]int32)(ws[:8]), &acc, float32(d8*t.wd[2*b]))
			}
			dst[i*dstStride+o] = hsum8(&acc) + summs
		}
	}
}

//go:noescape
func dotQ6Kx86VNNIx4(w, x *byte, xstride, nb int, d *float32, acc *[4][lanes8]float32)

// dotQ6Kx86Tile is the tile form of dotQ6Kx86: each weight row against four activation
// rows at a time (dotQ6Kx86VNNIx4, the block scales d8·d computed as dotQ6Kx86 does),
// the rest one by one.
func dotQ6Kx86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if hasFMA && !hasVNNI && nb > 0 {
		dotQ6Kx86TileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasFMA {
		dotQ6Kx86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasVNNI || nb <= 0 || mx < 4 || mw <= 0 {
		dotTileBy(dotQ6Kx86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	var d [4 * kChunk]float32
	for o := range mw {
		wo := w[o*wStride:]
		_ = wo[nb*q6KBytes-1]
		i := 0
		for ; i+4 <= mx; i += 4 {
			_ = x[(i+3)*xStride+nb*q8KBytes-1]
			var acc [4][lanes8]float32
			for i0 := 0; i0 < nb; i0 += kChunk {
				m := min(kChunk, nb-i0)
				for j := range m {
					b := i0 + j
					for r := range 4 {
						d[4*j+r] = float32(q8KScale((*[q8KBytes]byte)(x[(i+r)*xStride+b*q8KBytes:])) * halfAt(wo[b*q6KBytes+q6KD:]))
					}
				}
				dotQ6Kx86VNNIx4(&wo[i0*q6KBytes], &x[i*xStride+i0*q8KBytes], xStride, m, &d[0], &acc)
			}
			_ = dst[(i+3)*dstStride+o]
			for r := range 4 {
				dst[(i+r)*dstStride+o] = hsum8(&acc[r])
			}
		}
		for ; i < mx; i++ {
			dst[i*dstStride+o] = dotQ6Kx86(n, wo, x[i*xStride:])
		}
	}
}

// dotQ4KRepackGemvTile is the tile form of dotQ4KRepack: the AVX2 kernels with FMA
// (at the AVX-512 level too), the Go code without.
func dotQ4KRepackGemvTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if hasFMA && n >= QKK {
		q4KTileAVX2(false, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasFMA {
		q4KTileGo(0, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	dotTileBy(dotQ4KRepack, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// dotQ4_0x86Tile is the tile form of dotQ4_0x86: with FMA, for four or more
// activation rows, the Q8_0 lane kernels (the weights converted once for all the
// rows; q8LanesTile), else one dot after another.
func dotQ4_0x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if hasFMA && n >= QK && mx >= 4 {
		dotQ4_0x86TileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasFMA {
		dotQ4_0x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	dotTileBy(dotQ4_0x86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// dotQ4_1x86Tile is the tile form of dotQ4_1x86: with FMA, for four or more activation
// rows, the AVX2 kernels (dotQ4_1x86TileAVX2, at the AVX-512 level too: 3x faster than
// the VNNI dots one by one), else one dot after another.
func dotQ4_1x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if hasFMA && n >= QK && mx >= 4 {
		dotQ4_1x86TileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !hasFMA {
		dotQ4_1x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	dotTileBy(dotQ4_1x86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}
