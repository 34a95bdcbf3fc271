package tensor

// The AVX2 (no AVX-512) Q8_0 kernels of avx2_q8_0_amd64.s: the x86 lane order of
// dotQ8_0x86Go, two weight rows against four activation rows, or four against one.

//go:noescape
func q80XPrep(x *byte, nb int, dst *byte)

//go:noescape
func q80LanesR2X4(w *byte, wstride int, xp *byte, xpstride int, nb int, acc *[8][8]float32)

//go:noescape
func q80LanesR4X1(w *byte, wstride int, xp *byte, nb int, acc *[4][8]float32)

// q80XPrepBytes is the size of a Q8_0 block prepared by q80XPrep.
const q80XPrepBytes = 96

// dotQ8_0x86TileAVX2 is the tile form of dotQ8_0x86Go with the lane kernels.
func dotQ8_0x86TileAVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if tileChecks(w, wStride, mw, nb*q8_0Bytes, x, xStride, mx, nb*q8_0Bytes, dst, dstStride) {
		return
	}
	s := tileScratchPool.Get().(*tileScratch)
	defer tileScratchPool.Put(s)
	ps := nb * q80XPrepBytes
	s.w = growBytes(s.w, mx*ps)
	for i := range mx {
		q80XPrep(&x[i*xStride], nb, &s.w[i*ps])
	}
	xp := s.w
	tileLanes(laneKernels{
		x4: func(wp *byte, ws, i int, acc *[8][8]float32, _ *[8]float32) {
			q80LanesR2X4(wp, ws, &xp[i*ps], ps, nb, acc)
		},
		x1: func(wp *byte, ws, i int, acc *[4][8]float32, _ *[4]float32) {
			q80LanesR4X1(wp, ws, &xp[i*ps], nb, acc)
		},
	}, nb*q8_0Bytes, w, wStride, mw, mx, dst, dstStride, s)
}
