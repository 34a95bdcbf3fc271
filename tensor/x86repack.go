package tensor

import "encoding/binary"

// The x86 float orders of the types x86order.go lacks, and of the weights llama.cpp
// repacks.
//
// ggml_vec_dot_q4_0_q8_0, q4_1_q8_1, q5_1_q8_1, q5_K_q8_K and q6_K_q8_K (AVX2,
// ggml-cpu/arch/x86/quants.c) add in x86order.go's eight-lane order: lane l of a block
// is the exact sum of the products of elements 4l..4l+3 of each group of 32 (times the
// sub-block scale for the k-quants), fused-multiply-added with the block scale, the
// lanes reduced as hsum_float_8; Q4_1, Q5_1 and Q5_K then add a float32 sum of their
// own for the mins (for Q4_1 and Q5_1 each term is a product of two F16 values, exact
// in float32, so whether GCC contracts it to an FMA does not matter; Q5_K's is one
// FMA per block).
//
// With its "CPU repack" buffers (the default), llama.cpp on an AVX2 machine stores a
// Q4_0 or Q4_K weight matrix whose row count is a multiple of 8 as block_q4_0x8 /
// block_q4_Kx8 and multiplies it with ggml_gemv_* (one activation row) and ggml_gemm_*
// (activation rows in groups of four) of arch/x86/repack.cpp instead: each output is
// one float32 accumulator over the blocks, acc = fma(float(Σ block), dw·dx, acc), with
// no lanes and no final reduction; Q4_K keeps a second one for the mins,
// subtracted at the end, and its gemm adds per pair of sub-blocks (64 elements), not
// per block. The activations are the same quants (ggml_quantize_mat_q8_0_4x8 and
// _q8_K_4x8 round as quantize_row_q8_0 and quantize_row_q8_K_ref).

// X86RepackDotFunc returns, for the types llama.cpp's x86 CPU backend repacks here
// (Q4_0, Q4_K; it also repacks Q2_K where the CPU has AVX-512, not reproduced), the dot
// product in the float order of its repacked gemv, which it uses for a weight matrix
// whose row count is a multiple of X86RepackRows; nil for other types.
func X86RepackDotFunc(t DType) func(n int, w, x []byte) float32 {
	if tr := t.traits(); tr != nil {
		return tr.dotRepack
	}
	return nil
}

// X86RepackGemmDotFunc returns, for the types of X86RepackDotFunc, the dot product in
// the order of the repacked gemm, which llama.cpp uses instead of the gemv for the
// first n−n%4 activation rows of a batch of n ≥ 4 (the others go through the gemv,
// X86RepackDotFunc). For Q4_0 both orders are the same.
func X86RepackGemmDotFunc(t DType) func(n int, w, x []byte) float32 {
	if tr := t.traits(); tr != nil {
		return tr.dotRepackGemm
	}
	return nil
}

// X86RepackGemmTileFunc returns the tile form of X86RepackGemmDotFunc(t) where there is
// one (Q4_0, Q4_K), nil otherwise: for o < mw and i < mx,
//
//	dst[i*dstStride+o] = X86RepackGemmDotFunc(t)(n, w[o*wStride:], x[i*xStride:])
//
// bit for bit, with the work of one weight or one activation block shared across the
// outputs that use it.
func X86RepackGemmTileFunc(t DType) func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if tr := t.traits(); tr != nil {
		return tr.dotRepackGemmTile
	}
	return nil
}

// X86RepackTileFunc returns, for the types of X86RepackDotFunc (nil for the others),
// the function computing a tile of a repacked matrix product the way llama.cpp's CPU
// backend does for a weight matrix of a multiple of X86RepackRows rows: for o < mw and
// i < mx,
//
//	dst[i*dstStride+o] = X86RepackGemmDotFunc(t)(n, w[o*wStride:], x[i*xStride:])  for i < mx−mx%X86RepackGemmRows
//	dst[i*dstStride+o] = X86RepackDotFunc(t)(n, w[o*wStride:], x[i*xStride:])      for the other i
//
// bit for bit: the gemm for the activation rows in groups of four, the gemv for the
// rest (all of them when mx < 4, as in decoding). It takes several weight rows at a
// time, which is much faster than one dot after another, for one activation row too.
func X86RepackTileFunc(t DType) func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if tr := t.traits(); tr != nil {
		return tr.dotRepackTile
	}
	return nil
}

// dotQ4KRepackTile is X86RepackTileFunc(Q4_K): the gemm's tile for the first
// mx−mx%4 activation rows, the gemv's for the rest.
func dotQ4KRepackTile(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	m4 := mx - mx%X86RepackGemmRows
	if m4 > 0 {
		dotQ4KRepackGemmTile(n, w, wStride, mw, x, xStride, m4, dst, dstStride)
	}
	if m4 < mx && mw > 0 {
		dotQ4KRepackGemvTile(n, w, wStride, mw, x[m4*xStride:], xStride, mx-m4, dst[m4*dstStride:], dstStride)
	}
}

// X86RepackGemmRows is the group of activation rows the repacked gemm takes at once.
const X86RepackGemmRows = 4

// X86RepackRows is the row multiple at which llama.cpp repacks a weight matrix (8 rows
// interleaved).
const X86RepackRows = 8

// lanes8Sums returns the eight exact sums Σ_{k<4} q[4l+k]·x[4l+k] of one block.
func lanes8Sums(q *[QK]int32, x *[QK]byte) (s [lanes8]int32) {
	for l := range s {
		k := 4 * l
		s[l] = q[k]*int32(int8(x[k])) + q[k+1]*int32(int8(x[k+1])) +
			q[k+2]*int32(int8(x[k+2])) + q[k+3]*int32(int8(x[k+3]))
	}
	return s
}

// nibbles32 unpacks the 32 nibbles of a Q4_0/Q4_1 block in element order.
func nibbles32(qs *[QK / 2]byte, q *[QK]uint8) {
	l0, l1 := le64(qs[0:8]), le64(qs[8:16])
	putLE64(q[0:], l0&swarNib)
	putLE64(q[8:], l1&swarNib)
	putLE64(q[16:], l0>>4&swarNib)
	putLE64(q[24:], l1>>4&swarNib)
}

// fives32 unpacks the 32 five-bit levels of a Q5_0/Q5_1 block (fifth bits qh) in
// element order.
func fives32(qh uint32, qs *[QK / 2]byte, q *[QK]uint8) {
	l0, l1 := le64(qs[0:8]), le64(qs[8:16])
	t := spreadBits
	putLE64(q[0:], l0&swarNib|t[uint8(qh)]<<4)
	putLE64(q[8:], l1&swarNib|t[uint8(qh>>8)]<<4)
	putLE64(q[16:], l0>>4&swarNib|t[uint8(qh>>16)]<<4)
	putLE64(q[24:], l1>>4&swarNib|t[uint8(qh>>24)]<<4)
}

// quadLanes returns the eight exact lane sums Σ_{e<4} (q−off)·x of one block.
func quadLanes(q *[QK]uint8, x *[QK]byte, off int32) (s [lanes8]int32) {
	s[0] = quadDot((*[4]uint8)(q[0:]), (*[4]byte)(x[0:]), off)
	s[1] = quadDot((*[4]uint8)(q[4:]), (*[4]byte)(x[4:]), off)
	s[2] = quadDot((*[4]uint8)(q[8:]), (*[4]byte)(x[8:]), off)
	s[3] = quadDot((*[4]uint8)(q[12:]), (*[4]byte)(x[12:]), off)
	s[4] = quadDot((*[4]uint8)(q[16:]), (*[4]byte)(x[16:]), off)
	s[5] = quadDot((*[4]uint8)(q[20:]), (*[4]byte)(x[20:]), off)
	s[6] = quadDot((*[4]uint8)(q[24:]), (*[4]byte)(x[24:]), off)
	s[7] = quadDot((*[4]uint8)(q[28:]), (*[4]byte)(x[28:]), off)
	return s
}

// dotQ4_0x86Go is ggml_vec_dot_q4_0_q8_0 (AVX2): dotQ8_0x86Go's order over q-8.
func dotQ4_0x86Go(n int, w, x []byte) float32 {
	var acc [lanes8]float32
	for ib := 0; ib < n/QK; ib++ {
		wb := (*[q4_0Bytes]byte)(w[ib*q4_0Bytes:])
		xb := (*[q8_0Bytes]byte)(x[ib*q8_0Bytes:])
		var q [QK]uint8
		nibbles32((*[QK / 2]byte)(wb[2:]), &q)
		s := quadLanes(&q, (*[QK]byte)(xb[2:]), 8)
		fma8(&acc, float32(halfAt(wb[:])*halfAt(xb[:])), &s)
	}
	return hsum8(&acc)
}

// dotQ4_1x86Go is ggml_vec_dot_q4_1_q8_1 (AVX2): the eight lanes of the unsigned quants
// with scale dw·dx, hsum_float_8, plus summs = Σ mw·sx added block after block.
func dotQ4_1x86Go(n int, w, x []byte) float32 {
	var acc [lanes8]float32
	var summs float32
	for ib := 0; ib < n/QK; ib++ {
		wb := (*[q4_1Bytes]byte)(w[ib*q4_1Bytes:])
		xb := (*[q8_1Bytes]byte)(x[ib*q8_1Bytes:])
		summs += float32(halfAt(wb[2:]) * halfAt(xb[2:])) // exact product
		var q [QK]uint8
		nibbles32((*[QK / 2]byte)(wb[4:]), &q)
		s := quadLanes(&q, (*[QK]byte)(xb[4:]), 0)
		fma8(&acc, float32(halfAt(wb[:])*halfAt(xb[:])), &s)
	}
	return hsum8(&acc) + summs
}

// dotQ5_1x86Go is ggml_vec_dot_q5_1_q8_1 (AVX2), in dotQ4_1x86Go's order over the
// 5-bit quants.
func dotQ5_1x86Go(n int, w, x []byte) float32 {
	var acc [lanes8]float32
	var summs float32
	for ib := 0; ib < n/QK; ib++ {
		wb := (*[q5_1Bytes]byte)(w[ib*q5_1Bytes:])
		xb := (*[q8_1Bytes]byte)(x[ib*q8_1Bytes:])
		summs += float32(halfAt(wb[2:]) * halfAt(xb[2:])) // exact product
		q := unpack5(binary.LittleEndian.Uint32(wb[4:]), (*[QK / 2]byte)(wb[8:]))
		d := float32(halfAt(wb[:]) * halfAt(xb[:]))
		s := lanes8Sums(&q, (*[QK]byte)(xb[4:]))
		for l := range acc {
			acc[l] = fmaf(float32(s[l]), d, acc[l])
		}
	}
	return hsum8(&acc) + summs
}

// dotQ4_0RepackGo is one output of ggml_gemv/gemm_q4_0_8x8_q8_0 (AVX2/AVX-512):
// acc = fma(float(Σ block), dw·dx, acc) block after block.
func dotQ4_0RepackGo(n int, w, x []byte) float32 {
	var acc float32
	for ib := 0; ib < n/QK; ib++ {
		wb := (*[q4_0Bytes]byte)(w[ib*q4_0Bytes:])
		xb := (*[q8_0Bytes]byte)(x[ib*q8_0Bytes:])
		d := float32(halfAt(wb[:]) * halfAt(xb[:]))
		acc = fmaf(float32(q4BlockSum((*[QK / 2]byte)(wb[2:]), (*[QK]byte)(xb[2:]))), d, acc)
	}
	return acc
}

// q4KInts returns the exact integer parts of a Q4_K·Q8_K block: isum = Σ sc·Σ q·q8
// over the 8 sub-blocks and summs = Σ m·bsums.
func q4KInts(b *[q4KBytes]byte, a *[q8KBytes]byte) (isum, summs int32) {
	sc, m := unpackScaleMinK4(b[q4KScales:q4KQs])
	for j := range 16 {
		summs += q8KBsum(a, j) * m[j/2]
	}
	for c := range 4 {
		s0, s1 := dotNibbles((*[32]byte)(b[q4KQs+32*c:]), (*[32]byte)(a[q8KQs+64*c:]), (*[32]byte)(a[q8KQs+64*c+32:]))
		isum += sc[2*c]*s0 + sc[2*c+1]*s1
	}
	return isum, summs
}

// dotQ4KRepackGo is one output of ggml_gemv/gemm_q4_K_8x8_q8_K (AVX2/AVX-512): two
// float32 accumulators over the blocks, acc = fma(float(isum), d·d8, acc) and
// accm = fma(float(summs), dmin·d8, accm), and acc − accm at the end.
func dotQ4KRepackGo(n int, w, x []byte) float32 {
	var acc, accm float32
	for i := 0; i < n/QKK; i++ {
		b := (*[q4KBytes]byte)(w[i*q4KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		isum, summs := q4KInts(b, a)
		d8 := q8KScale(a)
		acc = fmaf(float32(isum), float32(halfAt(b[0:])*d8), acc)
		accm = fmaf(float32(summs), float32(halfAt(b[2:])*d8), accm)
	}
	return acc - accm
}

// dotQ4KRepackGemmGo is one output of ggml_gemm_q4_K_8x8_q8_K (AVX2/AVX-512), which
// llama.cpp uses for the activation rows of a batch that come in groups of four: as
// dotQ4KRepackGo, but with one FMA per pair of sub-blocks (64 elements) instead of
// one per block.
func dotQ4KRepackGemmGo(n int, w, x []byte) float32 {
	var acc, accm float32
	for i := 0; i < n/QKK; i++ {
		b := (*[q4KBytes]byte)(w[i*q4KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		var s [8]int32
		for c := range 4 {
			s[2*c], s[2*c+1] = dotNibbles((*[32]byte)(b[q4KQs+32*c:]), (*[32]byte)(a[q8KQs+64*c:]), (*[32]byte)(a[q8KQs+64*c+32:]))
		}
		acc, accm = q4KGemmBlock(b, a, &s, acc, accm)
	}
	return acc - accm
}

// q4KGemmBlock adds one block to dotQ4KRepackGemmGo's accumulators, given its eight
// sub-block sums s_j = Σ q·q8: per pair of sub-blocks c, acc = fma(float(sc·s), d·d8,
// acc) and accm = fma(float(m·bsums), dmin·d8, accm).
func q4KGemmBlock(b *[q4KBytes]byte, a *[q8KBytes]byte, s *[8]int32, acc, accm float32) (float32, float32) {
	var v [8]int32
	q4KGemmInts(b, a, s, &v)
	d8 := q8KScale(a)
	d := float32(halfAt(b[0:]) * d8)
	dm := float32(halfAt(b[2:]) * d8)
	for c := range 4 {
		acc = fmaf(float32(v[c]), d, acc)
		accm = fmaf(float32(v[4+c]), dm, accm)
	}
	return acc, accm
}

// q4KGemmInts returns in v the integers of q4KGemmBlock: v[c] = sc·s of pair c and
// v[4+c] = m·bsums of pair c.
func q4KGemmInts(b *[q4KBytes]byte, a *[q8KBytes]byte, s, v *[8]int32) {
	sc, m := unpackScaleMinK4(b[q4KScales:q4KQs])
	for c := range 4 {
		v[c] = sc[2*c]*s[2*c] + sc[2*c+1]*s[2*c+1]
		v[4+c] = m[2*c]*(q8KBsum(a, 4*c)+q8KBsum(a, 4*c+1)) + m[2*c+1]*(q8KBsum(a, 4*c+2)+q8KBsum(a, 4*c+3))
	}
}

// quadDot is the exact Σ_{e<4} (q[e]−off)·x[e] of four levels against four int8
// activations.
func quadDot(q *[4]uint8, x *[4]byte, off int32) int32 {
	return (int32(q[0])-off)*int32(int8(x[0])) + (int32(q[1])-off)*int32(int8(x[1])) +
		(int32(q[2])-off)*int32(int8(x[2])) + (int32(q[3])-off)*int32(int8(x[3]))
}

// groupLanes adds to the eight lanes s the quad sums of one group of 32 levels q
// (minus off) against the activations x: lanes 0-3 scaled by sc0, 4-7 by sc1.
func groupLanes(s *[lanes8]int32, q *[32]uint8, x *[32]byte, off, sc0, sc1 int32) {
	s[0] += sc0 * quadDot((*[4]uint8)(q[0:]), (*[4]byte)(x[0:]), off)
	s[1] += sc0 * quadDot((*[4]uint8)(q[4:]), (*[4]byte)(x[4:]), off)
	s[2] += sc0 * quadDot((*[4]uint8)(q[8:]), (*[4]byte)(x[8:]), off)
	s[3] += sc0 * quadDot((*[4]uint8)(q[12:]), (*[4]byte)(x[12:]), off)
	s[4] += sc1 * quadDot((*[4]uint8)(q[16:]), (*[4]byte)(x[16:]), off)
	s[5] += sc1 * quadDot((*[4]uint8)(q[20:]), (*[4]byte)(x[20:]), off)
	s[6] += sc1 * quadDot((*[4]uint8)(q[24:]), (*[4]byte)(x[24:]), off)
	s[7] += sc1 * quadDot((*[4]uint8)(q[28:]), (*[4]byte)(x[28:]), off)
}

// putLE64 stores v little-endian at b[0:8].
func putLE64(b []byte, v uint64) {
	_ = b[7]
	b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
}

// q6KLevels unpacks the 256 levels (0..63, q+32) of a Q6_K block in element order,
// eight at a time.
func q6KLevels(b *[q6KBytes]byte, q *[QKK]uint8) {
	const three = 0x0303030303030303
	for h := range 2 {
		for j := 0; j < 32; j += 8 {
			l0, l1, hb := le64(b[64*h+j:]), le64(b[64*h+32+j:]), le64(b[q6KQh+32*h+j:])
			putLE64(q[128*h+j:], l0&swarNib|(hb&three)<<4)
			putLE64(q[128*h+32+j:], l1&swarNib|(hb>>2&three)<<4)
			putLE64(q[128*h+64+j:], l0>>4&swarNib|(hb>>4&three)<<4)
			putLE64(q[128*h+96+j:], l1>>4&swarNib|(hb>>6&three)<<4)
		}
	}
}

// q5KLevels unpacks the 256 levels (0..31) of a Q5_K block in element order.
func q5KLevels(b *[q5KBytes]byte, q *[QKK]uint8) {
	for c := range 4 {
		for j := 0; j < 32; j += 8 {
			qs, hb := le64(b[q5KQs+32*c+j:]), le64(b[q5KQh+j:])
			putLE64(q[64*c+j:], qs&swarNib|(hb>>(2*c)&swarLSB)<<4)
			putLE64(q[64*c+32+j:], qs>>4&swarNib|(hb>>(2*c+1)&swarLSB)<<4)
		}
	}
}

// dotQ6Kx86Go is ggml_vec_dot_q6_K_q8_K (AVX2): per block, eight int32 lanes, lane l
// the sum over the groups g of 32 elements of sc[(32g+4l)/16]·Σ_{e<4} (q−32)·q8 over
// elements 32g+4l+e, fused-multiply-added with d8·d into eight float32 lanes,
// hsum_float_8 at the end.
func dotQ6Kx86Go(n int, w, x []byte) float32 {
	var acc [lanes8]float32
	var q [QKK]uint8
	for i := 0; i < n/QKK; i++ {
		b := (*[q6KBytes]byte)(w[i*q6KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		q6KLevels(b, &q)
		var s [lanes8]int32
		for g := range 8 {
			sc0, sc1 := int32(int8(b[q6KScales+2*g])), int32(int8(b[q6KScales+2*g+1]))
			groupLanes(&s, (*[32]uint8)(q[32*g:]), (*[32]byte)(a[q8KQs+32*g:]), 32, sc0, sc1)
		}
		fma8(&acc, float32(q8KScale(a)*halfAt(b[q6KD:])), &s)
	}
	return hsum8(&acc)
}

// dotQ5Kx86Go is ggml_vec_dot_q5_K_q8_K (AVX2): the lanes of dotQ6Kx86Go's order over
// the levels with the sub-block scales sc[i/32], fused-multiply-added with d8·d into
// eight lanes, and summs = fma(−d8·dmin, Σ m·bsums, summs) block after block;
// hsum_float_8 + summs.
func dotQ5Kx86Go(n int, w, x []byte) float32 {
	var acc [lanes8]float32
	var summs float32
	var q [QKK]uint8
	for i := 0; i < n/QKK; i++ {
		b := (*[q5KBytes]byte)(w[i*q5KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		sc, m := unpackScaleMinK4(b[q5KScales:q5KQh])
		d8 := q8KScale(a)
		summs = q5KSumms(a, &m, float32(-d8*halfAt(b[2:])), summs)
		q5KLevels(b, &q)
		var s [lanes8]int32
		for g := range 8 {
			groupLanes(&s, (*[32]uint8)(q[32*g:]), (*[32]byte)(a[q8KQs+32*g:]), 0, sc[g], sc[g])
		}
		fma8(&acc, float32(d8*halfAt(b[0:])), &s)
	}
	return hsum8(&acc) + summs
}

// q5KSumms is summs = fma(dmin, float(Σ m·bsums), summs) of one block, dmin = −d8·dmin.
func q5KSumms(a *[q8KBytes]byte, m *[8]int32, dmin, summs float32) float32 {
	var mins int32
	for j := range 16 {
		mins += q8KBsum(a, j) * m[j/2]
	}
	return fmaf(dmin, float32(mins), summs)
}
