package cpu

import (
	"unsafe"

	"github.com/infergo/infer/tensor"
)

// The tile forms of mulMatDot's F32 and F16 dots, shared by every SIMD level: a level
// supplies its kernels (strides in bytes), these walk the tile.

// pickTile returns the tile among a level's four for weights of type wt (sgemm:
// tinyBLAS takes the batch), or nil where the level has none.
func pickTile(wt tensor.DType, sgemm bool, sgemmF32, vecDotF32, sgemmF16, vecDotF16 tileFunc) tileFunc {
	switch {
	case wt == tensor.F32 && sgemm:
		return sgemmF32
	case wt == tensor.F32:
		return vecDotF32
	case wt == tensor.F16 && sgemm:
		return sgemmF16
	case wt == tensor.F16:
		return vecDotF16
	}
	return nil
}

// sgemmTile2x2 sets dst[i·dstStride+o] = sgemm(w row o, x row i) for o < mw, i < mx,
// by 2×2 tiles (pair, over mx/2 activation row pairs) and single outputs (one) at the
// edges; weights of type W (float32 or F16 bits), activations float32.
func sgemmTile2x2[W float32 | uint16](pair func(w *W, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int),
	one func(a *W, b *float32, nblk int) float32,
	n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if mw <= 0 || mx <= 0 {
		return
	}
	checkTile(n*int(unsafe.Sizeof(W(0))), n*4, w, wStride, mw, x, xStride, mx, dst, dstStride)
	wAt := func(o int) *W { return (*W)(unsafe.Pointer(&w[o*wStride])) }
	nb := n / lanes
	o := 0
	for ; o+2 <= mw; o += 2 {
		if mx >= 2 {
			pair(wAt(o), wStride, f32At(x, 0), xStride, mx/2, nb, &dst[o], 4*dstStride)
		}
		if mx%2 == 1 {
			i := mx - 1
			dst[i*dstStride+o] = one(wAt(o), f32At(x, i*xStride), nb)
			dst[i*dstStride+o+1] = one(wAt(o+1), f32At(x, i*xStride), nb)
		}
	}
	if o < mw {
		for i := range mx {
			dst[i*dstStride+o] = one(wAt(o), f32At(x, i*xStride), nb)
		}
	}
}

// sgemmTile4x4 sets dst[i·dstStride+o] = sgemm(w row o, x row i) for o < mw, i < mx:
// quad computes the 4×4 tiles (four weight rows against mx/4 groups of four activation
// rows), edge the rest (the activation rows after the last group, and the weight rows
// after the last four); weights of type W, activations float32.
func sgemmTile4x4[W float32 | uint16](quad func(w *W, ws int, x *float32, xs int, nx4, nblk int, dst *float32, ds int), edge tileFunc,
	n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if mw <= 0 || mx <= 0 {
		return
	}
	checkTile(n*int(unsafe.Sizeof(W(0))), n*4, w, wStride, mw, x, xStride, mx, dst, dstStride)
	mw4, mx4 := mw&^3, mx&^3
	if mx4 > 0 && n >= lanes {
		for o := 0; o < mw4; o += 4 {
			quad((*W)(unsafe.Pointer(&w[o*wStride])), wStride, f32At(x, 0), xStride, mx4/4, n/lanes, &dst[o], 4*dstStride)
		}
	} else {
		mx4 = 0
	}
	if mx4 < mx && mw4 > 0 {
		edge(n, w, wStride, mw4, x[mx4*xStride:], xStride, mx-mx4, dst[mx4*dstStride:], dstStride)
	}
	if mw4 < mw {
		edge(n, w[mw4*wStride:], wStride, mw-mw4, x, xStride, mx, dst[mw4:], dstStride)
	}
}

// vecDotTileRows sets dst[i·dstStride+o] = vecDot(w row o, x row i, n) for o < mw,
// i < mx, one rows call per activation row; weights of type W, activations float32.
func vecDotTileRows[W float32 | uint16](rows func(w *W, ws int, x *float32, n, rows int, dst *float32),
	n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if mw <= 0 || mx <= 0 {
		return
	}
	checkTile(n*int(unsafe.Sizeof(W(0))), n*4, w, wStride, mw, x, xStride, mx, dst, dstStride)
	w0 := (*W)(unsafe.Pointer(&w[0]))
	for i := range mx {
		rows(w0, wStride, f32At(x, i*xStride), n, mw, &dst[i*dstStride])
	}
}
