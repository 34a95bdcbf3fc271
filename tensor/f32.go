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

// dotF32 accumulates in float32, in 8 lanes, the way the SIMD path of ggml_vec_dot_f32 sums.
func dotF32(n int, w, x []byte) float32 {
	a, b := Float32s(w)[:n], Float32s(x)[:n]
	var s [8]float32
	i := 0
	for ; i+8 <= n; i += 8 {
		s[0] += a[i] * b[i]
		s[1] += a[i+1] * b[i+1]
		s[2] += a[i+2] * b[i+2]
		s[3] += a[i+3] * b[i+3]
		s[4] += a[i+4] * b[i+4]
		s[5] += a[i+5] * b[i+5]
		s[6] += a[i+6] * b[i+6]
		s[7] += a[i+7] * b[i+7]
	}
	sum := ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]))
	for ; i < n; i++ {
		sum += a[i] * b[i]
	}
	return sum
}
