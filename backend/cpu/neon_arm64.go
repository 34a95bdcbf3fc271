package cpu

import "github.com/infergo/infer/tensor"

// The NEON kernels of neon_arm64.s (strides in bytes). Their fma32 is a true float32
// fused multiply-add (FMLA), where simd.go's rounds through float64: the two differ
// only on double-rounding ties (about once in 2^29 operations), as on AVX2; sums are
// FMLAs by 1.0 (exact products, one rounding: a float32 addition).

//go:noescape
func sgemmF32BlocksNEON(a, b *float32, nblk int) float32

//go:noescape
func sgemm2x2F32NEON(w *float32, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int)

//go:noescape
func vecDotF32RowsNEON(w *float32, ws int, x *float32, n, rows int, dst *float32)

//go:noescape
func sgemmF16F32BlocksNEON(a *uint16, b *float32, nblk int) float32

//go:noescape
func sgemm2x2F16NEON(w *uint16, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int)

//go:noescape
func vecDotF16F32RowsNEON(w *uint16, ws int, x *float32, n, rows int, dst *float32)

// vecDotF32Fast returns vecDotF32(a, b, n) computed with vecDotF32RowsNEON when there
// is no block cut short by padding, and ok false otherwise.
func vecDotF32Fast(a, b []float32, n int) (float32, bool) {
	np := n &^ (4*lanes - 1)
	if !useNEON || np > len(a) || len(b) < len(a) || len(a) == 0 {
		return 0, false
	}
	var s float32
	vecDotF32RowsNEON(&a[0], 0, &b[0], len(a), 1, &s) // len(a) is in n's block of 64
	return s, true
}

// sgemmF32Fast returns sgemmF32(a, b) computed with sgemmF32BlocksNEON.
func sgemmF32Fast(a, b []float32) (float32, bool) {
	nb := len(a) / lanes
	if !useNEON || nb == 0 || len(b) < nb*lanes {
		return 0, false
	}
	return sgemmF32BlocksNEON(&a[0], &b[0], nb), true
}

// neonTile returns the NEON tile form of mulMatDot's dot for F32 and F16 weights, or nil.
func neonTile(wt tensor.DType, sgemm bool) tileFunc {
	if !useNEON {
		return nil
	}
	return pickTile(wt, sgemm, sgemmTileF32NEON, vecDotTileF32NEON, sgemmTileF16NEON, vecDotTileF16NEON)
}

// sgemmTileF32NEON sets dst[i·dstStride+o] = sgemmF32(w row o, x row i) for o < mw,
// i < mx, by 2×2 tiles.
func sgemmTileF32NEON(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	sgemmTile2x2(sgemm2x2F32NEON, sgemmF32BlocksNEON, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// vecDotTileF32NEON sets dst[i·dstStride+o] = vecDotF32(w row o, x row i, n).
func vecDotTileF32NEON(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	vecDotTileRows(vecDotF32RowsNEON, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// sgemmTileF16NEON is sgemmTileF32NEON over F16 weight rows and activation rows of F16
// values widened to float32 (sgemmF16; MatMul widens them once a row).
func sgemmTileF16NEON(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	sgemmTile2x2(sgemm2x2F16NEON, sgemmF16F32BlocksNEON, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// vecDotTileF16NEON sets dst[i·dstStride+o] = vecDotF16(w row o, x row i) over n
// elements, x holding F16 values widened to float32 (MatMul widens them once a row).
func vecDotTileF16NEON(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	vecDotTileRows(vecDotF16F32RowsNEON, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}
