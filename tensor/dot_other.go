//go:build !amd64 && !arm64

package tensor

// Without assembly kernels the dot products are the Go code.

func dotF32(n int, w, x []byte) float32  { return dotF32Go(n, w, x) }
func dotBF16(n int, w, x []byte) float32 { return dotBF16Go(n, w, x) }
func dotQ4_0(n int, w, x []byte) float32 { return dotQ4_0Go(n, w, x) }
func dotQ5_1(n int, w, x []byte) float32 { return dotQ5_1Go(n, w, x) }
func dotQ8_0(n int, w, x []byte) float32 { return dotQ8_0Go(n, w, x) }
func dotQ4K(n int, w, x []byte) float32  { return dotQ4KGo(n, w, x) }
func dotQ5K(n int, w, x []byte) float32  { return dotQ5KGo(n, w, x) }
func dotQ6K(n int, w, x []byte) float32  { return dotQ6KGo(n, w, x) }

func dotQ8_0x86(n int, w, x []byte) float32     { return dotQ8_0x86Go(n, w, x) }
func dotQ5_0x86(n int, w, x []byte) float32     { return dotQ5_0x86Go(n, w, x) }
func quantizeQ8_0x86(dst []byte, src []float32) { quantizeQ8_0x86Go(dst, src) }

func dotQ8_0x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotQ8_0x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// HasAVX512 reports whether AVX-512 kernels can be used: never off amd64.
func HasAVX512() bool { return false }

// Level returns the kernel level this process uses: the Go code off amd64 (until arm64
// has kernels of its own).
func Level() CPULevel { return LevelPortable }

func dotBF16F32(n int, w, x []byte) float32 { return dotBF16F32Go(n, w, x) }

// quantizeBlockQ8KFast reports that there is no kernel: the Go code quantizes.
func quantizeBlockQ8KFast(b []byte, x []float32) bool { return false }
