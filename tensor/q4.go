package tensor

import (
	"encoding/binary"
	"math"
)

// Block layouts (little-endian, as in ggml-common.h); element j of a block is the low
// nibble of qs[j] for j < 16 and the high nibble of qs[j-16] otherwise:
//
//	Q4_0: d f16 | qs [16]byte            x = d*(q-8)
//	Q4_1: d f16 | m f16 | qs [16]byte    x = d*q + m
const (
	q4_0Bytes = 2 + QK/2
	q4_1Bytes = 4 + QK/2
)

// dequantizeQ4_0 is dequantize_row_q4_0.
func dequantizeQ4_0(dst []float32, src []byte) {
	for ib := 0; ib < len(dst)/QK; ib++ {
		b := (*[q4_0Bytes]byte)(src[ib*q4_0Bytes:])
		y := (*[QK]float32)(dst[ib*QK:])
		d := halfAt(b[:])
		for j := 0; j < QK/2; j++ {
			q := b[2+j]
			y[j] = float32(int32(q&0x0F)-8) * d
			y[j+QK/2] = float32(int32(q>>4)-8) * d
		}
	}
}

// dequantizeQ4_1 is dequantize_row_q4_1.
func dequantizeQ4_1(dst []float32, src []byte) {
	for ib := 0; ib < len(dst)/QK; ib++ {
		b := (*[q4_1Bytes]byte)(src[ib*q4_1Bytes:])
		y := (*[QK]float32)(dst[ib*QK:])
		d, m := halfAt(b[:]), halfAt(b[2:])
		for j := 0; j < QK/2; j++ {
			q := b[4+j]
			y[j] = float32(float32(q&0x0F)*d) + m
			y[j+QK/2] = float32(float32(q>>4)*d) + m
		}
	}
}

// signedMax returns the element of largest magnitude (the first one on ties), as the
// amax/max loop of quantize_row_q4_0_ref and quantize_row_q5_0_ref.
func signedMax(x *[QK]float32) float32 {
	var amax, peak float32
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax, peak = a, v
		}
	}
	return peak
}

// minMax returns the smallest and largest element, starting from ±FLT_MAX as
// quantize_row_q4_1_ref does.
func minMax(x *[QK]float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// inverse is ggml's `d ? 1.0f/d : 0.0f`.
func inverse(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

// trunc8 is C's (int8_t) conversion of a float: truncation toward zero, low 8 bits kept
// (what x86 compilers emit), widened back to int32.
func trunc8(v float32) int32 { return int32(int8(int32(v))) }

// quantizeQ4_0 is quantize_row_q4_0_ref.
func quantizeQ4_0(dst []byte, src []float32) {
	for ib := 0; ib < len(src)/QK; ib++ {
		x := (*[QK]float32)(src[ib*QK:])
		b := (*[q4_0Bytes]byte)(dst[ib*q4_0Bytes:])
		d := signedMax(x) / -8
		id := inverse(d)
		putHalf(b[:], d)
		for j := 0; j < QK/2; j++ {
			x0 := float32(x[j] * id)
			x1 := float32(x[j+QK/2] * id)
			q0 := min(15, trunc8(x0+8.5))
			q1 := min(15, trunc8(x1+8.5))
			b[2+j] = byte(q0) | byte(q1)<<4
		}
	}
}

// quantizeQ4_1 is quantize_row_q4_1_ref.
func quantizeQ4_1(dst []byte, src []float32) {
	for ib := 0; ib < len(src)/QK; ib++ {
		x := (*[QK]float32)(src[ib*QK:])
		b := (*[q4_1Bytes]byte)(dst[ib*q4_1Bytes:])
		lo, hi := minMax(x)
		d := (hi - lo) / ((1 << 4) - 1)
		id := inverse(d)
		putHalf(b[:], d)
		putHalf(b[2:], lo)
		for j := 0; j < QK/2; j++ {
			x0 := float32(float32(x[j]-lo) * id)
			x1 := float32(float32(x[j+QK/2]-lo) * id)
			q0 := min(15, trunc8(x0+0.5))
			q1 := min(15, trunc8(x1+0.5))
			b[4+j] = byte(q0) | byte(q1)<<4
		}
	}
}

// dotQ4_0Go is ggml_vec_dot_q4_0_q8_0: an exact integer sum per block, then
// sumf += sumi*dw*dx in float32, left to right.
func dotQ4_0Go(n int, w, x []byte) float32 { return dotQ4_0From(0, 0, n, w, x) }

// dotQ4_0From continues dotQ4_0Go's sum sumf from block ib on.
func dotQ4_0From(sumf float32, ib, n int, w, x []byte) float32 {
	for ; ib < n/QK; ib++ {
		wb := (*[q4_0Bytes]byte)(w[ib*q4_0Bytes:])
		xb := (*[q8_0Bytes]byte)(x[ib*q8_0Bytes:])
		sumi := dotU4((*[QK / 2]byte)(wb[2:]), (*[QK]byte)(xb[2:]), 8)
		sumf += float32(float32(float32(sumi)*halfAt(wb[:])) * halfAt(xb[:]))
	}
	return sumf
}

// dotQ4_1Go is ggml_vec_dot_q4_1_q8_1: sumf += (dw*dx)*sumi + mw*sx in float32, where
// sx = dx*sum(qx) comes from the activation block.
func dotQ4_1Go(n int, w, x []byte) float32 { return dotQ4_1From(0, 0, n, w, x) }

// dotQ4_1From continues dotQ4_1Go's sum sumf from block ib on.
func dotQ4_1From(sumf float32, ib, n int, w, x []byte) float32 {
	for ; ib < n/QK; ib++ {
		wb := (*[q4_1Bytes]byte)(w[ib*q4_1Bytes:])
		xb := (*[q8_1Bytes]byte)(x[ib*q8_1Bytes:])
		sumi := dotU4((*[QK / 2]byte)(wb[4:]), (*[QK]byte)(xb[4:]), 0)
		dd := float32(halfAt(wb[:]) * halfAt(xb[:]))
		sumf += float32(dd*float32(sumi)) + float32(halfAt(wb[2:])*halfAt(xb[2:]))
	}
	return sumf
}

// dotU4 is the exact sum over a block of (nibble-off)*y, nibbles laid out as in Q4_0.
// The 32 nibbles are unpacked eight at a time into the bytes of a word.
func dotU4(q *[QK / 2]byte, y *[QK]byte, off int32) int32 {
	l0 := binary.LittleEndian.Uint64(q[0:8])
	l1 := binary.LittleEndian.Uint64(q[8:16])
	const m = 0x0F0F0F0F0F0F0F0F
	return (dotBytes8(l0&m, (*[8]byte)(y[0:8]), off) + dotBytes8(l1&m, (*[8]byte)(y[8:16]), off)) +
		(dotBytes8(l0>>4&m, (*[8]byte)(y[16:24]), off) + dotBytes8(l1>>4&m, (*[8]byte)(y[24:32]), off))
}

// dotBytes8 is the sum over k of (byte k of v - off) * int8(y[k]).
func dotBytes8(v uint64, y *[8]byte, off int32) int32 {
	return (int32(uint8(v))-off)*int32(int8(y[0])) + (int32(uint8(v>>8))-off)*int32(int8(y[1])) +
		(int32(uint8(v>>16))-off)*int32(int8(y[2])) + (int32(uint8(v>>24))-off)*int32(int8(y[3])) +
		(int32(uint8(v>>32))-off)*int32(int8(y[4])) + (int32(uint8(v>>40))-off)*int32(int8(y[5])) +
		(int32(uint8(v>>48))-off)*int32(int8(y[6])) + (int32(uint8(v>>56))-off)*int32(int8(y[7]))
}
