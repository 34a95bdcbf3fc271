package tensor

// llama.cpp's generic (non-SIMD) float order for F32 and F16 weights: the scalar branch
// of ggml_vec_dot_f32/f16 (ggml-cpu/vec.cpp), what ggml-cpu computes when it is built
// without SIMD: each product rounded to float32, the sum in float64 (ggml_float),
// element after element, rounded to float32 once. It is far cheaper in Go than the x86
// order (an emulated fused multiply-add an element). The CPU backend takes it at the
// portable level for decoding F32 and F16 matmuls (backend/cpu's genericOrder, which
// also records why the other types and batches keep the x86 order). Every float32
// operation is written with an explicit conversion so that no compiler fuses a
// multiplication and an addition (arm64's would).

// GenericDotFunc returns the dot product of a weight row of type t with activations of
// type t.VecDotType() in llama.cpp's generic (non-SIMD) float order, for F32 and F16;
// nil for the other types.
func GenericDotFunc(t DType) func(n int, w, x []byte) float32 {
	switch t {
	case F32:
		return dotF32Generic
	case F16:
		return dotF16Generic
	}
	return nil
}

// GenericDotTileFunc returns, for the types of GenericDotFunc (nil for the others), the
// function computing a tile of a matrix product with GenericDotFunc(t)'s bits: for
// o < mw and i < mx,
//
//	dst[i*dstStride+o] = GenericDotFunc(t)(n, w[o*wStride:], x[i*xStride:])
//
// except that for F16 weights the activation rows are the F16 values widened to float32
// (4 bytes an element; the widening is exact, so the products are the same).
func GenericDotTileFunc(t DType) func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	switch t {
	case F32:
		return genTileF32
	case F16:
		return genTileF16
	}
	return nil
}

// dotF32Generic is ggml_vec_dot_f32 without SIMD: sumf += (ggml_float)(x[i]*y[i]).
func dotF32Generic(n int, w, x []byte) float32 {
	a, b := Float32s(w)[:n], Float32s(x)[:n]
	var s float64
	for i := range a {
		s += float64(float32(a[i] * b[i]))
	}
	return float32(s)
}

// dotF16Generic is ggml_vec_dot_f16 without SIMD: the F16 values widened, each product
// rounded to float32, the sum in float64.
func dotF16Generic(n int, w, x []byte) float32 {
	a, b := uint16s(w, n), uint16s(x, n)
	t := f16Table
	var s float64
	for i := range a {
		s += float64(float32(t[a[i]] * t[b[i]]))
	}
	return float32(s)
}

// genTileF32 is GenericDotTileFunc(F32): four weight rows against each activation row
// at a time, each output's float64 chain in its own register.
func genTileF32(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if n <= 0 || mw <= 0 || mx <= 0 {
		dotTileBy(dotF32Generic, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	_, _ = w[(mw-1)*wStride+4*n-1], x[(mx-1)*xStride+4*n-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	row := func(b []byte, off int) []float32 { return Float32s(b[off : off+4*n])[:n] }
	o := 0
	for ; o+4 <= mw; o += 4 {
		w0, w1, w2, w3 := row(w, o*wStride), row(w, (o+1)*wStride), row(w, (o+2)*wStride), row(w, (o+3)*wStride)
		for i := range mx {
			x0 := row(x, i*xStride)
			var a0, a1, a2, a3 float64
			for k := range x0 {
				u := x0[k]
				a0 += float64(float32(w0[k] * u))
				a1 += float64(float32(w1[k] * u))
				a2 += float64(float32(w2[k] * u))
				a3 += float64(float32(w3[k] * u))
			}
			d0 := dst[i*dstStride+o : i*dstStride+o+4]
			d0[0], d0[1], d0[2], d0[3] = float32(a0), float32(a1), float32(a2), float32(a3)
		}
	}
	for ; o < mw; o++ {
		for i := range mx {
			dst[i*dstStride+o] = dotF32Generic(n, w[o*wStride:], x[i*xStride:])
		}
	}
}

// genTileF16 is GenericDotTileFunc(F16): genTileF32 over F16 weights (widened by table)
// and activations already widened to float32.
func genTileF16(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if n <= 0 || mw <= 0 || mx <= 0 {
		return
	}
	_, _ = w[(mw-1)*wStride+2*n-1], x[(mx-1)*xStride+4*n-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	t := f16Table
	xrow := func(off int) []float32 { return Float32s(x[off : off+4*n])[:n] }
	wrow := func(off int) []uint16 { return uint16s(w[off:off+2*n], n) }
	o := 0
	for ; o+4 <= mw; o += 4 {
		w0, w1, w2, w3 := wrow(o*wStride), wrow((o+1)*wStride), wrow((o+2)*wStride), wrow((o+3)*wStride)
		for i := range mx {
			x0 := xrow(i * xStride)
			w0, w1, w2, w3 = w0[:len(x0)], w1[:len(x0)], w2[:len(x0)], w3[:len(x0)]
			var a0, a1, a2, a3 float64
			for k := range x0 {
				u := x0[k]
				a0 += float64(float32(t[w0[k]] * u))
				a1 += float64(float32(t[w1[k]] * u))
				a2 += float64(float32(t[w2[k]] * u))
				a3 += float64(float32(t[w3[k]] * u))
			}
			d0 := dst[i*dstStride+o : i*dstStride+o+4]
			d0[0], d0[1], d0[2], d0[3] = float32(a0), float32(a1), float32(a2), float32(a3)
		}
	}
	for ; o < mw; o++ {
		wo := wrow(o * wStride)
		for i := range mx {
			x0 := xrow(i * xStride)
			wo = wo[:len(x0)]
			var s float64
			for k := range x0 {
				s += float64(float32(t[wo[k]] * x0[k]))
			}
			dst[i*dstStride+o] = float32(s)
		}
	}
}
