package tensor

// Q8_K: the activation format of the k-quant dot products. A block holds 256 values
// as int8 quants with one float32 scale, plus the sum of every 16 quants (bsums),
// which the dot products use to apply the weights' per-sub-block minimums.
//
//	block_q8_K (292 bytes): d float32 @0 | qs [256]int8 @4 | bsums [16]int16 @260

import (
	"encoding/binary"
	"math"
)

const (
	q8KBytes    = 4 + QKK + QKK/16*2
	q8KQs       = 4
	q8KBsums    = 4 + QKK
	q8KBsumsLen = QKK / 16
)

// dequantizeQ8K is dequantize_row_q8_K: y = d·q.
func dequantizeQ8K(dst []float32, src []byte) {
	for i := 0; i < len(dst)/QKK; i++ {
		b := src[i*q8KBytes : (i+1)*q8KBytes]
		d := math.Float32frombits(binary.LittleEndian.Uint32(b))
		y := dst[i*QKK : (i+1)*QKK]
		qs := b[q8KQs : q8KQs+QKK]
		for j := range y {
			y[j] = d * float32(int8(qs[j]))
		}
	}
}

// quantizeQ8K is quantize_row_q8_K_ref: per block, iscale = -127/max where max is the
// signed value of largest magnitude, q = min(127, nearest_int(iscale·x)), d = 1/iscale,
// and bsums are the sums of each 16 quants. An all-zero block gets d = 0 and zero
// quants and sums.
func quantizeQ8K(dst []byte, src []float32) {
	for i := 0; i < len(src)/QKK; i++ {
		b, x := dst[i*q8KBytes:(i+1)*q8KBytes], src[i*QKK:(i+1)*QKK]
		if !quantizeBlockQ8KFast(b, x) {
			quantizeBlockQ8K(b, x)
		}
	}
}

func quantizeBlockQ8K(b []byte, x []float32) {
	var mx, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, mx = ax, v
		}
	}
	qs := b[q8KQs : q8KQs+QKK]
	if amax == 0 {
		clear(b)
		return
	}
	iscale := -127 / mx
	for j, v := range x {
		qs[j] = byte(int8(min(127, kNearestInt(float32(iscale*v)))))
	}
	for j := range q8KBsumsLen {
		sum := int32(0)
		for _, q := range qs[16*j : 16*j+16] {
			sum += int32(int8(q))
		}
		binary.LittleEndian.PutUint16(b[q8KBsums+2*j:], uint16(int16(sum)))
	}
	binary.LittleEndian.PutUint32(b, math.Float32bits(1/iscale))
}

// q8KScale returns the float32 scale d of a Q8_K block.
func q8KScale(a *[q8KBytes]byte) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(a[:4]))
}

// q8KBsum returns bsums[j] of a Q8_K block.
func q8KBsum(a *[q8KBytes]byte, j int) int32 {
	return int32(int16(binary.LittleEndian.Uint16(a[q8KBsums+2*j:])))
}
