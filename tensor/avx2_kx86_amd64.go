package tensor

import "unsafe"

// The AVX2 (no AVX-512) kernels of avx2_kx86_amd64.s: the x86 lane orders of Q6_K and
// Q5_K (dotQ6Kx86Go, dotQ5Kx86Go), one weight row against four activation rows or one.

//go:noescape
func q8KM32Prep(x *byte, nb int, dst *byte)

//go:noescape
func q6KLanesX4(w, x *byte, xstride int, m32 *byte, m32stride, nb int, acc *[4][8]float32)

//go:noescape
func q6KLanesX1(w, x, m32 *byte, nb int, acc *[8]float32)

//go:noescape
func q5KLanesX4(w, x *byte, xstride, nb int, acc *[4][8]float32, summs *[4]float32)

//go:noescape
func q5KLanesX1(w, x *byte, nb int, acc *[8]float32, summs *float32)

// q8KM32Bytes is the size of a Q8_K block's 32·x pairs (q8KM32Prep).
const q8KM32Bytes = 256

// rowAt is the address of row r of a panel at wp of stride ws.
func rowAt(wp *byte, r, ws int) *byte { return (*byte)(unsafe.Add(unsafe.Pointer(wp), r*ws)) }

// dotQ6Kx86TileAVX2 is the tile form of dotQ6Kx86Go with the lane kernels.
func dotQ6Kx86TileAVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if tileChecks(w, wStride, mw, nb*q6KBytes, x, xStride, mx, nb*q8KBytes, dst, dstStride) {
		return
	}
	s := tileScratchPool.Get().(*tileScratch)
	defer tileScratchPool.Put(s)
	ps := nb * q8KM32Bytes
	s.w = growBytes(s.w, mx*ps)
	for i := range mx {
		q8KM32Prep(&x[i*xStride], nb, &s.w[i*ps])
	}
	m32 := s.w
	tileLanes(laneKernels{
		x4: func(wp *byte, ws, i int, acc *[8][8]float32, _ *[8]float32) {
			for r := range 2 {
				q6KLanesX4(rowAt(wp, r, ws), &x[i*xStride], xStride, &m32[i*ps], ps, nb, (*[4][8]float32)(acc[4*r:]))
			}
		},
		x1: func(wp *byte, ws, i int, acc *[4][8]float32, _ *[4]float32) {
			for r := range 4 {
				q6KLanesX1(rowAt(wp, r, ws), &x[i*xStride], &m32[i*ps], nb, &acc[r])
			}
		},
	}, nb*q6KBytes, w, wStride, mw, mx, dst, dstStride, s)
}

// dotQ5Kx86TileAVX2 is the tile form of dotQ5Kx86Go with the lane kernels.
func dotQ5Kx86TileAVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if tileChecks(w, wStride, mw, nb*q5KBytes, x, xStride, mx, nb*q8KBytes, dst, dstStride) {
		return
	}
	s := tileScratchPool.Get().(*tileScratch)
	defer tileScratchPool.Put(s)
	tileLanes(laneKernels{
		x4: func(wp *byte, ws, i int, acc *[8][8]float32, e *[8]float32) {
			for r := range 2 {
				q5KLanesX4(rowAt(wp, r, ws), &x[i*xStride], xStride, nb, (*[4][8]float32)(acc[4*r:]), (*[4]float32)(e[4*r:]))
			}
		},
		x1: func(wp *byte, ws, i int, acc *[4][8]float32, e *[4]float32) {
			for r := range 4 {
				q5KLanesX1(rowAt(wp, r, ws), &x[i*xStride], nb, &acc[r], &e[r])
			}
		},
		ext: true,
	}, nb*q5KBytes, w, wStride, mw, mx, dst, dstStride, s)
}

// dotQ6Kx86AVX2 is dotQ6Kx86Go with q6KLanesX1.
func dotQ6Kx86AVX2(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q6KBytes)
	s := tileScratchPool.Get().(*tileScratch)
	defer tileScratchPool.Put(s)
	s.w = growBytes(s.w, nb*q8KM32Bytes)
	q8KM32Prep(&x[0], nb, &s.w[0])
	var acc [8]float32
	q6KLanesX1(&w[0], &x[0], &s.w[0], nb, &acc)
	return hsum8(&acc)
}

// dotQ5Kx86AVX2 is dotQ5Kx86Go with q5KLanesX1.
func dotQ5Kx86AVX2(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q5KBytes)
	var acc [8]float32
	var summs float32
	q5KLanesX1(&w[0], &x[0], nb, &acc, &summs)
	return hsum8(&acc) + summs
}
