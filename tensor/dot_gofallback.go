//go:build !amd64

package tensor

// The dots that have no kernel off amd64 (arm64 included): the Go code, and their tiles
// one dot after another.

func dotF16(n int, w, x []byte) float32  { return dotF16Go(n, w, x) }
func dotQ4_1(n int, w, x []byte) float32 { return dotQ4_1Go(n, w, x) }
func dotQ5_0(n int, w, x []byte) float32 { return dotQ5_0Go(n, w, x) }
func dotQ2K(n int, w, x []byte) float32  { return dotQ2KGo(n, w, x) }
func dotQ3K(n int, w, x []byte) float32  { return dotQ3KGo(n, w, x) }

func quantizeQ8_1x86(dst []byte, src []float32) { quantizeQ8_1x86Go(dst, src) }

func dotQ4_0Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotTileBy(dotQ4_0, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

func dotQ5_0x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if Level() == LevelPortable {
		dotQ5_0x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	dotTileBy(dotQ5_0x86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

func dotQ5Kx86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if Level() == LevelPortable {
		dotQ5Kx86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	dotTileBy(dotQ5Kx86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

func dotQ4_1x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if Level() == LevelPortable {
		dotQ4_1x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	dotTileBy(dotQ4_1x86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}
