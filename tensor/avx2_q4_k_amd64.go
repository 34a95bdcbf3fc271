package tensor

// The AVX2 (no AVX-512) Q4_K kernels of avx2_q4_k_amd64.s: the repacked gemv and gemm
// orders (dotQ4KRepackGo, dotQ4KRepackGemmGo), eight weight rows against one
// activation row at a time, or four for the gemm.

//go:noescape
func q4KGemvR8X1(w *byte, wstride int, x *byte, nb int, dst *[8]float32)

//go:noescape
func q4KGemmR8X4(w *byte, wstride int, x *byte, xstride, nb int, dst *float32, dststride int)

//go:noescape
func q4KGemmR8X1(w *byte, wstride int, x *byte, nb int, dst *[8]float32)

// q4KTileAVX2 is the tile form of dotQ4KRepackGo (gemm false) or dotQ4KRepackGemmGo.
func q4KTileAVX2(gemm bool, n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if tileChecks(w, wStride, mw, nb*q4KBytes, x, xStride, mx, nb*q8KBytes, dst, dstStride) {
		return
	}
	s := tileScratchPool.Get().(*tileScratch)
	defer tileScratchPool.Put(s)
	k := r8Kernels{x1: func(wp *byte, ws, i int, out *[8]float32) {
		q4KGemvR8X1(wp, ws, &x[i*xStride], nb, out)
	}}
	if gemm {
		k = r8Kernels{
			x4: func(wp *byte, ws, i int, d *float32, ds int) {
				q4KGemmR8X4(wp, ws, &x[i*xStride], xStride, nb, d, ds)
			},
			x1: func(wp *byte, ws, i int, out *[8]float32) {
				q4KGemmR8X1(wp, ws, &x[i*xStride], nb, out)
			},
		}
	}
	tileR8(k, nb*q4KBytes, w, wStride, mw, mx, dst, dstStride, s)
}
