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

// dotQ6Kx86Tile is the tile form of dotQ6Kx86: with FMA the AVX2 kernels
// (dotQ6Kx86TileAVX2, at the AVX-512 level too: 1.2-2x faster than the VNNI dots one
// by one for a decode, as fast or faster than four activation rows at a time with
// VNNI for a batch), else the Go code.
func dotQ6Kx86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	switch nb := n / QKK; {
	case hasFMA && nb > 0:
		dotQ6Kx86TileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	case !hasFMA:
		dotQ6Kx86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	default:
		dotTileBy(dotQ6Kx86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
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
