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

// checkTile panics unless the tile's rows (wrb and xrb bytes) and its outputs lie
// inside w, x and dst: the assembly tiles read and write without bounds checks.
func checkTile(wrb, xrb int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if (mw-1)*wStride+wrb > len(w) || (mx-1)*xStride+xrb > len(x) || (mx-1)*dstStride+mw > len(dst) || wStride < wrb || xStride < xrb || dstStride < mw {
		panic(fmt.Sprintf("cpu: matmul tile of %d×%d rows of %d and %d bytes outside its buffers", mw, mx, wrb, xrb))
	}
}

// f16WideX reports whether the F16 tiles of floatTile take their activations as F16
// values widened to float32 (converted once per row, not once per weight row).
func f16WideX() bool { return useAVX2 }

// roundF16Row sets dst[i] = float32(F16(src[i])): the activations of an F16 matmul,
// rounded to F16 (tensor.F32ToF16) and widened back.
func roundF16Row(dst, src []float32) {
	dst = dst[:len(src)]
	i := 0
	if n8 := len(src) / 8; useAVX2 && n8 > 0 && !roundF16RowAVX2(&dst[0], &src[0], n8) {
		i = 8 * n8 // no NaN, whose bits F32ToF16 sets its own way
	}
	for ; i < len(src); i++ {
		dst[i] = fromF16(toF16(src[i]))
	}
}

// roundF16Bytes is roundF16Row in the form of a tensor.ActivationQuantizer, dst holding
// float32s.
func roundF16Bytes(dst []byte, src []float32) { roundF16Row(tensor.Float32s(dst), src) }
