package cpu

import (
	"fmt"

	"github.com/infergo/infer/tensor"
)

// tileFunc computes a tile of a matmul: dst[i·dstStride+o] = dot(n, w row o, x row i)
// for o < mw, i < mx, rows wStride and xStride bytes apart (tensor.X86DotTileFunc's form).
type tileFunc = func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int)

// floatTile returns the tile form of mulMatDot's dot for F32 and F16 weights (sgemm:
// tinyBLAS takes the batch), or nil for the other types.
func floatTile(wt tensor.DType, sgemm bool) tileFunc {
	if f := avx2Tile(wt, sgemm); f != nil {
		return f
	}
	return nil
}

// checkTile panics unless the tile's rows of rowBytes bytes and its outputs lie inside
// w, x and dst: the assembly tiles read and write without bounds checks.
func checkTile(rowBytes int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if (mw-1)*wStride+rowBytes > len(w) || (mx-1)*xStride+rowBytes > len(x) || (mx-1)*dstStride+mw > len(dst) || wStride < rowBytes || xStride < rowBytes || dstStride < mw {
		panic(fmt.Sprintf("cpu: matmul tile of %d×%d rows of %d bytes outside its buffers", mw, mx, rowBytes))
	}
}
