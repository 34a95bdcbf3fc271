package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/infergo/infer/tensor"
)

// The x86 build of llama.cpp that made the references converts activations with the
// AVX2 quantize_row_q8_0/q8_1 (scale by 127/amax, round half to even), not with the
// reference quantizers the tensor package implements for weights (1/(amax/127), half
// away from zero), and sums the 32-element blocks of the Q8_0 and Q5_0 dot products in
// eight float32 lanes of four elements each (ggml_vec_dot_q{8,5}_0_q8_0 AVX2;
// tinyBLAS_Q0_AVX for batches has the same order), reduced as hsum_float_8. An
// activation one ulp off moves a quant by a whole step, so both choices show in logits
// (perplexity off llama.cpp's: stories260K-Q8_0 0.16% without them, 0.007% with;
// Q5_0 0.15%, 0.04%). The other types keep the tensor package's order (for Q4_1 and
// Q5_1 the AVX2 order measured no better).

// Block sizes in bytes (ggml-common.h).
const (
	q8Bytes  = 2 + tensor.QK       // d, qs[32]
	q81Bytes = 4 + tensor.QK       // d, s, qs[32]
	q50Bytes = 2 + 4 + tensor.QK/2 // d, qh, qs[16]
	q41Bytes = 4 + tensor.QK/2     // d, m, qs[16]
	q51Bytes = 4 + 4 + tensor.QK/2 // d, m, qh, qs[16]
	q8Lanes  = 8                   // float32 lanes of an AVX2 register
	q8Group  = tensor.QK / q8Lanes // elements per lane and block
)

// quantizeActivations converts one activation row to qt as llama.cpp's x86 CPU
// backend does before a matmul.
func quantizeActivations(qt tensor.DType, dst []byte, src []float32) error {
	switch qt {
	case tensor.Q8_0:
		quantizeQ8x86(dst, src, q8Bytes, false)
		return nil
	case tensor.Q8_1:
		quantizeQ8x86(dst, src, q81Bytes, true)
		return nil
	}
	return tensor.Quantize(qt, dst, src)
}

// quantizeQ8x86 is quantize_row_q8_0 (withSum false) or quantize_row_q8_1 of
// ggml-cpu/arch/x86/quants.c: d = amax/127, q = round-half-even(x·(127/amax)), and for
// Q8_1 s = d·Σq, both stored as F16.
func quantizeQ8x86(dst []byte, src []float32, bb int, withSum bool) {
	for ib := 0; ib < len(src)/tensor.QK; ib++ {
		x := src[ib*tensor.QK : (ib+1)*tensor.QK]
		b := dst[ib*bb : (ib+1)*bb]
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		binary.LittleEndian.PutUint16(b, tensor.F32ToF16(d))
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		qs := b[bb-tensor.QK:]
		var sum int32
		for j, v := range x {
			q := int32(math.RoundToEven(float64(v * id)))
			qs[j] = byte(int8(q))
			sum += q
		}
		if withSum {
			binary.LittleEndian.PutUint16(b[2:], tensor.F32ToF16(d*float32(sum)))
		}
	}
}

// lanesDot accumulates one block into the eight lanes: lane l gets
// fma(scale, Σ_{k<4} w[4l+k]·x[4l+k], lane).
func lanesDot(acc *[q8Lanes]float32, scale float32, w *[tensor.QK]int8, x *[tensor.QK]byte) {
	for l := range acc {
		k := l * q8Group
		s := int32(w[k])*int32(int8(x[k])) + int32(w[k+1])*int32(int8(x[k+1])) +
			int32(w[k+2])*int32(int8(x[k+2])) + int32(w[k+3])*int32(int8(x[k+3]))
		acc[l] = fma32(scale, float32(s), acc[l])
	}
}

// hsum8 is hsum_float_8: (l+4) pairs, then (0+2)+(1+3).
func hsum8(acc *[q8Lanes]float32) float32 {
	var t [4]float32
	for i := range t {
		t[i] = acc[i+4] + acc[i]
	}
	return (t[0] + t[2]) + (t[1] + t[3])
}

func half(b []byte) float32 { return tensor.F16ToF32(binary.LittleEndian.Uint16(b)) }

// dotQ8_0x86 is ggml_vec_dot_q8_0_q8_0 (AVX2).
func dotQ8_0x86(n int, w, x []byte) float32 {
	var acc [q8Lanes]float32
	for ib := 0; ib < n/tensor.QK; ib++ {
		wb, xb := (*[q8Bytes]byte)(w[ib*q8Bytes:]), (*[q8Bytes]byte)(x[ib*q8Bytes:])
		lanesDot(&acc, half(wb[:])*half(xb[:]), (*[tensor.QK]int8)(unsafe.Pointer(&wb[2])), (*[tensor.QK]byte)(xb[2:]))
	}
	return hsum8(&acc)
}

// unpack5 sets q to the 32 five-bit quants of a Q5_0 block (qh bit j is element j's
// top bit; the low nibbles of qs hold elements 0-15, the high nibbles 16-31), minus off.
func unpack5(q *[tensor.QK]int8, qh uint32, qs *[tensor.QK / 2]byte, off int8) {
	for j := range tensor.QK / 2 {
		q[j] = int8(qs[j]&15|byte(qh>>j&1)<<4) - off
		q[j+16] = int8(qs[j]>>4|byte(qh>>(j+16)&1)<<4) - off
	}
}

// dotQ5_0x86 is ggml_vec_dot_q5_0_q8_0 (AVX2).
func dotQ5_0x86(n int, w, x []byte) float32 {
	var acc [q8Lanes]float32
	var q [tensor.QK]int8
	for ib := 0; ib < n/tensor.QK; ib++ {
		wb, xb := (*[q50Bytes]byte)(w[ib*q50Bytes:]), (*[q8Bytes]byte)(x[ib*q8Bytes:])
		unpack5(&q, binary.LittleEndian.Uint32(wb[2:]), (*[tensor.QK / 2]byte)(wb[6:]), 16)
		lanesDot(&acc, half(wb[:])*half(xb[:]), &q, (*[tensor.QK]byte)(xb[2:]))
	}
	return hsum8(&acc)
}
