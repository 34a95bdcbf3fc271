package tensor

// X86PreparedTile is an X86DotTileFunc in two steps, for a batch whose activation rows
// every tile call would prepare again (each of a matmul's chunks of weight rows, say):
// Prepare converts one activation row (n elements in the weight type's VecDotType,
// x) into dst (RowBytes(n) bytes), once for the batch; Tile computes what the
// X86DotTileFunc computes, bit for bit, over activation rows so prepared (stride
// xpStride bytes).
type X86PreparedTile struct {
	RowBytes func(n int) int
	Prepare  func(dst, x []byte, n int)
	Tile     func(n int, w []byte, wStride, mw int, xp []byte, xpStride, mx int, dst []float32, dstStride int)
}
