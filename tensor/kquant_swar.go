package tensor

// SWAR (SIMD within a register) integer sums for the k-quant dot products, used for
// the 1- and 2-bit fields of the weights: eight int8 activations are handled at once
// as one uint64. For a bit plane p (one bit per weight byte, moved to bit 0 of each
// byte) the sum of the activations whose bit is set is found by masking the
// activations biased to unsigned (q8+128), adding the bytes pairwise into 16-bit
// lanes, and subtracting 128 per set bit. A b-bit field is the sum of its planes
// weighted 1, 2, 4, ....
//
// Each function states why its sums fit: the four 16-bit lanes must add up below
// 2^16 and the eight per-byte counts below 2^8, since swarReduce sums them with one
// multiplication each.

import "encoding/binary"

const (
	swarLSB  = 0x0101010101010101 // bit 0 of every byte
	swarBias = 0x8080808080808080 // int8 → uint8 + 128 by xor
	swarLo16 = 0x00FF00FF00FF00FF // the low byte of every 16-bit lane
	swarSum4 = 0x0001000100010001 // multiplier summing four 16-bit lanes into the top one
)

// le64 reads 8 little-endian bytes.
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// biased64 reads 8 int8 activations as unsigned bytes q8+128.
func biased64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) ^ swarBias }

// planeSum8 adds the bytes of the biased activations a selected by the plane p into
// 16-bit lanes.
func planeSum8(a, p uint64) uint64 {
	u := a & (p * 0xFF)
	return u&swarLo16 + (u>>8)&swarLo16
}

// swarReduce turns 16-bit lane sums of biased activations and byte counts of the set
// bits (both weighted alike) into the signed sum.
func swarReduce(lanes, counts uint64) int32 {
	return int32((lanes*swarSum4)>>48) - 128*int32((counts*swarLSB)>>56)
}

// crumbDot16 returns Σ q8[l]·((v[l]>>shift)&3) over 16 bytes: v0, v1 hold the weight
// bytes, a0, a1 the biased activations. Lanes ≤ 2·510·3 per lane, sum < 2^16.
func crumbDot16(v0, v1, a0, a1 uint64, shift uint) int32 {
	p0, p1 := (v0>>shift)&swarLSB, (v1>>shift)&swarLSB
	r0, r1 := (v0>>(shift+1))&swarLSB, (v1>>(shift+1))&swarLSB
	lanes := planeSum8(a0, p0) + planeSum8(a1, p1) + (planeSum8(a0, r0)+planeSum8(a1, r1))<<1
	return swarReduce(lanes, p0+p1+(r0+r1)<<1)
}

// q3Dot16 returns Σ q8[l]·u[l] over 16 bytes for the Q3_K value u = ((v>>shift)&3) |
// ((h>>hbit)&1)<<2. Lanes ≤ 2·510·7 = 7140 per lane, sum < 2^16.
func q3Dot16(v0, v1, h0, h1, a0, a1 uint64, shift, hbit uint) int32 {
	p0, p1 := (v0>>shift)&swarLSB, (v1>>shift)&swarLSB
	r0, r1 := (v0>>(shift+1))&swarLSB, (v1>>(shift+1))&swarLSB
	g0, g1 := (h0>>hbit)&swarLSB, (h1>>hbit)&swarLSB
	lanes := planeSum8(a0, p0) + planeSum8(a1, p1) +
		(planeSum8(a0, r0)+planeSum8(a1, r1))<<1 +
		(planeSum8(a0, g0)+planeSum8(a1, g1))<<2
	return swarReduce(lanes, p0+p1+(r0+r1)<<1+(g0+g1)<<2)
}

// bitDot32 returns Σ q8[l]·((v[l]>>shift)&1) over 32 bytes. Lanes ≤ 4·510, sum < 2^16.
func bitDot32(v, a *[4]uint64, shift uint) int32 {
	p0, p1 := (v[0]>>shift)&swarLSB, (v[1]>>shift)&swarLSB
	p2, p3 := (v[2]>>shift)&swarLSB, (v[3]>>shift)&swarLSB
	lanes := planeSum8(a[0], p0) + planeSum8(a[1], p1) + planeSum8(a[2], p2) + planeSum8(a[3], p3)
	return swarReduce(lanes, p0+p1+p2+p3)
}

// dotNibbles16 is dotNibbles over 16 bytes.
func dotNibbles16(q4, lo8, hi8 *[16]byte) (lo, hi int32) {
	for l := 0; l < 16; l += 4 {
		b0, b1, b2, b3 := int32(q4[l]), int32(q4[l+1]), int32(q4[l+2]), int32(q4[l+3])
		lo += int32(int8(lo8[l]))*(b0&0xF) + int32(int8(lo8[l+1]))*(b1&0xF) +
			int32(int8(lo8[l+2]))*(b2&0xF) + int32(int8(lo8[l+3]))*(b3&0xF)
		hi += int32(int8(hi8[l]))*(b0>>4) + int32(int8(hi8[l+1]))*(b1>>4) +
			int32(int8(hi8[l+2]))*(b2>>4) + int32(int8(hi8[l+3]))*(b3>>4)
	}
	return lo, hi
}
