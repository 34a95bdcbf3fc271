package tensor

import (
	"math"
	"sync"
)

// The Go (portable) tile of X86DotTileFunc(Q8_0): dotQ8_0x86Go's bits, several outputs
// at once. Each lane sum of four int8 products is exact in int32 whichever way it is
// formed, and each lane's float32 FMA chain runs in its own order, so only the sharing
// of loads changes:
//   - one activation row (decoding): two weight rows per pass (q8x86W2), the activation
//     quants read once for both;
//   - four activation rows (q8x86Rows4): their quants packed two rows to an int64
//     (x_i + x_{i+1}·2^32, q8x86Pack), so that one 64-bit multiplication by a weight
//     quant gives two products; a lane's four products, added, give both rows' lane
//     sums (split2).
//
// The eight lanes of a block are written out: loads at fixed offsets from one register,
// accumulators at fixed places, the rare FMA case in a call (the Go compiler neither
// unrolls the lane loop nor folds a variable index and an offset into a byte load).
//
// The FMAs take a short form of fmaf: the block scale d = dw·dx is a product of two F16
// values, a multiple of 2^-48, and so is every accumulator (a float32 rounding of a
// multiple of 2^-48 at least 2^-48 in magnitude stays one), so a result is zero or at
// least 2^-48 in magnitude: never fmaf's "tiny" case. The float64 sums round to float32
// on their bits (r32Bits, r32) rather than by two conversions; only a sum halfway between
// two float32s (fmafMid, which the same word shows) needs more. Midpoints are frequent
// in models (2% of the FMAs of synth-256-Q8_0's prompt): where every sum of the lane is
// below 2^5 it is exact (exact48) and float32(v) is right, inline; the others
// take fmafTie's fix (midFix) out of line (q8FMA, q8FMA4).

// fmafMid reports whether the low 29 significand bits of v are 1<<28: v lies halfway
// between two float32s (fmafHard without its tiny case).
func fmafMid(v float64) bool { return math.Float64bits(v)<<35 == 1<<63 }

// r32Bits and r32 round a float64 v to float32 in its own format, the integer way: the
// low 29 of the 52 significand bits go, rounded to nearest by adding half of the last
// kept bit's weight (1<<28) and clearing them (the carry can reach the exponent, as a
// rounding up to the next power of two does). t = r32Bits(v) has t&r32Low == 0 exactly
// where v is a midpoint (fmafMid), whose even rounding or fmafTie fix this is not; for
// every other v, r32(t) == float64(float32(v)) for v in float32's normal range, zero and
// the infinities (their low bits are zero) and the kernels' NaNs (float32 NaNs widened,
// low bits zero too). Results below 2^-126 or above float32's range never occur in the
// kernels below: |dw·dx·s| < 2^32·2^17 and each accumulator a multiple of 2^-48.
// It keeps two conversions (CVTSD2SS, CVTSS2SD) out of each FMA: integer operations on
// the bits that the midpoint test loads anyway.
const r32Low = 1<<29 - 1

func r32Bits(v float64) uint64 { return math.Float64bits(v) + 1<<28 }

func r32(t uint64) float64 { return math.Float64frombits(t &^ r32Low) }

// q8FMA sets *a = fmaf(d, float32(s), float32(*a)) for d·s and *a multiples of 2^-48
// (see above), *a a float32 value held as float64; the kernels inline its common case.
func q8FMA(d float64, s int32, a *float64) {
	p, z := d*float64(s), *a // p exact
	v := p + z
	if fmafMid(v) {
		v = midFix(p, z, v)
	}
	*a = float64(float32(v))
}

// midFix returns v = p + z (float64, p an exact product, z a float32), a float32
// midpoint (fmafMid), moved one step towards the exact sum where it is inexact, as
// fmafTie rounds it to odd (v is even: its low 29 bits are 1<<28); it then rounds to
// float32 as the exact sum does. Small enough to inline: no call in the kernels' loops,
// whose registers a call would clobber.
func midFix(p, z, v float64) float64 {
	bz := v - p
	e := (p - (v - bz)) + (z - bz) // p + z = v + e exactly (TwoSum)
	u := math.Float64bits(v)
	if (e > 0) == (v > 0) {
		u++
	} else {
		u--
	}
	if e == 0 {
		return v
	}
	return math.Float64frombits(u)
}

// exact48 reports whether |v| < 2^5. A sum of two multiples of 2^-48 below that is exact
// in float64 (it needs at most 53 bits), so that float32(v), even at a midpoint, is the
// FMA's result.
func exact48(v float64) bool { return math.Float64bits(v)<<1 < math.Float64bits(0x1p5)<<1 }

// q8FMA4 is q8FMA for lane l of q8x86Rows4's four rows.
func q8FMA4(a *[4][lanes8]float64, l int, d0, d1, d2, d3 float64, s0, s1, s2, s3 int32) {
	q8FMA(d0, s0, &a[0][l])
	q8FMA(d1, s1, &a[1][l])
	q8FMA(d2, s2, &a[2][l])
	q8FMA(d3, s3, &a[3][l])
}

// split2 returns lo and hi of s = lo + hi·2^32 (|lo|, |hi| < 2^31).
func split2(s int64) (lo, hi int32) {
	return int32(s), int32((s + 1<<31) >> 32) // 0 < lo + 2^31 < 2^32: no carry
}

// hsum8d is hsum8 of lanes held as float64s of float32 values.
func hsum8d(a *[lanes8]float64) float32 {
	var f [lanes8]float32
	for l := range f {
		f[l] = float32(a[l])
	}
	return hsum8(&f)
}

// dotQ8_0x86TileGo is X86DotTileFunc(Q8_0) in Go.
func dotQ8_0x86TileGo(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if nb <= 0 || mw <= 0 || mx <= 0 {
		dotTileBy(dotQ8_0x86Go, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	rb := nb * q8_0Bytes
	_, _ = w[(mw-1)*wStride+rb-1], x[(mx-1)*xStride+rb-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	i := 0
	if mx >= 4 {
		t := q8x86PairPool.Get().(*q8x86Pairs)
		for ; i+4 <= mx; i += 4 {
			q8x86Pack(t, nb, x[i*xStride:], xStride)
			for o := range mw {
				var out [4]float32
				q8x86Rows4(t, nb, w[o*wStride:o*wStride+rb], &out)
				for r, v := range out {
					dst[(i+r)*dstStride+o] = v
				}
			}
		}
		q8x86PairPool.Put(t)
	}
	for ; i < mx; i++ {
		xi := x[i*xStride : i*xStride+rb]
		o := 0
		for ; o+2 <= mw; o += 2 {
			dst[i*dstStride+o], dst[i*dstStride+o+1] = q8x86W2(nb, w[o*wStride:o*wStride+rb], w[(o+1)*wStride:(o+1)*wStride+rb], xi)
		}
		if o < mw {
			dst[i*dstStride+o] = dotQ8_0x86Go(n, w[o*wStride:], xi)
		}
	}
}

// q8x86W2 is dotQ8_0x86Go of weight rows w0 and w1 against x.
func q8x86W2(nb int, w0, w1, x []byte) (float32, float32) {
	var a, c [lanes8]float64
	var s0, s1, x0, x1, x2, x3 int32
	var v0, v1 float64
	for range nb {
		// Re-slicing keeps each block's address in one register (the loads then take
		// fixed offsets from it; MOVBQSX has no base+index+offset form in Go's SSA).
		xb, wb, vb := (*[q8_0Bytes]byte)(x), (*[q8_0Bytes]byte)(w0), (*[q8_0Bytes]byte)(w1)
		x, w0, w1 = x[q8_0Bytes:], w0[q8_0Bytes:], w1[q8_0Bytes:]
		dx := halfAt(xb[:])
		d0, d1 := float64(halfAt(wb[:])*dx), float64(halfAt(vb[:])*dx)
		// The eight lanes, written out (lane l: quants 4l..4l+3).
		x0, x1, x2, x3 = int32(int8(xb[2])), int32(int8(xb[3])), int32(int8(xb[4])), int32(int8(xb[5]))
		s0 = int32(int8(wb[2]))*x0 + int32(int8(wb[3]))*x1 + int32(int8(wb[4]))*x2 + int32(int8(wb[5]))*x3
		s1 = int32(int8(vb[2]))*x0 + int32(int8(vb[3]))*x1 + int32(int8(vb[4]))*x2 + int32(int8(vb[5]))*x3
		v0, v1 = d0*float64(s0)+a[0], d1*float64(s1)+c[0]
		if u0, u1 := r32Bits(v0), r32Bits(v1); u0&r32Low != 0 && u1&r32Low != 0 {
			a[0], c[0] = r32(u0), r32(u1)
		} else if exact48(v0) && exact48(v1) {
			a[0], c[0] = float64(float32(v0)), float64(float32(v1))
		} else {
			q8FMA(d0, s0, &a[0])
			q8FMA(d1, s1, &c[0])
		}
		x0, x1, x2, x3 = int32(int8(xb[6])), int32(int8(xb[7])), int32(int8(xb[8])), int32(int8(xb[9]))
		s0 = int32(int8(wb[6]))*x0 + int32(int8(wb[7]))*x1 + int32(int8(wb[8]))*x2 + int32(int8(wb[9]))*x3
		s1 = int32(int8(vb[6]))*x0 + int32(int8(vb[7]))*x1 + int32(int8(vb[8]))*x2 + int32(int8(vb[9]))*x3
		v0, v1 = d0*float64(s0)+a[1], d1*float64(s1)+c[1]
		if u0, u1 := r32Bits(v0), r32Bits(v1); u0&r32Low != 0 && u1&r32Low != 0 {
			a[1], c[1] = r32(u0), r32(u1)
		} else if exact48(v0) && exact48(v1) {
			a[1], c[1] = float64(float32(v0)), float64(float32(v1))
		} else {
			q8FMA(d0, s0, &a[1])
			q8FMA(d1, s1, &c[1])
		}
		x0, x1, x2, x3 = int32(int8(xb[10])), int32(int8(xb[11])), int32(int8(xb[12])), int32(int8(xb[13]))
		s0 = int32(int8(wb[10]))*x0 + int32(int8(wb[11]))*x1 + int32(int8(wb[12]))*x2 + int32(int8(wb[13]))*x3
		s1 = int32(int8(vb[10]))*x0 + int32(int8(vb[11]))*x1 + int32(int8(vb[12]))*x2 + int32(int8(vb[13]))*x3
		v0, v1 = d0*float64(s0)+a[2], d1*float64(s1)+c[2]
		if u0, u1 := r32Bits(v0), r32Bits(v1); u0&r32Low != 0 && u1&r32Low != 0 {
			a[2], c[2] = r32(u0), r32(u1)
		} else if exact48(v0) && exact48(v1) {
			a[2], c[2] = float64(float32(v0)), float64(float32(v1))
		} else {
			q8FMA(d0, s0, &a[2])
			q8FMA(d1, s1, &c[2])
		}
		x0, x1, x2, x3 = int32(int8(xb[14])), int32(int8(xb[15])), int32(int8(xb[16])), int32(int8(xb[17]))
		s0 = int32(int8(wb[14]))*x0 + int32(int8(wb[15]))*x1 + int32(int8(wb[16]))*x2 + int32(int8(wb[17]))*x3
		s1 = int32(int8(vb[14]))*x0 + int32(int8(vb[15]))*x1 + int32(int8(vb[16]))*x2 + int32(int8(vb[17]))*x3
		v0, v1 = d0*float64(s0)+a[3], d1*float64(s1)+c[3]
		if u0, u1 := r32Bits(v0), r32Bits(v1); u0&r32Low != 0 && u1&r32Low != 0 {
			a[3], c[3] = r32(u0), r32(u1)
		} else if exact48(v0) && exact48(v1) {
			a[3], c[3] = float64(float32(v0)), float64(float32(v1))
		} else {
			q8FMA(d0, s0, &a[3])
			q8FMA(d1, s1, &c[3])
		}
		x0, x1, x2, x3 = int32(int8(xb[18])), int32(int8(xb[19])), int32(int8(xb[20])), int32(int8(xb[21]))
		s0 = int32(int8(wb[18]))*x0 + int32(int8(wb[19]))*x1 + int32(int8(wb[20]))*x2 + int32(int8(wb[21]))*x3
		s1 = int32(int8(vb[18]))*x0 + int32(int8(vb[19]))*x1 + int32(int8(vb[20]))*x2 + int32(int8(vb[21]))*x3
		v0, v1 = d0*float64(s0)+a[4], d1*float64(s1)+c[4]
		if u0, u1 := r32Bits(v0), r32Bits(v1); u0&r32Low != 0 && u1&r32Low != 0 {
			a[4], c[4] = r32(u0), r32(u1)
		} else if exact48(v0) && exact48(v1) {
			a[4], c[4] = float64(float32(v0)), float64(float32(v1))
		} else {
			q8FMA(d0, s0, &a[4])
			q8FMA(d1, s1, &c[4])
		}
		x0, x1, x2, x3 = int32(int8(xb[22])), int32(int8(xb[23])), int32(int8(xb[24])), int32(int8(xb[25]))
		s0 = int32(int8(wb[22]))*x0 + int32(int8(wb[23]))*x1 + int32(int8(wb[24]))*x2 + int32(int8(wb[25]))*x3
		s1 = int32(int8(vb[22]))*x0 + int32(int8(vb[23]))*x1 + int32(int8(vb[24]))*x2 + int32(int8(vb[25]))*x3
		v0, v1 = d0*float64(s0)+a[5], d1*float64(s1)+c[5]
		if u0, u1 := r32Bits(v0), r32Bits(v1); u0&r32Low != 0 && u1&r32Low != 0 {
			a[5], c[5] = r32(u0), r32(u1)
		} else if exact48(v0) && exact48(v1) {
			a[5], c[5] = float64(float32(v0)), float64(float32(v1))
		} else {
			q8FMA(d0, s0, &a[5])
			q8FMA(d1, s1, &c[5])
		}
		x0, x1, x2, x3 = int32(int8(xb[26])), int32(int8(xb[27])), int32(int8(xb[28])), int32(int8(xb[29]))
		s0 = int32(int8(wb[26]))*x0 + int32(int8(wb[27]))*x1 + int32(int8(wb[28]))*x2 + int32(int8(wb[29]))*x3
		s1 = int32(int8(vb[26]))*x0 + int32(int8(vb[27]))*x1 + int32(int8(vb[28]))*x2 + int32(int8(vb[29]))*x3
		v0, v1 = d0*float64(s0)+a[6], d1*float64(s1)+c[6]
		if u0, u1 := r32Bits(v0), r32Bits(v1); u0&r32Low != 0 && u1&r32Low != 0 {
			a[6], c[6] = r32(u0), r32(u1)
		} else if exact48(v0) && exact48(v1) {
			a[6], c[6] = float64(float32(v0)), float64(float32(v1))
		} else {
			q8FMA(d0, s0, &a[6])
			q8FMA(d1, s1, &c[6])
		}
		x0, x1, x2, x3 = int32(int8(xb[30])), int32(int8(xb[31])), int32(int8(xb[32])), int32(int8(xb[33]))
		s0 = int32(int8(wb[30]))*x0 + int32(int8(wb[31]))*x1 + int32(int8(wb[32]))*x2 + int32(int8(wb[33]))*x3
		s1 = int32(int8(vb[30]))*x0 + int32(int8(vb[31]))*x1 + int32(int8(vb[32]))*x2 + int32(int8(vb[33]))*x3
		v0, v1 = d0*float64(s0)+a[7], d1*float64(s1)+c[7]
		if u0, u1 := r32Bits(v0), r32Bits(v1); u0&r32Low != 0 && u1&r32Low != 0 {
			a[7], c[7] = r32(u0), r32(u1)
		} else if exact48(v0) && exact48(v1) {
			a[7], c[7] = float64(float32(v0)), float64(float32(v1))
		} else {
			q8FMA(d0, s0, &a[7])
			q8FMA(d1, s1, &c[7])
		}
	}
	return hsum8d(&a), hsum8d(&c)
}

// q8x86PairPool holds the packed activation pairs of dotQ8_0x86TileGo.
var q8x86PairPool = sync.Pool{New: func() any { return new(q8x86Pairs) }}

// q8x86Pairs is dotQ8_0x86TileGo's scratch: four activation rows packed in two pairs and
// their block scales.
type q8x86Pairs struct {
	p01, p23 []int64
	d        []float32 // dx of row r, block b at [4b+r]
}

// q8x86Pack packs four activation rows (xStride bytes apart) of nb Q8_0 blocks into t.
func q8x86Pack(t *q8x86Pairs, nb int, x []byte, xStride int) {
	ne := nb * QK
	if cap(t.p01) < ne {
		t.p01, t.p23 = make([]int64, ne), make([]int64, ne)
	}
	if cap(t.d) < 4*nb {
		t.d = make([]float32, 4*nb)
	}
	p01, p23, d := t.p01[:ne], t.p23[:ne], t.d[:4*nb]
	rb := nb * q8_0Bytes
	x0, x1, x2, x3 := x[:rb], x[xStride:xStride+rb], x[2*xStride:2*xStride+rb], x[3*xStride:3*xStride+rb]
	for b := range nb {
		o := b * q8_0Bytes
		b0, b1 := (*[q8_0Bytes]byte)(x0[o:]), (*[q8_0Bytes]byte)(x1[o:])
		b2, b3 := (*[q8_0Bytes]byte)(x2[o:]), (*[q8_0Bytes]byte)(x3[o:])
		db := (*[4]float32)(d[4*b:])
		db[0], db[1], db[2], db[3] = halfAt(b0[:]), halfAt(b1[:]), halfAt(b2[:]), halfAt(b3[:])
		q01, q23 := (*[QK]int64)(p01[b*QK:]), (*[QK]int64)(p23[b*QK:])
		for k := range QK {
			q01[k] = int64(int8(b0[2+k])) + int64(int8(b1[2+k]))<<32
			q23[k] = int64(int8(b2[2+k])) + int64(int8(b3[2+k]))<<32
		}
	}
}

// q8x86Rows4 sets out[r] = dotQ8_0x86Go of weight row w against activation row r of the
// four packed in t.
func q8x86Rows4(t *q8x86Pairs, nb int, w []byte, out *[4]float32) {
	var a [4][lanes8]float64
	var s0, s1, s2, s3 int32
	var w0, w1, w2, w3 int64
	var u0, u1, u2, u3 uint64
	var v0, v1, v2, v3 float64
	ne := nb * QK
	p01, p23, d := t.p01[:ne], t.p23[:ne], t.d[:4*nb]
	for range nb {
		wb, q01, q23, db := (*[q8_0Bytes]byte)(w), (*[QK]int64)(p01), (*[QK]int64)(p23), (*[4]float32)(d)
		w, p01, p23, d = w[q8_0Bytes:], p01[QK:], p23[QK:], d[4:] // as in q8x86W2
		dw := halfAt(wb[:])
		d0, d1, d2, d3 := float64(dw*db[0]), float64(dw*db[1]), float64(dw*db[2]), float64(dw*db[3])
		// The lanes written out as in q8x86W2.
		w0, w1, w2, w3 = int64(int8(wb[2])), int64(int8(wb[3])), int64(int8(wb[4])), int64(int8(wb[5]))
		s0, s1 = split2(w0*q01[0] + w1*q01[1] + w2*q01[2] + w3*q01[3])
		s2, s3 = split2(w0*q23[0] + w1*q23[1] + w2*q23[2] + w3*q23[3])
		v0, v1, v2, v3 = d0*float64(s0)+a[0][0], d1*float64(s1)+a[1][0], d2*float64(s2)+a[2][0], d3*float64(s3)+a[3][0]
		u0, u1, u2, u3 = r32Bits(v0), r32Bits(v1), r32Bits(v2), r32Bits(v3)
		if u0&r32Low == 0 || u1&r32Low == 0 || u2&r32Low == 0 || u3&r32Low == 0 {
			if exact48(v0) && exact48(v1) && exact48(v2) && exact48(v3) {
				a[0][0], a[1][0], a[2][0], a[3][0] = float64(float32(v0)), float64(float32(v1)), float64(float32(v2)), float64(float32(v3))
			} else {
				q8FMA4(&a, 0, d0, d1, d2, d3, s0, s1, s2, s3)
			}
		} else {
			a[0][0], a[1][0], a[2][0], a[3][0] = r32(u0), r32(u1), r32(u2), r32(u3)
		}
		w0, w1, w2, w3 = int64(int8(wb[6])), int64(int8(wb[7])), int64(int8(wb[8])), int64(int8(wb[9]))
		s0, s1 = split2(w0*q01[4] + w1*q01[5] + w2*q01[6] + w3*q01[7])
		s2, s3 = split2(w0*q23[4] + w1*q23[5] + w2*q23[6] + w3*q23[7])
		v0, v1, v2, v3 = d0*float64(s0)+a[0][1], d1*float64(s1)+a[1][1], d2*float64(s2)+a[2][1], d3*float64(s3)+a[3][1]
		u0, u1, u2, u3 = r32Bits(v0), r32Bits(v1), r32Bits(v2), r32Bits(v3)
		if u0&r32Low == 0 || u1&r32Low == 0 || u2&r32Low == 0 || u3&r32Low == 0 {
			if exact48(v0) && exact48(v1) && exact48(v2) && exact48(v3) {
				a[0][1], a[1][1], a[2][1], a[3][1] = float64(float32(v0)), float64(float32(v1)), float64(float32(v2)), float64(float32(v3))
			} else {
				q8FMA4(&a, 1, d0, d1, d2, d3, s0, s1, s2, s3)
			}
		} else {
			a[0][1], a[1][1], a[2][1], a[3][1] = r32(u0), r32(u1), r32(u2), r32(u3)
		}
		w0, w1, w2, w3 = int64(int8(wb[10])), int64(int8(wb[11])), int64(int8(wb[12])), int64(int8(wb[13]))
		s0, s1 = split2(w0*q01[8] + w1*q01[9] + w2*q01[10] + w3*q01[11])
		s2, s3 = split2(w0*q23[8] + w1*q23[9] + w2*q23[10] + w3*q23[11])
		v0, v1, v2, v3 = d0*float64(s0)+a[0][2], d1*float64(s1)+a[1][2], d2*float64(s2)+a[2][2], d3*float64(s3)+a[3][2]
		u0, u1, u2, u3 = r32Bits(v0), r32Bits(v1), r32Bits(v2), r32Bits(v3)
		if u0&r32Low == 0 || u1&r32Low == 0 || u2&r32Low == 0 || u3&r32Low == 0 {
			if exact48(v0) && exact48(v1) && exact48(v2) && exact48(v3) {
				a[0][2], a[1][2], a[2][2], a[3][2] = float64(float32(v0)), float64(float32(v1)), float64(float32(v2)), float64(float32(v3))
			} else {
				q8FMA4(&a, 2, d0, d1, d2, d3, s0, s1, s2, s3)
			}
		} else {
			a[0][2], a[1][2], a[2][2], a[3][2] = r32(u0), r32(u1), r32(u2), r32(u3)
		}
		w0, w1, w2, w3 = int64(int8(wb[14])), int64(int8(wb[15])), int64(int8(wb[16])), int64(int8(wb[17]))
		s0, s1 = split2(w0*q01[12] + w1*q01[13] + w2*q01[14] + w3*q01[15])
		s2, s3 = split2(w0*q23[12] + w1*q23[13] + w2*q23[14] + w3*q23[15])
		v0, v1, v2, v3 = d0*float64(s0)+a[0][3], d1*float64(s1)+a[1][3], d2*float64(s2)+a[2][3], d3*float64(s3)+a[3][3]
		u0, u1, u2, u3 = r32Bits(v0), r32Bits(v1), r32Bits(v2), r32Bits(v3)
		if u0&r32Low == 0 || u1&r32Low == 0 || u2&r32Low == 0 || u3&r32Low == 0 {
			if exact48(v0) && exact48(v1) && exact48(v2) && exact48(v3) {
				a[0][3], a[1][3], a[2][3], a[3][3] = float64(float32(v0)), float64(float32(v1)), float64(float32(v2)), float64(float32(v3))
			} else {
				q8FMA4(&a, 3, d0, d1, d2, d3, s0, s1, s2, s3)
			}
		} else {
			a[0][3], a[1][3], a[2][3], a[3][3] = r32(u0), r32(u1), r32(u2), r32(u3)
		}
		w0, w1, w2, w3 = int64(int8(wb[18])), int64(int8(wb[19])), int64(int8(wb[20])), int64(int8(wb[21]))
		s0, s1 = split2(w0*q01[16] + w1*q01[17] + w2*q01[18] + w3*q01[19])
		s2, s3 = split2(w0*q23[16] + w1*q23[17] + w2*q23[18] + w3*q23[19])
		v0, v1, v2, v3 = d0*float64(s0)+a[0][4], d1*float64(s1)+a[1][4], d2*float64(s2)+a[2][4], d3*float64(s3)+a[3][4]
		u0, u1, u2, u3 = r32Bits(v0), r32Bits(v1), r32Bits(v2), r32Bits(v3)
		if u0&r32Low == 0 || u1&r32Low == 0 || u2&r32Low == 0 || u3&r32Low == 0 {
			if exact48(v0) && exact48(v1) && exact48(v2) && exact48(v3) {
				a[0][4], a[1][4], a[2][4], a[3][4] = float64(float32(v0)), float64(float32(v1)), float64(float32(v2)), float64(float32(v3))
			} else {
				q8FMA4(&a, 4, d0, d1, d2, d3, s0, s1, s2, s3)
			}
		} else {
			a[0][4], a[1][4], a[2][4], a[3][4] = r32(u0), r32(u1), r32(u2), r32(u3)
		}
		w0, w1, w2, w3 = int64(int8(wb[22])), int64(int8(wb[23])), int64(int8(wb[24])), int64(int8(wb[25]))
		s0, s1 = split2(w0*q01[20] + w1*q01[21] + w2*q01[22] + w3*q01[23])
		s2, s3 = split2(w0*q23[20] + w1*q23[21] + w2*q23[22] + w3*q23[23])
		v0, v1, v2, v3 = d0*float64(s0)+a[0][5], d1*float64(s1)+a[1][5], d2*float64(s2)+a[2][5], d3*float64(s3)+a[3][5]
		u0, u1, u2, u3 = r32Bits(v0), r32Bits(v1), r32Bits(v2), r32Bits(v3)
		if u0&r32Low == 0 || u1&r32Low == 0 || u2&r32Low == 0 || u3&r32Low == 0 {
			if exact48(v0) && exact48(v1) && exact48(v2) && exact48(v3) {
				a[0][5], a[1][5], a[2][5], a[3][5] = float64(float32(v0)), float64(float32(v1)), float64(float32(v2)), float64(float32(v3))
			} else {
				q8FMA4(&a, 5, d0, d1, d2, d3, s0, s1, s2, s3)
			}
		} else {
			a[0][5], a[1][5], a[2][5], a[3][5] = r32(u0), r32(u1), r32(u2), r32(u3)
		}
		w0, w1, w2, w3 = int64(int8(wb[26])), int64(int8(wb[27])), int64(int8(wb[28])), int64(int8(wb[29]))
		s0, s1 = split2(w0*q01[24] + w1*q01[25] + w2*q01[26] + w3*q01[27])
		s2, s3 = split2(w0*q23[24] + w1*q23[25] + w2*q23[26] + w3*q23[27])
		v0, v1, v2, v3 = d0*float64(s0)+a[0][6], d1*float64(s1)+a[1][6], d2*float64(s2)+a[2][6], d3*float64(s3)+a[3][6]
		u0, u1, u2, u3 = r32Bits(v0), r32Bits(v1), r32Bits(v2), r32Bits(v3)
		if u0&r32Low == 0 || u1&r32Low == 0 || u2&r32Low == 0 || u3&r32Low == 0 {
			if exact48(v0) && exact48(v1) && exact48(v2) && exact48(v3) {
				a[0][6], a[1][6], a[2][6], a[3][6] = float64(float32(v0)), float64(float32(v1)), float64(float32(v2)), float64(float32(v3))
			} else {
				q8FMA4(&a, 6, d0, d1, d2, d3, s0, s1, s2, s3)
			}
		} else {
			a[0][6], a[1][6], a[2][6], a[3][6] = r32(u0), r32(u1), r32(u2), r32(u3)
		}
		w0, w1, w2, w3 = int64(int8(wb[30])), int64(int8(wb[31])), int64(int8(wb[32])), int64(int8(wb[33]))
		s0, s1 = split2(w0*q01[28] + w1*q01[29] + w2*q01[30] + w3*q01[31])
		s2, s3 = split2(w0*q23[28] + w1*q23[29] + w2*q23[30] + w3*q23[31])
		v0, v1, v2, v3 = d0*float64(s0)+a[0][7], d1*float64(s1)+a[1][7], d2*float64(s2)+a[2][7], d3*float64(s3)+a[3][7]
		u0, u1, u2, u3 = r32Bits(v0), r32Bits(v1), r32Bits(v2), r32Bits(v3)
		if u0&r32Low == 0 || u1&r32Low == 0 || u2&r32Low == 0 || u3&r32Low == 0 {
			if exact48(v0) && exact48(v1) && exact48(v2) && exact48(v3) {
				a[0][7], a[1][7], a[2][7], a[3][7] = float64(float32(v0)), float64(float32(v1)), float64(float32(v2)), float64(float32(v3))
			} else {
				q8FMA4(&a, 7, d0, d1, d2, d3, s0, s1, s2, s3)
			}
		} else {
			a[0][7], a[1][7], a[2][7], a[3][7] = r32(u0), r32(u1), r32(u2), r32(u3)
		}
	}
	for r := range out {
		out[r] = hsum8d(&a[r])
	}
}

// q8AsPool holds the weight rows dotAsQ8_0x86TileGo converts.
var q8AsPool = sync.Pool{New: func() any { return new([]byte) }}

// q8AsBytes bounds the weight rows dotAsQ8_0x86TileGo converts at once: for fewer than
// four activation rows, a group the first level cache keeps until the kernel reads it;
// for more, a larger one, since each group packs the activation rows again.
const (
	q8AsBytes       = 1 << 16
	q8AsBytesDecode = 1 << 13
)

// dotAsQ8_0x86TileGo is the Go tile of a type whose x86 order, one (its Go dot), is
// dotQ8_0x86Go's over levels that asQ8 writes as a Q8_0 block (Q5_0: q−16, Q4_0: u−8;
// blocks of bb bytes): weight rows converted, a group at a time, then
// dotQ8_0x86TileGo.
func dotAsQ8_0x86TileGo(asQ8 func(dst, src []byte), bb int, one func(n int, w, x []byte) float32,
	n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if nb <= 0 || mw <= 0 || mx <= 0 {
		dotTileBy(one, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	_ = w[(mw-1)*wStride+nb*bb-1]
	rb := nb * q8_0Bytes
	g := q8AsBytes
	if mx < 4 {
		g = q8AsBytesDecode
	}
	g = max(2, min(mw, g/rb)) // rows a group
	buf := q8AsPool.Get().(*[]byte)
	defer q8AsPool.Put(buf)
	if cap(*buf) < g*rb {
		*buf = make([]byte, g*rb)
	}
	c := (*buf)[:g*rb]
	for o0 := 0; o0 < mw; o0 += g {
		gr := min(g, mw-o0)
		for o := range gr {
			wo := w[(o0+o)*wStride:]
			for b := range nb {
				asQ8(c[o*rb+b*q8_0Bytes:], wo[b*bb:])
			}
		}
		dotQ8_0x86TileGo(n, c, rb, gr, x, xStride, mx, dst[o0:], dstStride)
	}
}

// q4_1XPool holds dotQ4_1x86TileGo's activation rows converted to Q8_0 blocks.
var q4_1XPool = sync.Pool{New: func() any { return new([]byte) }}

// dotQ4_1x86TileGo is X86DotTileFunc(Q4_1) in Go: dotQ4_1x86Go is hsum_float_8 of
// dotQ8_0x86Go's lanes over the levels 0..15 (q4_1AsQ8) against the Q8_1 quants, plus
// summs, the float32 sum of mw·sx block after block. The activation rows are converted
// to Q8_0 blocks (dx and the quants) for dotAsQ8_0x86TileGo; summs is added after.
func dotQ4_1x86TileGo(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if nb <= 0 || mw <= 0 || mx <= 0 {
		dotTileBy(dotQ4_1x86Go, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	_, _ = w[(mw-1)*wStride+nb*q4_1Bytes-1], x[(mx-1)*xStride+nb*q8_1Bytes-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	rb := nb * q8_0Bytes
	buf := q4_1XPool.Get().(*[]byte)
	defer q4_1XPool.Put(buf)
	if cap(*buf) < mx*rb {
		*buf = make([]byte, mx*rb)
	}
	xq := (*buf)[:mx*rb]
	for i := range mx {
		for b := range nb {
			xb, cb := x[i*xStride+b*q8_1Bytes:], xq[i*rb+b*q8_0Bytes:]
			cb[0], cb[1] = xb[0], xb[1]
			copy(cb[2:q8_0Bytes], xb[4:q8_1Bytes])
		}
	}
	dotAsQ8_0x86TileGo(q4_1AsQ8, q4_1Bytes, dotQ4_1x86Go, n, w, wStride, mw, xq, rb, mx, dst, dstStride)
	for i := range mx {
		for o := range mw {
			wo, xi := w[o*wStride:], x[i*xStride:]
			var summs float32
			for b := range nb {
				summs += float32(halfAt(wo[b*q4_1Bytes+2:]) * halfAt(xi[b*q8_1Bytes+2:])) // exact product
			}
			dst[i*dstStride+o] += summs
		}
	}
}

// dotQ5_0x86TileGo is X86DotTileFunc(Q5_0) in Go (dotAsQ8_0x86TileGo).
func dotQ5_0x86TileGo(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotAsQ8_0x86TileGo(q5_0AsQ8, q5_0Bytes, dotQ5_0x86Go, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// dotQ4_0x86TileGo is X86DotTileFunc(Q4_0) in Go (dotAsQ8_0x86TileGo).
func dotQ4_0x86TileGo(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotAsQ8_0x86TileGo(q4_0AsQ8, q4_0Bytes, dotQ4_0x86Go, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// sext5 sign-extends the 5-bit two's complement values in the bytes of v.
func sext5(v uint64) uint64 { return v | (v>>4&swarLSB)*0xE0 }

// sext4 sign-extends the 4-bit two's complement values in the bytes of v.
func sext4(v uint64) uint64 { return v | (v>>3&swarLSB)*0xF0 }

// q5_0AsQ8 writes the Q5_0 block src as a Q8_0 block of its levels q−16.
func q5_0AsQ8(dst, src []byte) {
	d, b := (*[q8_0Bytes]byte)(dst), (*[q5_0Bytes]byte)(src)
	d[0], d[1] = b[0], b[1]
	qh := uint32(b[2]) | uint32(b[3])<<8 | uint32(b[4])<<16 | uint32(b[5])<<24
	l0, l1 := le64(b[6:14]), le64(b[14:22])
	t := spreadBits
	const h = 0x1010101010101010
	putLE64(d[2:], sext5((l0&swarNib|t[uint8(qh)]<<4)^h))
	putLE64(d[10:], sext5((l1&swarNib|t[uint8(qh>>8)]<<4)^h))
	putLE64(d[18:], sext5(((l0>>4)&swarNib|t[uint8(qh>>16)]<<4)^h))
	putLE64(d[26:], sext5(((l1>>4)&swarNib|t[uint8(qh>>24)]<<4)^h))
}

// q4_0AsQ8 writes the Q4_0 block src as a Q8_0 block of its levels u−8.
func q4_0AsQ8(dst, src []byte) {
	d, b := (*[q8_0Bytes]byte)(dst), (*[q4_0Bytes]byte)(src)
	d[0], d[1] = b[0], b[1]
	l0, l1 := le64(b[2:10]), le64(b[10:18])
	const h = 0x0808080808080808
	putLE64(d[2:], sext4((l0&swarNib)^h))
	putLE64(d[10:], sext4((l1&swarNib)^h))
	putLE64(d[18:], sext4(((l0>>4)&swarNib)^h))
	putLE64(d[26:], sext4(((l1>>4)&swarNib)^h))
}

// q4_1AsQ8 writes the Q4_1 block src as a Q8_0 block of its levels (0..15) with dw.
func q4_1AsQ8(dst, src []byte) {
	d, b := (*[q8_0Bytes]byte)(dst), (*[q4_1Bytes]byte)(src)
	d[0], d[1] = b[0], b[1]
	l0, l1 := le64(b[4:12]), le64(b[12:20])
	putLE64(d[2:], l0&swarNib)
	putLE64(d[10:], l1&swarNib)
	putLE64(d[18:], (l0>>4)&swarNib)
	putLE64(d[26:], (l1>>4)&swarNib)
}
