package tensor

import "encoding/binary"

// Block layouts (little-endian, as in ggml-common.h); the low 4 bits of element j sit
// in qs as for Q4_0 and its fifth bit is bit j of qh:
//
//	Q5_0: d f16 | qh uint32 | qs [16]byte            x = d*(q-16)
//	Q5_1: d f16 | m f16 | qh uint32 | qs [16]byte    x = d*q + m
const (
	q5_0Bytes = 2 + 4 + QK/2
	q5_1Bytes = 4 + 4 + QK/2
)

// unpack5 returns the 32 five-bit quants of a block.
func unpack5(qh uint32, qs *[QK / 2]byte) (q [QK]int32) {
	for j := 0; j < QK/2; j++ {
		q[j] = int32(qs[j]&0x0F) | int32(qh>>j&1)<<4
		q[j+QK/2] = int32(qs[j]>>4) | int32(qh>>(j+QK/2)&1)<<4
	}
	return q
}

// dequantizeQ5_0 is dequantize_row_q5_0.
func dequantizeQ5_0(dst []float32, src []byte) {
	for ib := 0; ib < len(dst)/QK; ib++ {
		b := (*[q5_0Bytes]byte)(src[ib*q5_0Bytes:])
		y := (*[QK]float32)(dst[ib*QK:])
		d := halfAt(b[:])
		q := unpack5(binary.LittleEndian.Uint32(b[2:]), (*[QK / 2]byte)(b[6:]))
		for j := range y {
			y[j] = float32(q[j]-16) * d
		}
	}
}

// dequantizeQ5_1 is dequantize_row_q5_1.
func dequantizeQ5_1(dst []float32, src []byte) {
	for ib := 0; ib < len(dst)/QK; ib++ {
		b := (*[q5_1Bytes]byte)(src[ib*q5_1Bytes:])
		y := (*[QK]float32)(dst[ib*QK:])
		d, m := halfAt(b[:]), halfAt(b[2:])
		q := unpack5(binary.LittleEndian.Uint32(b[4:]), (*[QK / 2]byte)(b[8:]))
		for j := range y {
			y[j] = float32(float32(q[j])*d) + m
		}
	}
}

// pack5 stores two 5-bit quants of element j and j+16: low nibbles into qs[j], fifth
// bits into qh.
func pack5(qs []byte, qh *uint32, j int, q0, q1 byte) {
	qs[j] = q0&0x0F | (q1&0x0F)<<4
	*qh |= uint32(q0&0x10)>>4<<j | uint32(q1&0x10)>>4<<(j+QK/2)
}

// quantizeQ5_0 is quantize_row_q5_0_ref.
func quantizeQ5_0(dst []byte, src []float32) {
	for ib := 0; ib < len(src)/QK; ib++ {
		x := (*[QK]float32)(src[ib*QK:])
		b := (*[q5_0Bytes]byte)(dst[ib*q5_0Bytes:])
		d := signedMax(x) / -16
		id := inverse(d)
		putHalf(b[:], d)
		var qh uint32
		for j := 0; j < QK/2; j++ {
			x0 := float32(x[j] * id)
			x1 := float32(x[j+QK/2] * id)
			q0 := min(31, trunc8(x0+16.5))
			q1 := min(31, trunc8(x1+16.5))
			pack5(b[6:], &qh, j, byte(q0), byte(q1))
		}
		binary.LittleEndian.PutUint32(b[2:], qh)
	}
}

// quantizeQ5_1 is quantize_row_q5_1_ref (which, unlike Q4_1, does not clamp at 31).
func quantizeQ5_1(dst []byte, src []float32) {
	for ib := 0; ib < len(src)/QK; ib++ {
		x := (*[QK]float32)(src[ib*QK:])
		b := (*[q5_1Bytes]byte)(dst[ib*q5_1Bytes:])
		lo, hi := minMax(x)
		d := (hi - lo) / ((1 << 5) - 1)
		id := inverse(d)
		putHalf(b[:], d)
		putHalf(b[2:], lo)
		var qh uint32
		for j := 0; j < QK/2; j++ {
			x0 := float32(float32(x[j]-lo) * id)
			x1 := float32(float32(x[j+QK/2]-lo) * id)
			pack5(b[8:], &qh, j, byte(trunc8(x0+0.5)), byte(trunc8(x1+0.5)))
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
	}
}

// dotQ5_0Go is ggml_vec_dot_q5_0_q8_0: sumf += (dw*dx)*sumi in float32.
func dotQ5_0Go(n int, w, x []byte) float32 { return dotQ5_0From(0, 0, n, w, x) }

// dotQ5_0From continues dotQ5_0Go's sum sumf from block ib on.
func dotQ5_0From(sumf float32, ib, n int, w, x []byte) float32 {
	for ; ib < n/QK; ib++ {
		wb := (*[q5_0Bytes]byte)(w[ib*q5_0Bytes:])
		xb := (*[q8_0Bytes]byte)(x[ib*q8_0Bytes:])
		qh := binary.LittleEndian.Uint32(wb[2:])
		sumi := dotU5(qh, (*[QK / 2]byte)(wb[6:]), (*[QK]byte)(xb[2:]), 16)
		sumf += float32(float32(halfAt(wb[:])*halfAt(xb[:])) * float32(sumi))
	}
	return sumf
}

// dotQ5_1Go is ggml_vec_dot_q5_1_q8_1: sumf += (dw*dx)*sumi + mw*sx in float32.
func dotQ5_1Go(n int, w, x []byte) float32 { return dotQ5_1From(0, 0, n, w, x) }

// dotQ5_1From continues dotQ5_1Go's sum sumf from block ib on.
func dotQ5_1From(sumf float32, ib, n int, w, x []byte) float32 {
	for ; ib < n/QK; ib++ {
		wb := (*[q5_1Bytes]byte)(w[ib*q5_1Bytes:])
		xb := (*[q8_1Bytes]byte)(x[ib*q8_1Bytes:])
		qh := binary.LittleEndian.Uint32(wb[4:])
		sumi := dotU5(qh, (*[QK / 2]byte)(wb[8:]), (*[QK]byte)(xb[4:]), 0)
		dd := float32(halfAt(wb[:]) * halfAt(xb[:]))
		sumf += float32(dd*float32(sumi)) + float32(halfAt(wb[2:])*halfAt(xb[2:]))
	}
	return sumf
}

// dotU5 is the exact sum over a block of (q5-off)*y: the low nibbles are unpacked eight
// at a time into the bytes of a word and the fifth bits spread into bit 4 of each byte.
func dotU5(qh uint32, q *[QK / 2]byte, y *[QK]byte, off int32) int32 {
	l0 := binary.LittleEndian.Uint64(q[0:8])
	l1 := binary.LittleEndian.Uint64(q[8:16])
	const m = 0x0F0F0F0F0F0F0F0F
	s := spreadBits
	x0 := l0&m | s[uint8(qh)]<<4
	x1 := l1&m | s[uint8(qh>>8)]<<4
	x2 := l0>>4&m | s[uint8(qh>>16)]<<4
	x3 := l1>>4&m | s[uint8(qh>>24)]<<4
	return (dotBytes8(x0, (*[8]byte)(y[0:8]), off) + dotBytes8(x1, (*[8]byte)(y[8:16]), off)) +
		(dotBytes8(x2, (*[8]byte)(y[16:24]), off) + dotBytes8(x3, (*[8]byte)(y[24:32]), off))
}

// spreadBits maps a byte b to the word whose byte k is bit k of b; built once, never
// written again.
var spreadBits = buildSpreadBits()

func buildSpreadBits() *[256]uint64 {
	t := new([256]uint64)
	for b := range t {
		for k := range 8 {
			t[b] |= uint64(b>>k&1) << (8 * k)
		}
	}
	return t
}
