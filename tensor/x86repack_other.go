//go:build !amd64 && !arm64

package tensor

// The x86repack.go dots without the amd64 kernels: the Go code, same bits.

func dotQ4_0x86(n int, w, x []byte) float32       { return dotQ4_0x86Go(n, w, x) }
func dotQ4_0Repack(n int, w, x []byte) float32    { return dotQ4_0RepackGo(n, w, x) }
func dotQ4_1x86(n int, w, x []byte) float32       { return dotQ4_1x86Go(n, w, x) }
func dotQ4KRepack(n int, w, x []byte) float32     { return dotQ4KRepackGo(n, w, x) }
func dotQ4KRepackGemm(n int, w, x []byte) float32 { return dotQ4KRepackGemmGo(n, w, x) }
func dotQ5Kx86(n int, w, x []byte) float32        { return dotQ5Kx86Go(n, w, x) }
func dotQ6Kx86(n int, w, x []byte) float32        { return dotQ6Kx86Go(n, w, x) }

func dotQ4KRepackGemmTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotQ4KRepackGemmTileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

func dotQ4_0RepackTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotQ4_0RepackTileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

func dotQ6Kx86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotQ6Kx86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

func dotQ4KRepackGemvTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	q4KTileGo(0, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

func dotQ4_0x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotQ4_0x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}
