package tensor

import "encoding/binary"

// The AVX2 Q8_K quantizer of avx2_q8k_amd64.s: quantizeBlockQ8K's bytes.

//go:noescape
func quantizeQ8KAVX2(dst *byte, src *float32) bool

// quantizeBlockQ8KFast quantizes one block with the AVX2 kernel and reports whether it
// did (false without AVX2).
func quantizeBlockQ8KFast(b []byte, x []float32) bool {
	if !hasAVX2 {
		return false
	}
	b, x = b[:q8KBytes], x[:QKK]
	if !quantizeQ8KAVX2(&b[0], &x[0]) {
		clear(b)
		return true
	}
	for j := range q8KBsumsLen {
		q := b[q8KQs+16*j:]
		s := biasedSum(biased64(q[0:8]), biased64(q[8:16]), 0, 0) - 16*128
		binary.LittleEndian.PutUint16(b[q8KBsums+2*j:], uint16(int16(s)))
	}
	return true
}
