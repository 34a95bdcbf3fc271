package tensor

// The k-quant dot products on amd64: the AVX2 kernels of kdot_amd64.s (AVX512-VNNI for
// Q6_K where present; for Q4_K and Q5_K it measured slower) compute the integer sums of
// up to kChunk blocks at a time, and the float32 combination is the Go code's.

//go:noescape
func q2KSumsAVX2(w, x *byte, nb int, out *int32)

//go:noescape
func q3KSumsAVX2(w, x *byte, nb int, out *int32)

//go:noescape
func q4KSumsAVX2(w, x *byte, nb int, out *int32)

//go:noescape
func q6KSumsVNNI(w, x *byte, nb int, out *int32)

//go:noescape
func q5KSumsAVX2(w, x *byte, nb int, out *int32)

//go:noescape
func q6KSumsAVX2(w, x *byte, nb int, out *int32)

// kChunk is the number of blocks whose integer sums a kernel call returns.
const kChunk = 16

// kBlocks returns the number of blocks in n elements, after checking that w and x hold
// them (wb bytes a weight block).
func kBlocks(n int, w, x []byte, wb int) int {
	nb := n / QKK
	if nb > 0 {
		_, _ = w[nb*wb-1], x[nb*q8KBytes-1]
	}
	return nb
}

func dotQ4K(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q4KBytes)
	if !hasAVX2 || nb <= 0 {
		return dotQ4KGo(n, w, x)
	}
	var sums [2 * kChunk]int32
	var sumd, summ float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q4KSumsAVX2(&w[i0*q4KBytes], &x[i0*q8KBytes], m, &sums[0])
		for j := range m {
			i := i0 + j
			b := (*[q4KBytes]byte)(w[i*q4KBytes:])
			d8 := q8KScale((*[q8KBytes]byte)(x[i*q8KBytes:]))
			sumd += float32(float32(halfAt(b[0:])*d8) * float32(sums[2*j]))
			summ -= float32(float32(halfAt(b[2:])*d8) * float32(sums[2*j+1]))
		}
	}
	return summ + sumd
}

func dotQ5K(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q5KBytes)
	if !hasAVX2 || nb <= 0 {
		return dotQ5KGo(n, w, x)
	}
	var sums [2 * kChunk]int32
	var sumd, summ float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q5KSumsAVX2(&w[i0*q5KBytes], &x[i0*q8KBytes], m, &sums[0])
		for j := range m {
			i := i0 + j
			b := (*[q5KBytes]byte)(w[i*q5KBytes:])
			d8 := q8KScale((*[q8KBytes]byte)(x[i*q8KBytes:]))
			sumd += float32(float32(halfAt(b[0:])*d8) * float32(sums[2*j]))
			summ -= float32(float32(halfAt(b[2:])*d8) * float32(sums[2*j+1]))
		}
	}
	return summ + sumd
}

func dotQ6K(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q6KBytes)
	if !hasAVX2 || nb <= 0 {
		return dotQ6KGo(n, w, x)
	}
	var sums [kChunk]int32
	var sumf float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		if hasVNNI {
			q6KSumsVNNI(&w[i0*q6KBytes], &x[i0*q8KBytes], m, &sums[0])
		} else {
			q6KSumsAVX2(&w[i0*q6KBytes], &x[i0*q8KBytes], m, &sums[0])
		}
		for j := range m {
			i := i0 + j
			b := (*[q6KBytes]byte)(w[i*q6KBytes:])
			d8 := q8KScale((*[q8KBytes]byte)(x[i*q8KBytes:]))
			sumf += float32(float32(halfAt(b[q6KD:])*d8) * float32(sums[j]))
		}
	}
	return sumf
}

func dotQ2K(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q2KBytes)
	if !hasAVX2 || nb <= 0 {
		return dotQ2KGo(n, w, x)
	}
	var sums [2 * kChunk]int32
	var sumf float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q2KSumsAVX2(&w[i0*q2KBytes], &x[i0*q8KBytes], m, &sums[0])
		for j := range m {
			i := i0 + j
			b := (*[q2KBytes]byte)(w[i*q2KBytes:])
			d8 := q8KScale((*[q8KBytes]byte)(x[i*q8KBytes:]))
			dall := d8 * halfAt(b[q2KD:])
			dmin := d8 * halfAt(b[q2KD+2:])
			sumf += float32(dall*float32(sums[2*j])) - float32(dmin*float32(sums[2*j+1]))
		}
	}
	return sumf
}

func dotQ3K(n int, w, x []byte) float32 {
	nb := kBlocks(n, w, x, q3KBytes)
	if !hasAVX2 || nb <= 0 {
		return dotQ3KGo(n, w, x)
	}
	var sums [kChunk]int32
	var sumf float32
	for i0 := 0; i0 < nb; i0 += kChunk {
		m := min(kChunk, nb-i0)
		q3KSumsAVX2(&w[i0*q3KBytes], &x[i0*q8KBytes], m, &sums[0])
		for j := range m {
			i := i0 + j
			b := (*[q3KBytes]byte)(w[i*q3KBytes:])
			d := halfAt(b[q3KD:]) * q8KScale((*[q8KBytes]byte)(x[i*q8KBytes:]))
			sumf += float32(d * float32(sums[j]))
		}
	}
	return sumf
}
