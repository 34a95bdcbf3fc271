package cpu

import "github.com/infergo/infer/tensor"

// The AVX2 kernels of avx2_amd64.s (strides in bytes), and their tile forms for MatMul.

//go:noescape
func sgemm2x2F32AVX2(w *float32, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int)

//go:noescape
func sgemm2x2F16AVX2(w *uint16, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int)

//go:noescape
func sgemmF32BlocksAVX2(a, b *float32, nblk int) float32

//go:noescape
func sgemmF16BlocksAVX2(a, b *uint16, nblk int) float32

//go:noescape
func vecDotF32RowsAVX2(w *float32, ws int, x *float32, n, rows int, dst *float32)

//go:noescape
func vecDotF16RowsAVX2(w *uint16, ws int, x *uint16, n, rows int, dst *float32)

//go:noescape
func sgemmF16F32BlocksAVX2(a *uint16, b *float32, nblk int) float32

//go:noescape
func vecDotF16F32RowsAVX2(w *uint16, ws int, x *float32, n, rows int, dst *float32)

//go:noescape
func f32ToF16RowAVX2(dst *uint16, src *float32, n8 int) bool

//go:noescape
func roundF16RowAVX2(dst, src *float32, n8 int) bool

// avx2Tile returns the AVX2 tile form of mulMatDot's dot for F32 and F16 weights, or nil.
func avx2Tile(wt tensor.DType, sgemm bool) tileFunc {
	if !useAVX2 {
		return nil
	}
	return pickTile(wt, sgemm, sgemmTileF32AVX2, vecDotTileF32AVX2, sgemmTileF16AVX2, vecDotTileF16AVX2)
}

// sgemmTileF32AVX2 sets dst[i·dstStride+o] = sgemmF32(w row o, x row i) for o < mw,
// i < mx, by 2×2 tiles.
func sgemmTileF32AVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	sgemmTile2x2(sgemm2x2F32AVX2, sgemmF32BlocksAVX2, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// sgemmTileF16AVX2 is sgemmTileF32AVX2 over F16 weight rows and activation rows of F16
// values widened to float32 (sgemmF16; MatMul widens them once a row).
func sgemmTileF16AVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	sgemmTile2x2(sgemm2x2F16AVX2, sgemmF16F32BlocksAVX2, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// vecDotTileF32AVX2 sets dst[i·dstStride+o] = vecDotF32(w row o, x row i, n).
func vecDotTileF32AVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	vecDotTileRows(vecDotF32RowsAVX2, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// vecDotTileF16AVX2 sets dst[i·dstStride+o] = vecDotF16(w row o, x row i) over n
// elements, x holding F16 values widened to float32 (MatMul widens them once a row).
func vecDotTileF16AVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	vecDotTileRows(vecDotF16F32RowsAVX2, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

//go:noescape
func scoresF16SeqAVX2(k *uint16, ks int, q *float32, hd, nkeys int, scale float32, s *float32)

//go:noescape
func fmaRowF16AVX2(acc *float32, v *uint16, p float32, n int)

//go:noescape
func scores8F16AVX2(k *uint16, idx *[8]int32, q *float32, hd int, scale float32, s *float32)

//go:noescape
func swigluF32AVX2(dst, gate, up *float32, n8 int)

//go:noescape
func softmaxExpAVX2(s *float32, n int, m float32) float64

//go:noescape
func expfRowAVX2(dst, src *float32, n4 int) bool

//go:noescape
func chunkAccF16AVX2(acc, v *uint16, vstride int, e *float32, raised *bool, nkeys, hd int) float32

//go:noescape
func chunkAccF16x4AVX2(acc, v *uint16, vstride int, offs *[4]int, e *float32, raised *bool, nkeys int, sums *[4]float32)

//go:noescape
func vecDotF32TailsAVX2(w *float32, ws int, x *float32, n, rows int, dst *float32)

//go:noescape
func vecDotF16F32TailsAVX2(w *uint16, ws int, x *float32, n, rows int, dst *float32)
