package tensor

// The x86repack.go dots on amd64: kernels in x86repack_amd64.s where the CPU has
// AVX512-VNNI (and FMA where they fuse), the Go code otherwise. Each gives the Go
// code's bits (x86repack_test.go). dotQ5_1x86Go has no kernel: X86DotFunc does not
// return it.

//go:noescape
func dotQ4_0x86VNNI(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0RepackVNNI(w, x *byte, nb int) float32

//go:noescape
func dotQ4_1x86VNNI(w, x *byte, nb int) float32

//go:noescape
func q4KSubSumsVNNI(w, x *byte, nb int, out *int32)

//go:noescape
func q4KGemmFMA(v *int32, d *float32, nb int, acc *[2]float32)

//go:noescape
func dotQ6Kx86VNNI(w, x *byte, nb int, d *float32, acc *[lanes8]float32)

//go:noescape
func q5KLanesVNNI(w, x *byte, sc *[8]int32, acc *[lanes8]float32, d float32)

func dotQ4_0x86(n int, w, x []byte) float32 {
	nb := n / QK
	if !hasFMA || nb <= 0 {
		return dotQ4_0x86Go(n, w, x)
	}
	_, _ = w[nb*q4_0Bytes-1], x[nb*q8_0Bytes-1]
	if !hasVNNI {
		return dotQ4_0x86AVX2(&w[0], &x[0], nb)
	}
	return dotQ4_0x86VNNI(&w[0], &x[0], nb)
}

func dotQ4_0Repack(n int, w, x []byte) float32 {
	nb := n / QK
	if hasFMA && !hasVNNI && nb > 0 {
		_, _ = w[nb*q4_0Bytes-1], x[nb*q8_0Bytes-1]
		return dotQ4_0RepackAVX2(&w[0], &x[0], nb)
	}
	if !hasFMA || !hasVNNI || nb <= 0 {
		return dotQ4_0RepackGo(n, w, x)
	}
	_, _ = w[nb*q4_0Bytes-1], x[nb*q8_0Bytes-1]
	return dotQ4_0RepackVNNI(&w[0], &x[0], nb)
}

func dotQ4_1x86(n int, w, x []byte) float32 {
	nb := n / QK
	if !hasFMA || nb <= 0 {
		return dotQ4_1x86Go(n, w, x)
	}
	_, _ = w[nb*q4_1Bytes-1], x[nb*q8_1Bytes-1]
	var summs float32
	for ib := range nb {
		summs += float32(halfAt(w[ib*q4_1Bytes+2:]) * halfAt(x[ib*q8_1Bytes+2:]))
	}
	if !hasVNNI {
		return dotQ4_1x86AVX2(&w[0], &x[0], nb) + summs
	}
	return dotQ4_1x86VNNI(&w[0], &x[0], nb) + summs
}

// dotQ4KRepack is dotQ4KRepackGo with the integer sums of q4KSumsAVX2.
func dotQ4KRepack(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q4KBytes)
	if !hasAVX2 || nb <= 0 {
		return dotQ4KRepackGo(n, w, x)
	}
	var sums [2 * kChunk]int32
	var acc, accm float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q4KSumsAVX2(&w[i0*q4KBytes], &x[i0*q8KBytes], m, &sums[0])
		for j := range m {
			i := i0 + j
			b := (*[q4KBytes]byte)(w[i*q4KBytes:])
			d8 := q8KScale((*[q8KBytes]byte)(x[i*q8KBytes:]))
			acc = fmaf(float32(sums[2*j]), float32(halfAt(b[0:])*d8), acc)
			accm = fmaf(float32(sums[2*j+1]), float32(halfAt(b[2:])*d8), accm)
		}
	}
	return acc - accm
}

// dotQ4KRepackGemm is dotQ4KRepackGemmGo with the sub-block sums of q4KSubSumsVNNI
// and the float32 part in q4KGemmFMA.
func dotQ4KRepackGemm(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q4KBytes)
	if !hasVNNI || !hasFMA || nb <= 0 {
		return dotQ4KRepackGemmGo(n, w, x)
	}
	var sums, v [8 * kChunk]int32
	var d [2 * kChunk]float32
	var acc [2]float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q4KSubSumsVNNI(&w[i0*q4KBytes], &x[i0*q8KBytes], m, &sums[0])
		for j := range m {
			i := i0 + j
			b := (*[q4KBytes]byte)(w[i*q4KBytes:])
			a := (*[q8KBytes]byte)(x[i*q8KBytes:])
			q4KGemmInts(b, a, (*[8]int32)(sums[8*j:]), (*[8]int32)(v[8*j:]))
			d8 := q8KScale(a)
			d[2*j], d[2*j+1] = float32(halfAt(b[0:])*d8), float32(halfAt(b[2:])*d8)
		}
		q4KGemmFMA(&v[0], &d[0], m, &acc)
	}
	return acc[0] - acc[1]
}

// dotQ5Kx86 is dotQ5Kx86Go with the lanes of q5KLanesVNNI.
func dotQ5Kx86(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q5KBytes)
	if hasFMA && !hasVNNI && nb > 0 {
		return dotQ5Kx86AVX2(n, w, x)
	}
	if !hasVNNI || nb <= 0 {
		return dotQ5Kx86Go(n, w, x)
	}
	var acc [lanes8]float32
	var summs float32
	for i := range nb {
		b := (*[q5KBytes]byte)(w[i*q5KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		sc, m := unpackScaleMinK4(b[q5KScales:q5KQh])
		summs = q5KSumms(a, &m, float32(-q8KScale(a)*halfAt(b[2:])), summs)
		q5KLanesVNNI(&b[0], &a[0], &sc, &acc, float32(q8KScale(a)*halfAt(b[0:])))
	}
	return hsum8(&acc) + summs
}

// dotQ6Kx86 is dotQ6Kx86Go with dotQ6Kx86VNNI over up to kChunk blocks at a time, their
// scales d8·d computed first.
func dotQ6Kx86(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q6KBytes)
	if hasFMA && !hasVNNI && nb > 0 {
		return dotQ6Kx86AVX2(n, w, x)
	}
	if !hasVNNI || nb <= 0 {
		return dotQ6Kx86Go(n, w, x)
	}
	var acc [lanes8]float32
	var d [kChunk]float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		for j := range m {
			i := i0 + j
			d[j] = float32(q8KScale((*[q8KBytes]byte)(x[i*q8KBytes:])) * halfAt(w[i*q6KBytes+q6KD:]))
		}
		dotQ6Kx86VNNI(&w[i0*q6KBytes], &x[i0*q8KBytes], m, &d[0], &acc)
	}
	return hsum8(&acc)
}
