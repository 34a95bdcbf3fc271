package tensor

import "math"

// Block layouts (little-endian, as in ggml-common.h):
//
//	Q8_0: d f16 | qs [32]int8              x = d*q
//	Q8_1: d f16 | s f16 | qs [32]int8      x = d*q, s = d*sum(q)
const (
	q8_0Bytes = 2 + QK
	q8_1Bytes = 4 + QK
)

// dequantizeQ8_0 is dequantize_row_q8_0.
func dequantizeQ8_0(dst []float32, src []byte) {
	for ib := 0; ib < len(dst)/QK; ib++ {
		b := (*[q8_0Bytes]byte)(src[ib*q8_0Bytes:])
		y := (*[QK]float32)(dst[ib*QK:])
		d := halfAt(b[:])
		for j := range y {
			y[j] = float32(int8(b[2+j])) * d
		}
	}
}

// dequantizeQ8_1 decodes the quants; the sum field s is redundant and ignored.
func dequantizeQ8_1(dst []float32, src []byte) {
	for ib := 0; ib < len(dst)/QK; ib++ {
		b := (*[q8_1Bytes]byte)(src[ib*q8_1Bytes:])
		y := (*[QK]float32)(dst[ib*QK:])
		d := halfAt(b[:])
		for j := range y {
			y[j] = float32(int8(b[4+j])) * d
		}
	}
}

// absMax is the largest |x[j]| the way ggml's MAX(amax, fabsf(v)) finds it (a NaN
// propagates).
func absMax(x *[QK]float32) float32 {
	var amax float32
	for _, v := range x {
		if a := abs32(v); !(amax > a) {
			amax = a
		}
	}
	return amax
}

// scale8 returns d = amax/127 and its inverse (0 when d is 0), as quantize_row_q8_0_ref.
func scale8(x *[QK]float32) (d, id float32) {
	d = absMax(x) / ((1 << 7) - 1)
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// round8 is roundf(v) stored to an int8_t: half away from zero, then truncated to 8 bits.
func round8(v float32) byte {
	return byte(int32(math.Round(float64(v))))
}

// quantizeQ8_0 is quantize_row_q8_0_ref.
func quantizeQ8_0(dst []byte, src []float32) {
	for ib := 0; ib < len(src)/QK; ib++ {
		x := (*[QK]float32)(src[ib*QK:])
		b := (*[q8_0Bytes]byte)(dst[ib*q8_0Bytes:])
		d, id := scale8(x)
		putHalf(b[:], d)
		for j, v := range x {
			b[2+j] = round8(float32(v * id))
		}
	}
}

// quantizeQ8_1 is quantize_row_q8_1_ref, including s = fp16(d*sum(q)).
func quantizeQ8_1(dst []byte, src []float32) {
	for ib := 0; ib < len(src)/QK; ib++ {
		x := (*[QK]float32)(src[ib*QK:])
		b := (*[q8_1Bytes]byte)(dst[ib*q8_1Bytes:])
		d, id := scale8(x)
		putHalf(b[:], d)
		var sum int32
		for j, v := range x {
			q := round8(float32(v * id))
			b[4+j] = q
			sum += int32(int8(q))
		}
		putHalf(b[2:], float32(sum)*d)
	}
}

// dotQ8_0Go is ggml_vec_dot_q8_0_q8_0: an exact integer sum per block, then
// sumf += sumi*(dw*dx) in float32.
func dotQ8_0Go(n int, w, x []byte) float32 { return dotQ8_0From(0, 0, n, w, x) }

// dotQ8_0From continues dotQ8_0Go's sum sumf from block ib on.
func dotQ8_0From(sumf float32, ib, n int, w, x []byte) float32 {
	for ; ib < n/QK; ib++ {
		wb := (*[q8_0Bytes]byte)(w[ib*q8_0Bytes:])
		xb := (*[q8_0Bytes]byte)(x[ib*q8_0Bytes:])
		sumi := dotI8((*[QK]byte)(wb[2:]), (*[QK]byte)(xb[2:]))
		sumf += float32(float32(sumi) * float32(halfAt(wb[:])*halfAt(xb[:])))
	}
	return sumf
}

// dotI8 is the exact sum of a[j]*b[j] over 32 int8 pairs. It is unrolled so that every
// load has a constant offset and no bounds check.
func dotI8(a, b *[QK]byte) int32 {
	s0 := mul8(a[0], b[0]) + mul8(a[1], b[1]) + mul8(a[2], b[2]) + mul8(a[3], b[3]) +
		mul8(a[4], b[4]) + mul8(a[5], b[5]) + mul8(a[6], b[6]) + mul8(a[7], b[7])
	s1 := mul8(a[8], b[8]) + mul8(a[9], b[9]) + mul8(a[10], b[10]) + mul8(a[11], b[11]) +
		mul8(a[12], b[12]) + mul8(a[13], b[13]) + mul8(a[14], b[14]) + mul8(a[15], b[15])
	s2 := mul8(a[16], b[16]) + mul8(a[17], b[17]) + mul8(a[18], b[18]) + mul8(a[19], b[19]) +
		mul8(a[20], b[20]) + mul8(a[21], b[21]) + mul8(a[22], b[22]) + mul8(a[23], b[23])
	s3 := mul8(a[24], b[24]) + mul8(a[25], b[25]) + mul8(a[26], b[26]) + mul8(a[27], b[27]) +
		mul8(a[28], b[28]) + mul8(a[29], b[29]) + mul8(a[30], b[30]) + mul8(a[31], b[31])
	return (s0 + s1) + (s2 + s3)
}

// mul8 is the product of two bytes read as int8.
func mul8(a, b byte) int32 { return int32(int8(a)) * int32(int8(b)) }
