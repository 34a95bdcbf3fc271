package tensor

import "sync"

// The multi-row tiles on arm64: each weight row against the activation rows four at a
// time with the kernels of neon_tile_arm64.s, which load (and unpack) a weight block
// once for the four; the activation rows after the groups of four one by one with the
// one-row dots. Every output has the bits of its one-row dot.

//go:noescape
func q4_0RepackNEONx4(w, x *byte, xstride, nb int, out *[4]float32, sdot bool)

//go:noescape
func q4_0RepackNEONw4(w *byte, wstride int, x *byte, nb int, out *[4]float32, sdot bool)

//go:noescape
func q8_0LanesNEONx4(w, x *byte, xstride, nb int, acc *[4][lanes8]float32, sdot bool)

//go:noescape
func q4KGemmNEONx4(w, x *byte, xstride, nb int, ws *int32, wd *float32, buf *[32]int32, out *[8]float32, sdot bool)

//go:noescape
func q4KRepackNEON(w, x *byte, nb int, out *[2]float32, sdot bool)

//go:noescape
func q5_1DotNEON(w, x *byte, nb int, sumf float32, sdot bool) float32

//go:noescape
func q4_1LanesNEON(w, x *byte, nb int, acc *[lanes8]float32, summs *float32, sdot bool)

//go:noescape
func q4_0LanesNEONx4(w, x *byte, xstride, nb int, acc *[4][lanes8]float32, sdot bool)

// The kinds of tileX4 (not function values, which would move its output array to the
// heap on every call).
const (
	x4Q4_0Repack = iota
	x4Q8_0Lanes
	x4Q4_0Lanes
)

// tileX4 computes the tile with the kind's x4 kernel for the groups of four activation
// rows of each weight row and its one-row dot for the rest, given nb blocks of wb
// weight and xb activation bytes a row. It reports false, computing nothing, for an
// empty tile or one without a whole block (the caller's Go code handles those).
func tileX4(kind, n, wb, xb int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) bool {
	nb := n / QK
	if nb <= 0 || neonTileEmpty(w, wStride, mw, nb*wb, x, xStride, mx, nb*xb, dst, dstStride) {
		return false
	}
	m4 := mx - mx%4
	var out [4]float32
	var acc [4][lanes8]float32
	for o := range mw {
		wo := w[o*wStride:]
		for i := 0; i < m4; i += 4 {
			switch kind {
			case x4Q4_0Repack:
				q4_0RepackNEONx4(&wo[0], &x[i*xStride], xStride, nb, &out, hasDotProd)
			case x4Q8_0Lanes:
				acc = [4][lanes8]float32{}
				q8_0LanesNEONx4(&wo[0], &x[i*xStride], xStride, nb, &acc, hasDotProd)
			case x4Q4_0Lanes:
				acc = [4][lanes8]float32{}
				q4_0LanesNEONx4(&wo[0], &x[i*xStride], xStride, nb, &acc, hasDotProd)
			}
			for r := range 4 {
				v := out[r]
				if kind != x4Q4_0Repack {
					v = hsum8(&acc[r])
				}
				dst[(i+r)*dstStride+o] = v
			}
		}
		for i := m4; i < mx; i++ {
			if kind == x4Q4_0Repack && o%4 == 0 && o+4 <= mw { // four weight rows at a time
				q4_0RepackNEONw4(&wo[0], wStride, &x[i*xStride], nb, &out, hasDotProd)
				copy(dst[i*dstStride+o:i*dstStride+o+4], out[:])
				continue
			}
			if kind == x4Q4_0Repack && o%4 != 0 && o-o%4+4 <= mw {
				continue // computed with its group of four
			}
			var v float32
			switch kind {
			case x4Q4_0Repack:
				v = dotQ4_0Repack(n, wo, x[i*xStride:])
			case x4Q8_0Lanes:
				v = dotQ8_0x86(n, wo, x[i*xStride:])
			case x4Q4_0Lanes:
				v = dotQ4_0x86(n, wo, x[i*xStride:])
			}
			dst[i*dstStride+o] = v
		}
	}
	return true
}

func dotQ4_0RepackTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if !hasNEON || !tileX4(x4Q4_0Repack, n, q4_0Bytes, q8_0Bytes, w, wStride, mw, x, xStride, mx, dst, dstStride) {
		dotQ4_0RepackTileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
}

func dotQ8_0x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if !hasNEON {
		dotQ8_0x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !tileX4(x4Q8_0Lanes, n, q8_0Bytes, q8_0Bytes, w, wStride, mw, x, xStride, mx, dst, dstStride) {
		dotTileBy(dotQ8_0x86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
}

func dotQ4_0x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if !hasNEON {
		dotQ4_0x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if !tileX4(x4Q4_0Lanes, n, q4_0Bytes, q8_0Bytes, w, wStride, mw, x, xStride, mx, dst, dstStride) {
		dotTileBy(dotQ4_0x86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
}

// neonTileEmpty panics (with an index error) unless w, x and dst hold a tile of mw
// weight rows of wrb bytes and mx activation rows of xrb bytes; it reports whether the
// tile is empty.
func neonTileEmpty(w []byte, wStride, mw, wrb int, x []byte, xStride, mx, xrb int, dst []float32, dstStride int) bool {
	if mw <= 0 || mx <= 0 {
		return true
	}
	_, _ = w[(mw-1)*wStride+wrb-1], x[(mx-1)*xStride+xrb-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	return false
}

// q4KRowBufs holds a Q4_K weight row's unpacked scales and mins (sc at [16b+j], m at
// [16b+8+j]) and its d, dmin as float32 ([2b], [2b+1]) for q4KGemmNEONx4.
type q4KRowBufs struct {
	ws  []int32
	wd  []float32
	buf [32]int32
}

var q4KRowPool = sync.Pool{New: func() any { return new(q4KRowBufs) }}

// dotQ4KRepackGemmTile is the tile form of dotQ4KRepackGemm: each weight row, its
// scales unpacked once, against the activation rows four at a time (q4KGemmNEONx4,
// the whole block in NEON), the rest one by one.
func dotQ4KRepackGemmTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if !hasNEON || nb <= 0 || mx < 4 || neonTileEmpty(w, wStride, mw, nb*q4KBytes, x, xStride, mx, nb*q8KBytes, dst, dstStride) {
		if !hasNEON {
			dotQ4KRepackGemmTileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
			return
		}
		dotTileBy(dotQ4KRepackGemm, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	t := q4KRowPool.Get().(*q4KRowBufs)
	defer q4KRowPool.Put(t)
	if cap(t.ws) < 16*nb {
		t.ws, t.wd = make([]int32, 16*nb), make([]float32, 2*nb)
	}
	ws, wd := t.ws[:16*nb], t.wd[:2*nb]
	m4 := mx - mx%4
	var out [8]float32
	for o := range mw {
		wo := w[o*wStride:]
		for b := range nb {
			blk := (*[q4KBytes]byte)(wo[b*q4KBytes:])
			wd[2*b], wd[2*b+1] = halfAt(blk[0:]), halfAt(blk[2:])
			sc, m := unpackScaleMinK4(blk[q4KScales:q4KQs])
			copy(ws[16*b:16*b+8], sc[:])
			copy(ws[16*b+8:16*b+16], m[:])
		}
		for i := 0; i < m4; i += 4 {
			q4KGemmNEONx4(&wo[0], &x[i*xStride], xStride, nb, &ws[0], &wd[0], &t.buf, &out, hasDotProd)
			for r := range 4 {
				dst[(i+r)*dstStride+o] = out[r] - out[4+r]
			}
		}
		for i := m4; i < mx; i++ {
			dst[i*dstStride+o] = dotQ4KRepackGemm(n, wo, x[i*xStride:])
		}
	}
}

func dotQ4_1x86(n int, w, x []byte) float32 {
	nb := qBlocks(n, w, x, q4_1Bytes, q8_1Bytes)
	if !hasNEON || nb <= 0 {
		return dotQ4_1x86Go(n, w, x)
	}
	var acc [lanes8]float32
	var summs float32
	q4_1LanesNEON(&w[0], &x[0], nb, &acc, &summs, hasDotProd)
	return hsum8(&acc) + summs
}

func dotQ5_1(n int, w, x []byte) float32 {
	nb := qBlocks(n, w, x, q5_1Bytes, q8_1Bytes)
	if !hasNEON || nb <= 0 {
		return dotQ5_1Go(n, w, x)
	}
	return q5_1DotNEON(&w[0], &x[0], nb, 0, hasDotProd)
}
