package tensor

// The tile forms of the x86repack.go dots on amd64: the same float operations in the
// same order as the one-output functions, with the work that depends on one side only
// (a weight block's unpacked scales and mins, an activation block's scale and bsums)
// done once per tile instead of once per output.

// dotQ4KRepackGemmTile is the tile form of dotQ4KRepackGemm: for o < mw and i < mx,
// dst[i*dstStride+o] = dotQ4KRepackGemm(n, w[o*wStride:], x[i*xStride:]), bit for bit:
// with FMA the AVX2 kernels (q4KTileAVX2, at the AVX-512 level too), else the Go code.
func dotQ4KRepackGemmTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	switch nb := n / QKK; {
	case hasFMA && nb > 0:
		q4KTileAVX2(true, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	case !hasFMA:
		dotQ4KRepackGemmTileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	default:
		dotTileBy(dotQ4KRepackGemm, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
}

// dotQ4_0RepackTile is the tile form of dotQ4_0Repack: with FMA the AVX2 8-row kernels
// (dotQ4_0RepackTileAVX2, at the AVX-512 level too), else the Go code.
func dotQ4_0RepackTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	switch nb := n / QK; {
	case hasFMA && nb > 0:
		dotQ4_0RepackTileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	case !hasFMA:
		dotQ4_0RepackTileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	default:
		dotTileBy(dotQ4_0Repack, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
}

// dotQ5Kx86Tile is the tile form of dotQ5Kx86: with FMA the AVX2 kernels
// (dotQ5Kx86TileAVX2, at the AVX-512 level too), else the Go code.
func dotQ5Kx86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	switch nb := n / QKK; {
	case hasFMA && nb > 0:
		dotQ5Kx86TileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	case !hasFMA:
		dotQ5Kx86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	default:
		dotTileBy(dotQ5Kx86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
}

//go:noescape
func dotQ6Kx86VNNIx4(w, x *byte, xstride, nb int, d *float32, acc *[4][lanes8]float32)

// dotQ6Kx86Tile is the tile form of dotQ6Kx86: the AVX2 kernels (dotQ6Kx86TileAVX2) at
// the AVX2 level, and at the AVX-512 level for fewer than four activation rows (a
// decode: 1.2-2x faster than the VNNI dots one by one); with AVX512-VNNI, each weight
// row against four activation rows at a time (dotQ6Kx86VNNIx4, the block scales d8·d
// computed as dotQ6Kx86 does), the rest one by one.
func dotQ6Kx86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if hasFMA && (!hasVNNI || mx < 4) && nb > 0 {
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
// (at the AVX-512 level too, except for a large decode tile: streamRows), the Go code
// without.
func dotQ4KRepackGemvTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if streamRows(mw, wStride, mx) {
		dotTileBy(dotQ4KRepack, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
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
