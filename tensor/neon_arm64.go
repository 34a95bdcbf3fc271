package tensor

// The dot products and activation quantizers on arm64: the NEON kernels of
// neon_arm64.s (with SDOT where the CPU has it, hasDotProd) where the level allows them
// (hasNEON), the Go code otherwise. Every kernel gives the bits of the Go code (see
// neon_arm64_test.go): the integer sums are exact, and the float32 operations are the
// Go code's, in its order; for the k-quants the kernels return the integer sums of up
// to kChunk blocks and the float32 combination is the Go code's own. The wrappers check
// the slice lengths the kernels rely on.

//go:noescape
func q8_0LanesNEON(w, x *byte, nb int, acc *[lanes8]float32, sdot bool)

//go:noescape
func q4_0LanesNEON(w, x *byte, nb int, acc *[lanes8]float32, sdot bool)

//go:noescape
func q5_0LanesNEON(w, x *byte, nb int, acc *[lanes8]float32, sdot bool)

//go:noescape
func q4_0RepackNEON(w, x *byte, nb int, acc float32, sdot bool) float32

//go:noescape
func q4_0DotNEON(w, x *byte, nb int, sumf float32, sdot bool) float32

//go:noescape
func q8_0DotNEON(w, x *byte, nb int, sumf float32, sdot bool) float32

//go:noescape
func q4KSumsNEON(w, x *byte, nb int, out *int32, sdot bool)

//go:noescape
func q6KLanesNEON(w, x *byte, nb int, out *int32, off uint8, sdot bool)

//go:noescape
func q6KDotx86NEON(w, x *byte, nb int, acc *[lanes8]float32, sdot bool)

//go:noescape
func q6KDotx86NEONx4(w, x *byte, xstride, nb int, acc *[4][lanes8]float32, sdot bool)

//go:noescape
func q5KDotx86NEON(w, x *byte, nb int, acc *[lanes8]float32, summs *float32, sdot bool)

//go:noescape
func q5KLanesNEON(w, x *byte, sc *int32, nb int, out *int32, sdot bool)

//go:noescape
func quantizeQ8_0x86NEON(dst *byte, src *float32, nb int) bool

//go:noescape
func quantizeQ8KNEON(dst *byte, src *float32) bool

// kChunk is the number of blocks whose integer sums a k-quant kernel call returns.
const kChunk = 16

// qBlocks returns the number of blocks in n elements of a 32-element block format, after
// checking that w and x hold them (wb and xb bytes a block).
func qBlocks(n int, w, x []byte, wb, xb int) int {
	nb := n / QK
	if nb > 0 {
		_, _ = w[nb*wb-1], x[nb*xb-1]
	}
	return nb
}

// kBlocks returns the number of blocks in n elements, after checking that w and x hold
// them (wb bytes a weight block).
func kBlocks(n int, w, x []byte, wb int) int {
	nb := n / QKK
	if nb > 0 {
		_, _ = w[nb*wb-1], x[nb*q8KBytes-1]
	}
	return nb
}

func dotQ8_0(n int, w, x []byte) float32 {
	nb := qBlocks(n, w, x, q8_0Bytes, q8_0Bytes)
	if !hasNEON || nb <= 0 {
		return dotQ8_0Go(n, w, x)
	}
	return q8_0DotNEON(&w[0], &x[0], nb, 0, hasDotProd)
}

func dotQ4_0(n int, w, x []byte) float32 {
	nb := qBlocks(n, w, x, q4_0Bytes, q8_0Bytes)
	if !hasNEON || nb <= 0 {
		return dotQ4_0Go(n, w, x)
	}
	return q4_0DotNEON(&w[0], &x[0], nb, 0, hasDotProd)
}

func dotQ8_0x86(n int, w, x []byte) float32 {
	nb := qBlocks(n, w, x, q8_0Bytes, q8_0Bytes)
	if !hasNEON || nb <= 0 {
		return dotQ8_0x86Go(n, w, x)
	}
	var acc [lanes8]float32
	q8_0LanesNEON(&w[0], &x[0], nb, &acc, hasDotProd)
	return hsum8(&acc)
}

func dotQ4_0x86(n int, w, x []byte) float32 {
	nb := qBlocks(n, w, x, q4_0Bytes, q8_0Bytes)
	if !hasNEON || nb <= 0 {
		return dotQ4_0x86Go(n, w, x)
	}
	var acc [lanes8]float32
	q4_0LanesNEON(&w[0], &x[0], nb, &acc, hasDotProd)
	return hsum8(&acc)
}

func dotQ5_0x86(n int, w, x []byte) float32 {
	nb := qBlocks(n, w, x, q5_0Bytes, q8_0Bytes)
	if !hasNEON || nb <= 0 {
		return dotQ5_0x86Go(n, w, x)
	}
	var acc [lanes8]float32
	q5_0LanesNEON(&w[0], &x[0], nb, &acc, hasDotProd)
	return hsum8(&acc)
}

func dotQ4_0Repack(n int, w, x []byte) float32 {
	nb := qBlocks(n, w, x, q4_0Bytes, q8_0Bytes)
	if !hasNEON || nb <= 0 {
		return dotQ4_0RepackGo(n, w, x)
	}
	return q4_0RepackNEON(&w[0], &x[0], nb, 0, hasDotProd)
}

// quantizeQ8_0x86 is quantizeQ8_0x86Go; the NEON kernel declines rows with a
// non-finite value or a block maximum too small for 127/amax, which the Go code takes.
func quantizeQ8_0x86(dst []byte, src []float32) {
	if nb := len(src) / QK; hasNEON && nb > 0 {
		_ = dst[nb*q8_0Bytes-1]
		if quantizeQ8_0x86NEON(&dst[0], &src[0], nb) {
			return
		}
	}
	quantizeQ8_0x86Go(dst, src)
}

// quantizeBlockQ8KFast quantizes one Q8_K block with the NEON kernel and reports
// whether it did: it declines blocks whose quantizeBlockQ8K differs from the plain
// computation (a tie in magnitude for the largest value, zeros, Inf, NaN, a maximum so
// small that -127/max overflows).
func quantizeBlockQ8KFast(b []byte, x []float32) bool {
	if !hasNEON {
		return false
	}
	_, _ = b[q8KBytes-1], x[QKK-1]
	return quantizeQ8KNEON(&b[0], &x[0])
}

// q4KChunk computes the eight sub-block sums Σ q·q8 of m ≤ kChunk blocks of Q4_K.
func q4KChunk(w, x []byte, m int, s *[8 * kChunk]int32) {
	q4KSumsNEON(&w[0], &x[0], m, &s[0], hasDotProd)
}

// q4KIntsFrom is q4KInts given the block's sub-block sums s.
func q4KIntsFrom(b *[q4KBytes]byte, a *[q8KBytes]byte, s []int32) (isum, summs int32) {
	sc, m := unpackScaleMinK4(b[q4KScales:q4KQs])
	for j := range 16 {
		summs += q8KBsum(a, j) * m[j/2]
	}
	for j, v := range s[:8] {
		isum += sc[j] * v
	}
	return isum, summs
}

func dotQ4K(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q4KBytes)
	if !hasNEON || nb <= 0 {
		return dotQ4KGo(n, w, x)
	}
	var s [8 * kChunk]int32
	var sumd, summ float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q4KChunk(w[i0*q4KBytes:], x[i0*q8KBytes:], m, &s)
		for j := range m {
			b := (*[q4KBytes]byte)(w[(i0+j)*q4KBytes:])
			a := (*[q8KBytes]byte)(x[(i0+j)*q8KBytes:])
			isum, summs := q4KIntsFrom(b, a, s[8*j:])
			d8 := q8KScale(a)
			sumd += float32(float32(halfAt(b[0:])*d8) * float32(isum))
			summ -= float32(float32(halfAt(b[2:])*d8) * float32(summs))
		}
	}
	return summ + sumd
}

func dotQ4KRepack(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q4KBytes)
	if !hasNEON || nb <= 0 {
		return dotQ4KRepackGo(n, w, x)
	}
	var out [2]float32
	q4KRepackNEON(&w[0], &x[0], nb, &out, hasDotProd)
	return out[0] - out[1]
}

func dotQ4KRepackGemm(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q4KBytes)
	if !hasNEON || nb <= 0 {
		return dotQ4KRepackGemmGo(n, w, x)
	}
	var s [8 * kChunk]int32
	var acc, accm float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q4KChunk(w[i0*q4KBytes:], x[i0*q8KBytes:], m, &s)
		for j := range m {
			b := (*[q4KBytes]byte)(w[(i0+j)*q4KBytes:])
			a := (*[q8KBytes]byte)(x[(i0+j)*q8KBytes:])
			acc, accm = q4KGemmBlock(b, a, (*[8]int32)(s[8*j:]), acc, accm)
		}
	}
	return acc - accm
}

// laneSum is the exact sum of eight int32 lanes.
func laneSum(s []int32) int32 {
	s = s[:lanes8]
	return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7]
}

func dotQ6K(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q6KBytes)
	if !hasNEON || nb <= 0 {
		return dotQ6KGo(n, w, x)
	}
	var s [lanes8 * kChunk]int32
	var sumf float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q6KLanesNEON(&w[i0*q6KBytes], &x[i0*q8KBytes], m, &s[0], 0, hasDotProd)
		for j := range m {
			b := (*[q6KBytes]byte)(w[(i0+j)*q6KBytes:])
			a := (*[q8KBytes]byte)(x[(i0+j)*q8KBytes:])
			// dotQ6KGo's isum: Σ sc·Σ q8·u over the sub-blocks, less 32·Σ sc·bsums.
			isum := laneSum(s[lanes8*j:])
			for k := range 16 {
				isum -= 32 * int32(int8(b[q6KScales+k])) * q8KBsum(a, k)
			}
			sumf += float32(float32(halfAt(b[q6KD:])*q8KScale(a)) * float32(isum))
		}
	}
	return sumf
}

func dotQ6Kx86(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q6KBytes)
	if !hasNEON || nb <= 0 {
		return dotQ6Kx86Go(n, w, x)
	}
	var acc [lanes8]float32
	q6KDotx86NEON(&w[0], &x[0], nb, &acc, hasDotProd)
	return hsum8(&acc)
}

// q5KChunk computes the eight x86 lanes of m ≤ kChunk blocks of Q5_K into s and their
// mins into mins.
func q5KChunk(w, x []byte, m int, s *[lanes8 * kChunk]int32, mins *[kChunk][8]int32) {
	var sc [8 * kChunk]int32
	for j := range m {
		var scj [8]int32
		scj, mins[j] = unpackScaleMinK4(w[j*q5KBytes+q5KScales : j*q5KBytes+q5KQh])
		copy(sc[8*j:], scj[:])
	}
	q5KLanesNEON(&w[0], &x[0], &sc[0], m, &s[0], hasDotProd)
}

func dotQ5K(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q5KBytes)
	if !hasNEON || nb <= 0 {
		return dotQ5KGo(n, w, x)
	}
	var s [lanes8 * kChunk]int32
	var mins [kChunk][8]int32
	var sumd, summ float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q5KChunk(w[i0*q5KBytes:], x[i0*q8KBytes:], m, &s, &mins)
		for j := range m {
			b := (*[q5KBytes]byte)(w[(i0+j)*q5KBytes:])
			a := (*[q8KBytes]byte)(x[(i0+j)*q8KBytes:])
			summs := int32(0)
			for k := range 16 {
				summs += q8KBsum(a, k) * mins[j][k/2]
			}
			d8 := q8KScale(a)
			sumd += float32(float32(halfAt(b[0:])*d8) * float32(laneSum(s[lanes8*j:])))
			summ -= float32(float32(halfAt(b[2:])*d8) * float32(summs))
		}
	}
	return summ + sumd
}

func dotQ5Kx86(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q5KBytes)
	if !hasNEON || nb <= 0 {
		return dotQ5Kx86Go(n, w, x)
	}
	var acc [lanes8]float32
	var summs float32
	q5KDotx86NEON(&w[0], &x[0], nb, &acc, &summs, hasDotProd)
	return hsum8(&acc) + summs
}

// The dots and tiles without NEON kernels are in dot_gofallback.go.

func dotQ4KRepackGemvTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if !hasNEON {
		q4KTileGo(0, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	dotTileBy(dotQ4KRepack, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// dotQ6Kx86Tile is the tile form of dotQ6Kx86: each weight row against the activation
// rows four at a time (q6KDotx86NEONx4, the weight block unpacked once for the four),
// the rest one by one.
func dotQ6Kx86Tile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if !hasNEON {
		dotQ6Kx86TileGo(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	if nb <= 0 || mx < 4 || neonTileEmpty(w, wStride, mw, nb*q6KBytes, x, xStride, mx, nb*q8KBytes, dst, dstStride) {
		dotTileBy(dotQ6Kx86, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	m4 := mx - mx%4
	var acc [4][lanes8]float32
	for o := range mw {
		wo := w[o*wStride:]
		for i := 0; i < m4; i += 4 {
			acc = [4][lanes8]float32{}
			q6KDotx86NEONx4(&wo[0], &x[i*xStride], xStride, nb, &acc, hasDotProd)
			for r := range 4 {
				dst[(i+r)*dstStride+o] = hsum8(&acc[r])
			}
		}
		for i := m4; i < mx; i++ {
			dst[i*dstStride+o] = dotQ6Kx86(n, wo, x[i*xStride:])
		}
	}
}
