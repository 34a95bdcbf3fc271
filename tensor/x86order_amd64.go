package tensor

// The x86-order dot products and activation quantizers on amd64: kernels in
// x86order_amd64.s where the CPU has AVX2 and F16C (quantizers) or also FMA (dots),
// with AVX512-VNNI for the integer sums where present (the four-weight-row kernel of
// Q5_0's tile needs it); the Go code of x86order.go otherwise. Each kernel gives the Go
// code's bits (x86order_test.go, x86order_amd64_test.go).

//go:noescape
func dotQ8_0x86AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ8_0x86VNNI(w, x *byte, nb int) float32

//go:noescape
func dotQ5_0x86AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ5_0x86VNNI(w, x *byte, nb int) float32

//go:noescape
func dotQ5_0x86VNNIw4(w *byte, wstride int, x *byte, nb int, dst *float32)

//go:noescape
func quantizeQ8_0x86AVX2(dst *byte, src *float32, nb int)

//go:noescape
func quantizeQ8_1x86AVX2(dst *byte, src *float32, nb int)

func dotQ8_0x86(n int, w, x []byte) float32 {
	nb := n / QK
	if !hasFMA || nb <= 0 {
		return dotQ8_0x86Go(n, w, x)
	}
	_, _ = w[nb*q8_0Bytes-1], x[nb*q8_0Bytes-1]
	if hasVNNI {
		return dotQ8_0x86VNNI(&w[0], &x[0], nb)
	}
	return dotQ8_0x86AVX2(&w[0], &x[0], nb)
}

func dotQ5_0x86(n int, w, x []byte) float32 {
	nb := n / QK
	if !hasFMA || nb <= 0 {
		return dotQ5_0x86Go(n, w, x)
	}
	_, _ = w[nb*q5_0Bytes-1], x[nb*q8_0Bytes-1]
	if hasVNNI {
		return dotQ5_0x86VNNI(&w[0], &x[0], nb)
	}
	return dotQ5_0x86AVX2(&w[0], &x[0], nb)
}

// dotQ8_0x86Tile is the X86DotTileFunc of Q8_0: with FMA (at the AVX2 and AVX-512
// levels) the Q8_0 lane kernels (dotQ8_0x86TileAVX2, q8LanesTile), except, with
// AVX512-VNNI, for fewer than four activation rows against a weight tile of cachedTile
// bytes or more, which go one row after another (streamRows); the Go code without FMA.
func dotQ8_0x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	switch {
	case streamRows(mw, wStride, mx):
		dotTileBy(dotQ8_0x86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	case hasFMA && n >= QK:
		dotQ8_0x86TileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	case !hasFMA:
		dotQ8_0x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	default:
		dotTileBy(dotQ8_0x86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
}

// cachedTile is the size in bytes of a weight tile below which dotQ5_0x86Tile takes four
// weight rows at a time for fewer than four activation rows. A tile that large is read
// from memory, where one row after another, one sequential stream, is faster (4096
// Q8_0 rows of 4096: 0.65 ms against 0.8-1.0 ms); a small one stays in cache across
// calls and gains from the four independent sums (1.65× on 64 rows).
const cachedTile = 1 << 20

// streamRows reports whether, at the AVX-512 level, a tile of mw weight rows (stride
// wStride) against mx activation rows goes one weight row after another: a decode
// (mx < 4) over cachedTile bytes or more, read from memory, where one sequential
// stream is faster than the four or eight of the several-row kernels (4096×8192 Q8_0:
// 19.7 against 9.6 cpuGB/s; Q4_K: 9.6 against 6.2).
func streamRows(mw, wStride, mx int) bool {
	return hasVNNI && mx < 4 && mw*wStride >= cachedTile
}

// dotQ5_0x86Tile is the X86DotTileFunc of Q5_0: with FMA, for four or more activation
// rows, the Q8_0 lane kernels over the weights converted (dotQ5_0x86TileAVX2); with
// AVX512-VNNI, for fewer rows and a weight tile of less than cachedTile bytes, each
// activation row against four weight rows at a time (dotQ5_0x86VNNIw4); the rest one
// by one.
func dotQ5_0x86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	switch {
	case hasFMA && nb > 0 && mx >= 4:
		dotQ5_0x86TileAVX2(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	case !hasFMA:
		dotQ5_0x86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	case !hasVNNI || nb <= 0 || mw*wStride >= cachedTile:
		dotTileBy(dotQ5_0x86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	var d4 [4]float32
	for i := 0; i < mx; i++ {
		xi := x[i*xStride:]
		_ = xi[nb*q8_0Bytes-1]
		d := dst[i*dstStride:]
		o := 0
		for ; o+4 <= mw; o += 4 {
			_ = w[(o+3)*wStride+nb*q5_0Bytes-1]
			dotQ5_0x86VNNIw4(&w[o*wStride], wStride, &xi[0], nb, &d4[0])
			_ = d[o+3]
			d[o], d[o+1], d[o+2], d[o+3] = d4[0], d4[1], d4[2], d4[3]
		}
		for ; o < mw; o++ {
			d[o] = dotQ5_0x86(n, w[o*wStride:], xi)
		}
	}
}

func quantizeQ8_0x86(dst []byte, src []float32) {
	nb := len(src) / QK
	if !hasAVX2 || nb == 0 {
		quantizeQ8_0x86Go(dst, src)
		return
	}
	_ = dst[nb*q8_0Bytes-1]
	quantizeQ8_0x86AVX2(&dst[0], &src[0], nb)
}

func quantizeQ8_1x86(dst []byte, src []float32) {
	nb := len(src) / QK
	if !hasAVX2 || nb == 0 {
		quantizeQ8_1x86Go(dst, src)
		return
	}
	_ = dst[nb*q8_1Bytes-1]
	quantizeQ8_1x86AVX2(&dst[0], &src[0], nb)
}
