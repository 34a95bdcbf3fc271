package tensor

import "math/bits"

// SWAR integer dot products of 4-bit levels against int8 activations for the Go code
// (the portable kernels): four products per 64-bit multiplication. The levels u ≤ 15
// and the activations biased to unsigned x' = x+128 sit in four 16-bit lanes each, one
// of them in reverse lane order, so that the product's top lane holds Σ u·x' (at most
// 4·15·255 < 2^16; every lane below also stays under 2^16, so none carries into it).

const (
	swarNib = 0x0F0F0F0F0F0F0F0F // the low nibble of every byte
)

// u4Dot8 returns Σ_{k<8} u_k·x'_k for the bytes u_k ≤ 15 of w and x'_k of xb.
func u4Dot8(w, xb uint64) uint64 {
	r := bits.ReverseBytes64(w)                     // byte k = u_{7−k}
	odd := ((xb >> 8) & swarLo16) * (r & swarLo16)  // x'_1,3,5,7 against u_7,5,3,1
	even := (xb & swarLo16) * ((r >> 8) & swarLo16) // x'_0,2,4,6 against u_6,4,2,0
	return odd>>48 + even>>48
}

// byteSum16 is the sum of the eight bytes of v, each at most 127.
func byteSum16(v uint64) int32 {
	return int32(((v&swarLo16 + (v>>8)&swarLo16) * swarSum4) >> 48)
}

// biasedSum is the sum of the 32 bytes of x0..x3 (activations biased to unsigned).
func biasedSum(x0, x1, x2, x3 uint64) int32 {
	s := x0&swarLo16 + (x0>>8)&swarLo16 + x1&swarLo16 + (x1>>8)&swarLo16 +
		x2&swarLo16 + (x2>>8)&swarLo16 + x3&swarLo16 + (x3>>8)&swarLo16
	return int32((s * swarSum4) >> 48)
}

// q4BlockSum is the exact Σ (u−8)·x of a Q4_0 block's nibbles qs against the 32 int8
// activations x: Σ u·x' − 128·Σu − 8·(Σx' − 32·128).
func q4BlockSum(qs *[16]byte, x *[32]byte) int32 {
	l0, l1 := le64(qs[0:8]), le64(qs[8:16])
	w0, w1, w2, w3 := l0&swarNib, l1&swarNib, (l0>>4)&swarNib, (l1>>4)&swarNib
	x0, x1 := biased64(x[0:8]), biased64(x[8:16])
	x2, x3 := biased64(x[16:24]), biased64(x[24:32])
	s := int32(u4Dot8(w0, x0) + u4Dot8(w1, x1) + u4Dot8(w2, x2) + u4Dot8(w3, x3))
	return s - 128*byteSum16(w0+w1+w2+w3) - 8*(biasedSum(x0, x1, x2, x3)-32*128)
}

// dotNibbles returns Σ lo8[l]·(q4[l]&15) and Σ hi8[l]·(q4[l]>>4) over l < 32.
func dotNibbles(q4, lo8, hi8 *[32]byte) (lo, hi int32) {
	q0, q1, q2, q3 := le64(q4[0:8]), le64(q4[8:16]), le64(q4[16:24]), le64(q4[24:32])
	l0, l1, l2, l3 := q0&swarNib, q1&swarNib, q2&swarNib, q3&swarNib
	h0, h1, h2, h3 := (q0>>4)&swarNib, (q1>>4)&swarNib, (q2>>4)&swarNib, (q3>>4)&swarNib
	sl := u4Dot8(l0, biased64(lo8[0:8])) + u4Dot8(l1, biased64(lo8[8:16])) +
		u4Dot8(l2, biased64(lo8[16:24])) + u4Dot8(l3, biased64(lo8[24:32]))
	sh := u4Dot8(h0, biased64(hi8[0:8])) + u4Dot8(h1, biased64(hi8[8:16])) +
		u4Dot8(h2, biased64(hi8[16:24])) + u4Dot8(h3, biased64(hi8[24:32]))
	return int32(sl) - 128*byteSum16(l0+l1+l2+l3), int32(sh) - 128*byteSum16(h0+h1+h2+h3)
}
