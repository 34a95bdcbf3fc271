package cpu

import "github.com/infergo/infer/tensor"

// The AVX-512 kernels of avx512_*_amd64.s (strides in bytes), and their tile forms for
// MatMul.

//go:noescape
func vecDotF32RowsAVX512(w *float32, ws int, x *float32, n, rows int, dst *float32)

//go:noescape
func vecDotTailsT64AVX512(wt *float32, t int, x *float32, m int, dst *float32)

//go:noescape
func vecDotF16F32RowsAVX512(w *uint16, ws int, x *float32, n, rows int, dst *float32)

//go:noescape
func sgemm4x4F32AVX512(w *float32, ws int, x *float32, xs int, nx4, nblk int, dst *float32, ds int)

//go:noescape
func sgemm4x4F16AVX512(w *uint16, ws int, x *float32, xs int, nx4, nblk int, dst *float32, ds int)

// avx512Tile returns the AVX-512 tile form of mulMatDot's dot for F32 and F16 weights, or
// nil (the level's other tiles are avx2Tile's).
func avx512Tile(wt tensor.DType, sgemm bool) tileFunc {
	if !hasAVX512 {
		return nil
	}
	return pickTile(wt, sgemm, sgemmTileF32AVX512, vecDotTileF32AVX512, sgemmTileF16AVX512, vecDotTileF16AVX512)
}

// sgemmTileF32AVX512 sets dst[i·dstStride+o] = sgemmF32(w row o, x row i) for o < mw,
// i < mx, by 4×4 tiles, the edges by the AVX2 level's 2×2 tiles.
func sgemmTileF32AVX512(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	sgemmTile4x4(sgemm4x4F32AVX512, sgemmTileF32AVX2, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// sgemmTileF16AVX512 is sgemmTileF32AVX512 over F16 weight rows and activation rows of
// F16 values widened to float32 (sgemmF16; MatMul widens them once a row).
func sgemmTileF16AVX512(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	sgemmTile4x4(sgemm4x4F16AVX512, sgemmTileF16AVX2, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// vecDotTileF32AVX512 sets dst[i·dstStride+o] = vecDotF32(w row o, x row i, n). For a
// batch (mx ≥ 2) of rows with a tail after their blocks of 64, the tails' FMA chains
// run a weight row a lane (vecDotTailsF32AVX512) after the blocks.
func vecDotTileF32AVX512(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	np := n &^ (4*lanes - 1)
	if mx < 2 || np == n {
		vecDotTileRows(vecDotF32RowsAVX512, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	vecDotTileRows(vecDotF32RowsAVX512, np, w, wStride, mw, x, xStride, mx, dst, dstStride)
	vecDotTailsF32AVX512(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// vecDotTailsF32AVX512 continues vecDotF32's sums in dst (the blocks of 64 reduced) with
// the tails' FMA chains, n%64 elements, for a tile: 64 weight rows at a time, their
// tails transposed so that a lane takes one weight row (vecDotTailsT64AVX512).
func vecDotTailsF32AVX512(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	checkTile(4*n, 4*n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	np := n &^ (4*lanes - 1)
	var wt [(4*lanes - 1) * 4 * lanes]float32 // (n-np, 64): the tails of 64 weight rows
	for o0 := 0; o0 < mw; o0 += 4 * lanes {
		m := min(4*lanes, mw-o0)
		for o := range m {
			for k, v := range f32Row(w, (o0+o)*wStride, n)[np:] {
				wt[k*4*lanes+o] = v
			}
		}
		for i := range mx {
			vecDotTailsT64AVX512(&wt[0], n-np, &f32Row(x, i*xStride, n)[np], m, &dst[i*dstStride+o0])
		}
	}
}

// vecDotTileF16AVX512 sets dst[i·dstStride+o] = vecDotF16(w row o, x row i) over n
// elements, x holding F16 values widened to float32 (MatMul widens them once a row).
func vecDotTileF16AVX512(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	vecDotTileRows(vecDotF16F32RowsAVX512, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

//go:noescape
func chunkMaxAVX512(s *float32, raised *bool, n int, scale float32)

//go:noescape
func chunkMax4AVX512(s *float32, raised *bool, n int, scale float32)

//go:noescape
func scores4x8F16AVX512(k *uint16, ks int, offs *[4]int, q *[32]float32, nkeys int, s *float32)

//go:noescape
func expfRowAVX512(dst, src *float32, n int)

//go:noescape
func softmaxExpAVX512(s *float32, n int, m float32) float64

//go:noescape
func swigluF32AVX512(dst, gate, up *float32, n16 int)

//go:noescape
func scoresTileF16AVX512(k *uint16, ks int, q *float32, hd, nkeys int, scale float32, s *float32)

//go:noescape
func accTileF16AVX512(acc *float32, v *uint16, vs int, p *float32, nkeys, hd int)

//go:noescape
func rmsScaleRowAVX512(dst, x, w *float32, scale float32, n int)

//go:noescape
func addRowAVX512(dst, x *float32, n int)

//go:noescape
func rotatePairsAVX512(x, cache *float32, n int)

//go:noescape
func tileMaxAVX512(s *float32, n int) (m float32, ok bool)

//go:noescape
func transposeKF16AVX512(k *uint16, ks int, hd, nkeys int, dst *float32, ds int)

//go:noescape
func scoresTileF32TAVX512(kt *float32, kts int, q *float32, hd, nkeys int, scale float32, s *float32)

//go:noescape
func scoresF16x8AVX512(k *uint16, ks int, q *float32, hd, n8 int, s *float32)
