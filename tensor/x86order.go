package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// llama.cpp's x86 CPU backend does not convert activations with the reference
// quantizers: the from_float of Q8_0 and Q8_1 is the AVX2 quantize_row_q8_0/q8_1 of
// ggml-cpu/arch/x86/quants.c, which scales by id = 127/amax and rounds half to even
// (quantize_row_*_ref multiplies by 1/(amax/127) and rounds half away from zero), so a
// quant can be one step off the reference one. Its Q8_0·Q8_0 and Q5_0·Q8_0 dot products
// (ggml_vec_dot_q{8,5}_0_q8_0 AVX2, and tinyBLAS_Q0_AVX for batches) also add in another
// order than the generic vec_dot: each block gives eight exact int32 partial sums of
// four consecutive products, converted to float32 and fused-multiply-added with the
// block scale dw·dx into eight float32 lanes, reduced at the end as hsum_float_8. This
// file holds the Go code of both; the amd64 kernels (x86order_amd64.s) give its bits.

// QuantizeActivations converts src to t the way llama.cpp's x86 CPU backend converts
// activations before a matmul (the from_float of t): for Q8_0 and Q8_1 the AVX2
// quantize_row_q8_0/q8_1, for every other type (Q8_K, F16, BF16, F32) the bytes of
// Quantize, which on x86 are the same.
func QuantizeActivations(t DType, dst []byte, src []float32) error {
	if err := checkLen("quantize activations", t, len(src), len(dst)); err != nil {
		return err
	}
	f, err := ActivationQuantizer(t)
	if err != nil {
		return err
	}
	f(dst, src)
	return nil
}

// ActivationQuantizer returns QuantizeActivations's conversion to t without its length
// checks, for hot loops: dst must hold t.RowBytes(len(src)) bytes and len(src) be a
// multiple of t.BlockSize().
func ActivationQuantizer(t DType) (func(dst []byte, src []float32), error) {
	tr := t.traits()
	switch {
	case tr == nil:
		return nil, fmt.Errorf("tensor: quantize activations: unknown type %v", t)
	case tr.fromFloat != nil:
		return tr.fromFloat, nil
	case tr.quantize != nil:
		return tr.quantize, nil
	}
	return nil, fmt.Errorf("tensor: quantize activations %v: not supported", t)
}

// X86DotFunc returns the dot product of a weight row of type t with activations of type
// t.VecDotType() in the float32 order of llama.cpp's x86 AVX2 vec_dot (eight lanes,
// one FMA per block, hsum_float_8), or nil where t has none here: there is one for Q8_0,
// Q5_0, Q4_0, Q4_1, Q5_K and Q6_K (x86repack.go; Q5_1's, dotQ5_1x86Go, is written but
// not returned: it moves stories260K-Q5_1's perplexity past the 0.1% its test allows).
// Its results differ from DotFunc(t)'s in the last bits.
func X86DotFunc(t DType) func(n int, w, x []byte) float32 {
	if tr := t.traits(); tr != nil {
		return tr.dotX86
	}
	return nil
}

// X86DotTileFunc returns, for the types of X86DotFunc (nil for the others), the function
// computing a tile of a matrix product with X86DotFunc(t)'s bits: for o < mw and i < mx,
//
//	dst[i*dstStride+o] = X86DotFunc(t)(n, w[o*wStride:], x[i*xStride:])
//
// It takes several weight or activation rows at once, which is faster than one dot
// after another.
func X86DotTileFunc(t DType) func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if tr := t.traits(); tr != nil {
		return tr.dotTileX86
	}
	return nil
}

// dotTileBy is the plain loop of the X86DotTileFunc functions over one-row dot f.
func dotTileBy(f func(n int, w, x []byte) float32, n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	for i := 0; i < mx; i++ {
		for o := 0; o < mw; o++ {
			dst[i*dstStride+o] = f(n, w[o*wStride:], x[i*xStride:])
		}
	}
}

// lanes8 is the number of float32 lanes of an AVX2 register.
const lanes8 = 8

// Fmaf is C's fmaf, a·b+c rounded once to float32 (fmaf), for the Go kernels of other
// packages; they inline its common case as
//
//	if v := float64(a)*float64(b) + float64(c); !FmafHard(v) {
//		r = float32(v)
//	} else {
//		r = FmafTie(a, b, c)
//	}
func Fmaf(a, b, c float32) float32 { return fmaf(a, b, c) }

// FmafHard is fmafHard: whether the float64 sum v of an exact product and a float32 may
// round to float32 otherwise than the exact sum.
func FmafHard(v float64) bool { return fmafHard(v) }

// FmafTie is fmafTie: Fmaf where FmafHard holds for the float64 sum.
func FmafTie(a, b, c float32) float32 { return fmafTie(a, b, c) }

// fmaf is C's fmaf: a·b+c rounded once to float32. The product is exact in float64 and
// the float64 sum s rounds it once; rounding s to float32 is then right except where s
// lies exactly halfway between two float32s (for a normal float32 result: the low 29
// bits of its float64 significand are 1<<28), which fmafTie settles.
func fmaf(a, b, c float32) float32 {
	s := float64(a)*float64(b) + float64(c)
	if fmafHard(s) {
		return fmafTie(a, b, c)
	}
	return float32(s)
}

// fmafHard reports whether v, the float64 sum of an exact product and a float32, may
// round to float32 otherwise than fmaf would: v lies halfway between two float32s
// (the low 29 bits of its significand are 1<<28), or 0 < |v| < 2^-126 (fmafTie).
func fmafHard(v float64) bool {
	u := math.Float64bits(v)
	return uint32(u)&(1<<29-1) == 1<<28 || u<<1-1 < (1023-126)<<53-1
}

// fmafTie is fmaf where s may be a tie or the result is not a normal float32: the
// float64 sum is rounded to odd (where it is inexact and its last bit even, it moves one
// step towards the exact sum, whose error TwoSum gives), which then rounds to float32,
// subnormals included, as the exact sum does (53 bits are more than 24 + 1). NaNs and
// infinities are left as the float64 sum has them.
func fmafTie(a, b, c float32) float32 {
	p, z := float64(a)*float64(b), float64(c)
	s := p + z
	bz := s - p
	e := (p - (s - bz)) + (z - bz) // p + z = s + e exactly
	if u := math.Float64bits(s); u&1 == 0 && (e > 0 || e < 0) && !math.IsInf(s, 0) {
		if (e > 0) == (s > 0) {
			u++
		} else {
			u--
		}
		s = math.Float64frombits(u)
	}
	return float32(s)
}

// fma8 sets acc[l] = fmaf(d, float32(s[l]), acc[l]) for the eight lanes: the eight
// float64 sums, then one test whether any of them is a case of fmafTie (fmaf's rare
// ones), which then takes the lanes that are (fma8Hard).
func fma8(acc *[lanes8]float32, d float32, s *[lanes8]int32) {
	dd := float64(d)
	v0 := dd*float64(s[0]) + float64(acc[0])
	v1 := dd*float64(s[1]) + float64(acc[1])
	v2 := dd*float64(s[2]) + float64(acc[2])
	v3 := dd*float64(s[3]) + float64(acc[3])
	v4 := dd*float64(s[4]) + float64(acc[4])
	v5 := dd*float64(s[5]) + float64(acc[5])
	v6 := dd*float64(s[6]) + float64(acc[6])
	v7 := dd*float64(s[7]) + float64(acc[7])
	if fmafHard(v0) || fmafHard(v1) || fmafHard(v2) || fmafHard(v3) ||
		fmafHard(v4) || fmafHard(v5) || fmafHard(v6) || fmafHard(v7) {
		fma8Hard(acc, d, s, &[lanes8]float64{v0, v1, v2, v3, v4, v5, v6, v7})
		return
	}
	acc[0], acc[1], acc[2], acc[3] = float32(v0), float32(v1), float32(v2), float32(v3)
	acc[4], acc[5], acc[6], acc[7] = float32(v4), float32(v5), float32(v6), float32(v7)
}

// fma8Hard is fma8 given the float64 sums v: fmafTie for the lanes whose sum is one of
// its cases, the sum rounded for the others (fmaf lane by lane).
func fma8Hard(acc *[lanes8]float32, d float32, s *[lanes8]int32, v *[lanes8]float64) {
	for l := range acc {
		if fmafHard(v[l]) {
			acc[l] = fmafTie(d, float32(s[l]), acc[l])
		} else {
			acc[l] = float32(v[l])
		}
	}
}

// hsum8 is hsum_float_8: lanes l and l+4 added, then (0+2)+(1+3).
func hsum8(acc *[lanes8]float32) float32 {
	var t [4]float32
	for i := range t {
		t[i] = acc[i+4] + acc[i]
	}
	return (t[0] + t[2]) + (t[1] + t[3])
}

// dotQ8_0x86Go is ggml_vec_dot_q8_0_q8_0 (AVX2): lane l of the accumulator gets
// fmaf(dw·dx, Σ_{k<4} w[4l+k]·x[4l+k], lane) block after block.
func dotQ8_0x86Go(n int, w, x []byte) float32 {
	var acc [lanes8]float32
	var s [lanes8]int32
	for ib := 0; ib < n/QK; ib++ {
		wb := (*[q8_0Bytes]byte)(w[ib*q8_0Bytes:])
		xb := (*[q8_0Bytes]byte)(x[ib*q8_0Bytes:])
		// Eight quants a load, lane by lane (faster in Go than 64 byte loads, which the
		// compiler hoists and spills).
		for k := 0; k < 4; k++ {
			a, b := le64(wb[2+8*k:]), le64(xb[2+8*k:])
			s[2*k] = lane8(a, b)
			s[2*k+1] = lane8(a>>32, b>>32)
		}
		fma8(&acc, float32(halfAt(wb[:])*halfAt(xb[:])), &s)
	}
	return hsum8(&acc)
}

// lane8 is Σ_{k<4} a_k·b_k over the low four bytes of a and b as int8.
func lane8(a, b uint64) int32 {
	return int32(int8(a))*int32(int8(b)) + int32(int8(a>>8))*int32(int8(b>>8)) +
		int32(int8(a>>16))*int32(int8(b>>16)) + int32(int8(a>>24))*int32(int8(b>>24))
}

// dotQ5_0x86Go is ggml_vec_dot_q5_0_q8_0 (AVX2), in dotQ8_0x86Go's order over the
// quants q-16.
func dotQ5_0x86Go(n int, w, x []byte) float32 {
	var acc [lanes8]float32
	var q [QK]uint8
	for ib := 0; ib < n/QK; ib++ {
		wb := (*[q5_0Bytes]byte)(w[ib*q5_0Bytes:])
		xb := (*[q8_0Bytes]byte)(x[ib*q8_0Bytes:])
		fives32(binary.LittleEndian.Uint32(wb[2:]), (*[QK / 2]byte)(wb[6:]), &q)
		s := quadLanes(&q, (*[QK]byte)(xb[2:]), 16)
		fma8(&acc, float32(halfAt(wb[:])*halfAt(xb[:])), &s)
	}
	return hsum8(&acc)
}

// maxps is one lane of MAXPS: a if a > b, else b (so b when either is a NaN).
func maxps(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

// absMaxX86 is the block maximum of |x| as quantize_row_q8_0 (AVX2) finds it: eight
// lanes l take the maximum over x[l+8i], then the halves, pairs and the last two lanes
// are combined, each MAXPS in the intrinsics' operand order (which decides only where
// NaNs go).
//
// Without NaNs the order does not matter: the magnitudes' bits compare as the values do,
// and the largest is taken in integers, without branches; a block with a NaN takes the
// lanes (absMaxX86Lanes).
func absMaxX86(x *[QK]float32) float32 {
	var m0, m1, m2, m3 uint32
	for i := 0; i < QK; i += 4 {
		m0 = max(m0, math.Float32bits(x[i])&0x7fffffff)
		m1 = max(m1, math.Float32bits(x[i+1])&0x7fffffff)
		m2 = max(m2, math.Float32bits(x[i+2])&0x7fffffff)
		m3 = max(m3, math.Float32bits(x[i+3])&0x7fffffff)
	}
	if m := max(m0, m1, m2, m3); m <= 0x7f800000 {
		return math.Float32frombits(m)
	}
	return absMaxX86Lanes(x)
}

// absMaxX86Lanes is absMaxX86 lane by lane as the intrinsics take it.
func absMaxX86Lanes(x *[QK]float32) float32 {
	var m [lanes8]float32
	for l := range m {
		m[l] = maxps(maxps(maxps(abs32(x[l]), abs32(x[l+8])), abs32(x[l+16])), abs32(x[l+24]))
	}
	var m4 [4]float32
	for l := range m4 {
		m4[l] = maxps(m[l+4], m[l])
	}
	m4[0], m4[1] = maxps(m4[0], m4[2]), maxps(m4[1], m4[3])
	return maxps(m4[0], m4[1])
}

// cvtps2dq is one lane of VCVTPS2DQ: v rounded half to even, int32's minimum for a NaN
// or a value out of int32's range.
func cvtps2dq(v float32) int32 {
	if !(v >= -0x1p31 && v < 0x1p31) {
		return math.MinInt32
	}
	return int32(math.RoundToEven(float64(v)))
}

// putHalfX86 stores f as F16 the way VCVTPS2PH does: F32ToF16's bits, except that a NaN
// keeps its sign and the top of its payload.
func putHalfX86(b []byte, f float32) {
	h := F32ToF16(f)
	if f != f {
		u := math.Float32bits(f)
		h = uint16(u>>16)&0x8000 | 0x7e00 | uint16(u>>13)&0x3ff
	}
	b[0], b[1] = byte(h), byte(h>>8)
}

// sat8 is the saturating packs of an int32 to int8 (VPACKSSDW, then VPACKSSWB).
func sat8(q int32) byte { return byte(int8(min(127, max(-128, q)))) }

// scaleX86 returns d = amax/127 and id = 127/amax (0 when amax is 0), as the AVX2
// quantize_row_q8_0 computes them.
func scaleX86(x *[QK]float32) (d, id float32) {
	amax := absMaxX86(x)
	d = amax / 127
	if amax != 0 {
		id = 127 / amax
	}
	return d, id
}

// quantizeQ8_0x86Go is quantize_row_q8_0 (AVX2): q = round-half-even(x·id).
func quantizeQ8_0x86Go(dst []byte, src []float32) {
	for ib := 0; ib < len(src)/QK; ib++ {
		x := (*[QK]float32)(src[ib*QK:])
		b := (*[q8_0Bytes]byte)(dst[ib*q8_0Bytes:])
		d, id := scaleX86(x)
		putHalfX86(b[:], d)
		for j, v := range x {
			b[2+j] = sat8(cvtps2dq(float32(v * id)))
		}
	}
}

// quantizeQ8_1x86Go is quantize_row_q8_1 (AVX2): quantizeQ8_0x86Go's quants and
// s = fp16(d·Σq), the sum taken before the packs saturate.
func quantizeQ8_1x86Go(dst []byte, src []float32) {
	for ib := 0; ib < len(src)/QK; ib++ {
		x := (*[QK]float32)(src[ib*QK:])
		b := (*[q8_1Bytes]byte)(dst[ib*q8_1Bytes:])
		d, id := scaleX86(x)
		putHalfX86(b[:], d)
		var sum int32
		for j, v := range x {
			q := cvtps2dq(float32(v * id))
			b[4+j] = sat8(q)
			sum += q
		}
		putHalfX86(b[2:], float32(d*float32(sum)))
	}
}
