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

// neonTile returns the NEON tile form of mulMatDot's dot for F32 weights, or nil.
func neonTile(wt tensor.DType, sgemm bool) tileFunc {
	switch {
	case !useNEON || wt != tensor.F32:
		return nil
	case sgemm:
		return sgemmTileF32NEON
	}
	return vecDotTileF32NEON
}

// sgemmTileF32NEON sets dst[i·dstStride+o] = sgemmF32(w row o, x row i) for o < mw,
// i < mx, by 2×2 tiles.
func sgemmTileF32NEON(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if mw <= 0 || mx <= 0 {
		return
	}
	checkTile(n*4, n*4, w, wStride, mw, x, xStride, mx, dst, dstStride)
	nb := n / lanes
	o := 0
	for ; o+2 <= mw; o += 2 {
		if mx >= 2 {
			sgemm2x2F32NEON(f32At(w, o*wStride), wStride, f32At(x, 0), xStride, mx/2, nb, &dst[o], 4*dstStride)
		}
		if mx%2 == 1 {
			i := mx - 1
			dst[i*dstStride+o] = sgemmF32BlocksNEON(f32At(w, o*wStride), f32At(x, i*xStride), nb)
			dst[i*dstStride+o+1] = sgemmF32BlocksNEON(f32At(w, (o+1)*wStride), f32At(x, i*xStride), nb)
		}
	}
	if o < mw {
		for i := range mx {
			dst[i*dstStride+o] = sgemmF32BlocksNEON(f32At(w, o*wStride), f32At(x, i*xStride), nb)
		}
	}
}

// vecDotTileF32NEON sets dst[i·dstStride+o] = vecDotF32(w row o, x row i, n).
func vecDotTileF32NEON(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if mw <= 0 || mx <= 0 {
		return
	}
	checkTile(n*4, n*4, w, wStride, mw, x, xStride, mx, dst, dstStride)
	for i := range mx {
		vecDotF32RowsNEON(f32At(w, 0), wStride, f32At(x, i*xStride), n, mw, &dst[i*dstStride])
	}
}
