package tensor

import "unsafe"

// uint16s views b (little-endian 16-bit data) as a []uint16 of n elements without copying.
func uint16s(b []byte, n int) []uint16 {
	if n == 0 {
		return nil
	}
	_ = b[2*n-1]
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n)
}

// dequantizeF16 is ggml_fp16_to_fp32_row.
func dequantizeF16(dst []float32, src []byte) {
	h := uint16s(src, len(dst))
	for i := range dst {
		dst[i] = f16Table[h[i]]
	}
}

// quantizeF16 is ggml_fp32_to_fp16_row: round to nearest even, element by element.
func quantizeF16(dst []byte, src []float32) {
	h := uint16s(dst, len(src))
	for i, v := range src {
		h[i] = F32ToF16(v)
	}
}

// dequantizeBF16 is ggml_bf16_to_fp32_row.
func dequantizeBF16(dst []float32, src []byte) {
	h := uint16s(src, len(dst))
	for i := range dst {
		dst[i] = BF16ToF32(h[i])
	}
}

// quantizeBF16 is ggml_fp32_to_bf16_row_ref.
func quantizeBF16(dst []byte, src []float32) {
	h := uint16s(dst, len(src))
	for i, v := range src {
		h[i] = F32ToBF16(v)
	}
}

// dotF16Go is ggml_vec_dot_f16: both rows are converted to float32 and the products summed
// in float32 over 8 lanes, the lanes then added pairwise, the tail last. The explicit
// float32 conversions keep the compiler from fusing multiply and add, so every
// architecture gives the same bits.
func dotF16Go(n int, w, x []byte) float32 {
	a, b := uint16s(w, n), uint16s(x, n)
	t := f16Table
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		a8, b8 := (*[8]uint16)(a[i:]), (*[8]uint16)(b[i:])
		s0 += float32(t[a8[0]] * t[b8[0]])
		s1 += float32(t[a8[1]] * t[b8[1]])
		s2 += float32(t[a8[2]] * t[b8[2]])
		s3 += float32(t[a8[3]] * t[b8[3]])
		s4 += float32(t[a8[4]] * t[b8[4]])
		s5 += float32(t[a8[5]] * t[b8[5]])
		s6 += float32(t[a8[6]] * t[b8[6]])
		s7 += float32(t[a8[7]] * t[b8[7]])
	}
	sum := ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
	for ; i < n; i++ {
		sum += float32(t[a[i]] * t[b[i]])
	}
	return sum
}

// dotBF16Go is ggml_vec_dot_bf16 with the same 8-lane float32 summation as dotF16Go.
func dotBF16Go(n int, w, x []byte) float32 {
	a, b := uint16s(w, n), uint16s(x, n)
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		a8, b8 := (*[8]uint16)(a[i:]), (*[8]uint16)(b[i:])
		s0 += float32(BF16ToF32(a8[0]) * BF16ToF32(b8[0]))
		s1 += float32(BF16ToF32(a8[1]) * BF16ToF32(b8[1]))
		s2 += float32(BF16ToF32(a8[2]) * BF16ToF32(b8[2]))
		s3 += float32(BF16ToF32(a8[3]) * BF16ToF32(b8[3]))
		s4 += float32(BF16ToF32(a8[4]) * BF16ToF32(b8[4]))
		s5 += float32(BF16ToF32(a8[5]) * BF16ToF32(b8[5]))
		s6 += float32(BF16ToF32(a8[6]) * BF16ToF32(b8[6]))
		s7 += float32(BF16ToF32(a8[7]) * BF16ToF32(b8[7]))
	}
	sum := ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
	for ; i < n; i++ {
		sum += float32(BF16ToF32(a[i]) * BF16ToF32(b[i]))
	}
	return sum
}

// DotBF16F32 is the dot product of n BF16 weights w with n F32 activations x, summed in 8
// float32 lanes like the other float dots. llama.cpp rounds activations to BF16 before
// multiplying BF16 weights; keeping them F32 is exact in the products, and lets the CPU
// and CUDA backends (whose GEMM runs in F32) agree to float32 summation order.
func DotBF16F32(n int, w, x []byte) float32 { return dotBF16F32(n, w, x) }

// dotBF16F32Go is DotBF16F32's Go code.
func dotBF16F32Go(n int, w, x []byte) float32 {
	a, b := uint16s(w, n), Float32s(x)[:n]
	var s [8]float32
	i := 0
	for ; i+8 <= n; i += 8 {
		a8, b8 := (*[8]uint16)(a[i:]), (*[8]float32)(b[i:])
		for l := range s {
			s[l] += float32(BF16ToF32(a8[l]) * b8[l])
		}
	}
	sum := ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]))
	for ; i < n; i++ {
		sum += float32(BF16ToF32(a[i]) * b[i])
	}
	return sum
}
