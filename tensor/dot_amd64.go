package tensor

// The dot products on amd64: AVX2 kernels (dot_amd64.s) where the CPU has AVX2 and F16C,
// the Go code otherwise. Every kernel gives the bits of the Go code (see
// dot_amd64_test.go): the integer block sums are exact, and the float32 operations are
// the Go code's, in its order. The wrappers check the slice lengths the kernels rely on.

//go:noescape
func dotQ8_0AVX2(w, x *byte, ng int) float32

//go:noescape
func dotQ8_0VNNI(w, x *byte, ng int) float32

//go:noescape
func dotQ4_0AVX2(w, x *byte, ng int) float32

//go:noescape
func dotQ4_0VNNI(w, x *byte, ng int) float32

//go:noescape
func dotQ4_1AVX2(w, x *byte, ng int) float32

//go:noescape
func dotQ4_0VNNIBlocks(w, x *byte, nb int, sumf float32) float32

//go:noescape
func dotQ4_0VNNIx4(w, x *byte, xstride, nb int, dst *[4]float32)

// dotQ4_0Tile is dotTileBy(dotQ4_0, ...), four activation rows at a time against each
// weight row with AVX512-VNNI: the same sums, block after block, in the same order.
func dotQ4_0Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if !hasVNNI || nb <= 0 || mx < 4 || mw <= 0 {
		dotTileBy(dotQ4_0, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	_, _ = w[(mw-1)*wStride+nb*q4_0Bytes-1], x[(mx-1)*xStride+nb*q8_0Bytes-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	var out [4]float32
	for o := 0; o < mw; o++ {
		wr := w[o*wStride:]
		i := 0
		for ; i+4 <= mx; i += 4 {
			dotQ4_0VNNIx4(&wr[0], &x[i*xStride], xStride, nb, &out)
			for r, v := range out {
				dst[(i+r)*dstStride+o] = v
			}
		}
		for ; i < mx; i++ {
			dst[i*dstStride+o] = dotQ4_0(n, wr, x[i*xStride:])
		}
	}
}

//go:noescape
func dotQ4_1VNNI(w, x *byte, ng int) float32

//go:noescape
func dotQ5_0AVX2(w, x *byte, ng int) float32

//go:noescape
func dotQ5_0VNNI(w, x *byte, ng int) float32

//go:noescape
func dotQ5_1AVX2(w, x *byte, ng int) float32

//go:noescape
func dotQ5_1VNNI(w, x *byte, ng int) float32

//go:noescape
func dotF32AVX2(a, b *float32, n8 int) float32

//go:noescape
func dotF16AVX2(a, b *uint16, n8 int) float32

//go:noescape
func dotBF16AVX2(a, b *uint16, n8 int) float32

//go:noescape
func f16ToF32AVX2(h *uint16, f *float32, n8 int)

func dotF32(n int, w, x []byte) float32 {
	if !hasAVX2 || n < 8 {
		return dotF32Go(n, w, x)
	}
	a, b := Float32s(w)[:n], Float32s(x)[:n]
	i := n &^ 7
	sum := dotF32AVX2(&a[0], &b[0], n/8)
	for ; i < n; i++ {
		sum += float32(a[i] * b[i])
	}
	return sum
}

func dotF16(n int, w, x []byte) float32 {
	if !hasAVX2 || n < 8 {
		return dotF16Go(n, w, x)
	}
	a, b := uint16s(w, n), uint16s(x, n)
	t := f16Table
	i := n &^ 7
	sum := dotF16AVX2(&a[0], &b[0], n/8)
	for ; i < n; i++ {
		sum += float32(t[a[i]] * t[b[i]])
	}
	return sum
}

func dotBF16(n int, w, x []byte) float32 {
	if !hasAVX2 || n < 8 {
		return dotBF16Go(n, w, x)
	}
	a, b := uint16s(w, n), uint16s(x, n)
	i := n &^ 7
	sum := dotBF16AVX2(&a[0], &b[0], n/8)
	for ; i < n; i++ {
		sum += float32(BF16ToF32(a[i]) * BF16ToF32(b[i]))
	}
	return sum
}

// blockGroups returns the number of whole groups of eight blocks in n elements of a
// 32-element block format, after checking that w and x hold them (wb and xb bytes a block).
func blockGroups(n int, w, x []byte, wb, xb int) int {
	ng := n / (8 * QK)
	if ng > 0 {
		_, _ = w[ng*8*wb-1], x[ng*8*xb-1]
	}
	return ng
}

func dotQ8_0(n int, w, x []byte) float32 {
	ng := blockGroups(n, w, x, q8_0Bytes, q8_0Bytes)
	if !hasAVX2 || ng <= 0 {
		return dotQ8_0Go(n, w, x)
	}
	if hasVNNI {
		return dotQ8_0From(dotQ8_0VNNI(&w[0], &x[0], ng), 8*ng, n, w, x)
	}
	return dotQ8_0From(dotQ8_0AVX2(&w[0], &x[0], ng), 8*ng, n, w, x)
}

func dotQ4_0(n int, w, x []byte) float32 {
	ng := blockGroups(n, w, x, q4_0Bytes, q8_0Bytes)
	if hasVNNI {
		nb := n / QK
		if nb <= 0 {
			return 0
		}
		_, _ = w[nb*q4_0Bytes-1], x[nb*q8_0Bytes-1]
		var sumf float32
		if ng > 0 {
			sumf = dotQ4_0VNNI(&w[0], &x[0], ng)
		}
		if tail := nb - 8*ng; tail > 0 {
			sumf = dotQ4_0VNNIBlocks(&w[8*ng*q4_0Bytes], &x[8*ng*q8_0Bytes], tail, sumf)
		}
		return sumf
	}
	if !hasAVX2 || ng <= 0 {
		return dotQ4_0Go(n, w, x)
	}
	return dotQ4_0From(dotQ4_0AVX2(&w[0], &x[0], ng), 8*ng, n, w, x)
}

func dotQ4_1(n int, w, x []byte) float32 {
	ng := blockGroups(n, w, x, q4_1Bytes, q8_1Bytes)
	if !hasAVX2 || ng <= 0 {
		return dotQ4_1Go(n, w, x)
	}
	if hasVNNI {
		return dotQ4_1From(dotQ4_1VNNI(&w[0], &x[0], ng), 8*ng, n, w, x)
	}
	return dotQ4_1From(dotQ4_1AVX2(&w[0], &x[0], ng), 8*ng, n, w, x)
}

func dotQ5_0(n int, w, x []byte) float32 {
	ng := blockGroups(n, w, x, q5_0Bytes, q8_0Bytes)
	if !hasAVX2 || ng <= 0 {
		return dotQ5_0Go(n, w, x)
	}
	if hasVNNI {
		return dotQ5_0From(dotQ5_0VNNI(&w[0], &x[0], ng), 8*ng, n, w, x)
	}
	return dotQ5_0From(dotQ5_0AVX2(&w[0], &x[0], ng), 8*ng, n, w, x)
}

func dotQ5_1(n int, w, x []byte) float32 {
	ng := blockGroups(n, w, x, q5_1Bytes, q8_1Bytes)
	if !hasAVX2 || ng <= 0 {
		return dotQ5_1Go(n, w, x)
	}
	if hasVNNI {
		return dotQ5_1From(dotQ5_1VNNI(&w[0], &x[0], ng), 8*ng, n, w, x)
	}
	return dotQ5_1From(dotQ5_1AVX2(&w[0], &x[0], ng), 8*ng, n, w, x)
}
