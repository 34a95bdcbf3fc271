package tensor

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// Float32s views b (little-endian float32 data, 4-byte aligned) as a []float32 without copying.
func Float32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// Float32Bytes views f as its little-endian bytes without copying.
func Float32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(f)*4)
}

func dequantizeF32(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func quantizeF32(dst []byte, src []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

// dotF32Go accumulates in float32, in 8 lanes, the way the SIMD path of ggml_vec_dot_f32
// sums; the lanes are then added pairwise and the tail last. The explicit float32
// conversions keep the compiler from fusing multiply and add on any architecture.
func dotF32Go(n int, w, x []byte) float32 {
	a, b := Float32s(w)[:n], Float32s(x)[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		a8, b8 := (*[8]float32)(a[i:]), (*[8]float32)(b[i:])
		s0 += float32(a8[0] * b8[0])
		s1 += float32(a8[1] * b8[1])
		s2 += float32(a8[2] * b8[2])
		s3 += float32(a8[3] * b8[3])
		s4 += float32(a8[4] * b8[4])
		s5 += float32(a8[5] * b8[5])
		s6 += float32(a8[6] * b8[6])
		s7 += float32(a8[7] * b8[7])
	}
	sum := ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
	for ; i < n; i++ {
		sum += float32(a[i] * b[i])
	}
	return sum
}
