package tensor

// X86PreparedTileFunc returns the X86PreparedTile of weight type t for a batch of mx
// activation rows of n elements, and false where X86DotTileFunc(t) prepares nothing
// for it: Q8_0 has one where its tiles run the Q8_0 lane kernels (FMA, n ≥ 32) on four
// activation rows or more.
func X86PreparedTileFunc(t DType, n, mx int) (X86PreparedTile, bool) {
	if t != Q8_0 || !hasFMA || n < QK || mx < 4 {
		return X86PreparedTile{}, false
	}
	return X86PreparedTile{RowBytes: q80PreparedRowBytes, Prepare: q80PrepareRow, Tile: q80PreparedTile}, true
}

// q80PreparedRowBytes, q80PrepareRow and q80PreparedTile are Q8_0's X86PreparedTile:
// the Q8_0 lane kernels' preparation of an activation row (prep80), and their tile
// over prepared rows.
func q80PreparedRowBytes(n int) int { return n / QK * q80XPrepBytes }

func q80PrepareRow(dst, x []byte, n int) {
	nb := n / QK
	_, _ = dst[nb*q80XPrepBytes-1], x[nb*q8_0Bytes-1]
	q80LaneKernels().prep80(&x[0], nb, &dst[0])
}

func q80PreparedTile(n int, w []byte, wStride, mw int, xp []byte, xpStride, mx int, dst []float32, dstStride int) {
	q8LanesTilePrepared(q80LaneKernels(), n, w, wStride, mw, xp, xpStride, mx, dst, dstStride)
}

// q8LanesTilePrepared is q8LanesTileBy for Q8_0 weights over activation rows that
// k.prep80 prepared (stride ps).
func q8LanesTilePrepared(k q80Kernels, n int, w []byte, wStride, mw int, xp []byte, ps, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if tileChecks(w, wStride, mw, nb*q8_0Bytes, xp, ps, mx, nb*q80XPrepBytes, dst, dstStride) {
		return
	}
	s := tileScratchPool.Get().(*tileScratch)
	defer tileScratchPool.Put(s)
	tileQ80(k, nb, w, wStride, mw, xp, ps, mx, dst, dstStride, s)
}
