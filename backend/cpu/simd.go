package cpu

import (
	"math"

	"github.com/infergo/infer/tensor"
)

// This file reproduces, lane by lane, the float32 arithmetic of the AVX-512 kernels of
// the llama.cpp build that made the reference numbers (GGML_F32_EPR 16): the order of
// every sum and every fused multiply-add. Where a model's activations are later
// rounded (to F16 in the KV cache, to Q8_0/Q8_K before a quantized matmul), a one-ulp
// difference here can move a rounded value by a whole step, so these orders decide
// whether logits agree to 1e-6 or only to 1e-2.

// lanes is the number of float32 lanes of an AVX-512 register.
const lanes = 16

// reduce16 is GCC's _mm512_reduce_add_ps: halves added pairwise (i, i+8), then
// (i, i+4), then (0+2)+(1+3). Written out with each sum's operands in that order
// (t8_i = c[i+8]+c[i], t4_i = t8_{i+4}+t8_i), so that the compiler keeps the partial
// sums in registers.
func reduce16(c *[lanes]float32) float32 {
	t0 := (c[12] + c[4]) + (c[8] + c[0])
	t1 := (c[13] + c[5]) + (c[9] + c[1])
	t2 := (c[14] + c[6]) + (c[10] + c[2])
	t3 := (c[15] + c[7]) + (c[11] + c[3])
	return (t0 + t2) + (t1 + t3)
}

// sgemmF32 is one output of llamafile's tinyBLAS<16, __m512> (llama.cpp's F32 matmul for
// batches of two or more rows when the row length is a multiple of 16): lane l sums
// a[l+16i]·b[l+16i] with FMAs, then the lanes are reduced.
func sgemmF32(a, b []float32) float32 {
	if s, ok := sgemmF32Fast(a, b); ok {
		return s
	}
	return sgemmF32Go(a, b)
}

// sgemmF32Go is sgemmF32 in Go, the definition of its bits.
func sgemmF32Go(a, b []float32) float32 {
	var c [lanes]float32
	for i := 0; i+lanes <= len(a); i += lanes {
		av, bv := (*[lanes]float32)(a[i:]), (*[lanes]float32)(b[i:])
		for l := range c {
			c[l] = fma32(av[l], bv[l], c[l])
		}
	}
	return reduce16(&c)
}

// sgemmF16 is sgemmF32 over F16 rows widened to float32 (tinyBLAS<16, ggml_fp16_t>).
func sgemmF16(a, b []uint16) float32 {
	if s, ok := sgemmF16Fast(a, b); ok {
		return s
	}
	return sgemmF16Go(a, b)
}

// sgemmF16Go is sgemmF16 in Go, the definition of its bits.
func sgemmF16Go(a, b []uint16) float32 {
	var c [lanes]float32
	for i := 0; i+lanes <= len(a); i += lanes {
		av, bv := (*[lanes]uint16)(a[i:]), (*[lanes]uint16)(b[i:])
		for l := range c {
			c[l] = fma32(fromF16(av[l]), fromF16(bv[l]), c[l])
		}
	}
	return reduce16(&c)
}

// vecDotF32 is ggml_vec_dot_f32 (AVX-512): four 16-lane FMA accumulators over blocks of
// 64, reduced as (0+2)+(1+3) and then across lanes, the tail added one FMA at a time.
// Elements past len(a) up to n are zeros (a padded KV cache row); n ≥ len(a).
func vecDotF32(a, b []float32, n int) float32 {
	if s, ok := vecDotF32Fast(a, b, n); ok {
		return s
	}
	return vecDotF32Go(a, b, n)
}

// vecDotF32Go is vecDotF32 in Go, the definition of its bits.
func vecDotF32Go(a, b []float32, n int) float32 {
	var acc [4][lanes]float32
	np := n &^ (4*lanes - 1)
	full := min(np, len(a)) &^ (4*lanes - 1)
	for i := 0; i < full; i += 4 * lanes {
		av, bv := (*[4 * lanes]float32)(a[i:]), (*[4 * lanes]float32)(b[i:])
		for j := range acc {
			for l := range lanes {
				acc[j][l] = fma32(av[j*lanes+l], bv[j*lanes+l], acc[j][l])
			}
		}
	}
	for i := full; i < min(np, len(a)); i++ { // a block cut short by padding
		acc[(i/lanes)%4][i%lanes] = fma32(a[i], b[i], acc[(i/lanes)%4][i%lanes])
	}
	for l := range lanes {
		acc[0][l] += acc[2][l]
		acc[1][l] += acc[3][l]
		acc[0][l] += acc[1][l]
	}
	sum := reduce16(&acc[0])
	for i := np; i < len(a); i++ {
		sum = fma32(a[i], b[i], sum)
	}
	return sum
}

// vecDotF16 is ggml_vec_dot_f16 (AVX-512): vecDotF32's blocks over widened F16 values,
// the reduced blocks and the tail summed in float64.
func vecDotF16(a, b []uint16) float32 {
	if s, ok := vecDotF16Fast(a, b); ok {
		return s
	}
	return vecDotF16Go(a, b)
}

// vecDotF16Go is vecDotF16 in Go, the definition of its bits.
func vecDotF16Go(a, b []uint16) float32 {
	var acc [4][lanes]float32
	np := len(a) &^ (4*lanes - 1)
	for i := 0; i < np; i += 4 * lanes {
		for j := range acc {
			for l := range lanes {
				k := i + j*lanes + l
				acc[j][l] = fma32(fromF16(a[k]), fromF16(b[k]), acc[j][l])
			}
		}
	}
	for l := range lanes {
		acc[0][l] += acc[2][l]
		acc[1][l] += acc[3][l]
		acc[0][l] += acc[1][l]
	}
	sum := float64(reduce16(&acc[0]))
	for i := np; i < len(a); i++ {
		sum += float64(fromF16(a[i]) * fromF16(b[i]))
	}
	return float32(sum)
}

// vexpf is one lane of ggml_v_expf (AVX-512): ARM's optimized-routines expf, a
// polynomial in float32 FMAs scaled by 2^n; |n| > 192 gives 0 or +Inf.
func vexpf(x float32) float32 {
	const r = 0x1.8p23
	z := fma32(x, 0x1.715476p+0, r)
	n := z - r
	b := fnma32(n, 0x1.7f7d1cp-20, fnma32(n, 0x1.62e4p-1, x))
	if abs32(n) > 192 {
		if n <= 0 {
			return 0
		}
		return float32(math.Inf(1))
	}
	u := b * b
	j := fma32(fma32(fma32(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, fma32(0x1.555e66p-3, b, 0x1.fffdb6p-2)),
		u, fma32(0x1.ffffecp-1, b, 1))
	return float32(float64(j) * math.Ldexp(1, int(n))) // _mm512_scalef_ps(j, n)
}

// vsilu is one lane of ggml_v_silu: x/(1+ggml_v_expf(0-x)).
func vsilu(x float32) float32 { return x / (1 + vexpf(0-x)) }

// fma32 is fmaf(a, b, c): the float32 product is exact in float64, so one float64
// addition rounds the exact sum once; the rounding to float32 that follows differs from
// a true fused float32 operation only when the float64 result lands exactly halfway
// between two float32 values (about once in 2^29). Plain float64 arithmetic is several
// times faster than math.FMA here, and a compiler that fuses it changes nothing.
func fma32(a, b, c float32) float32 {
	return float32(float64(a)*float64(b) + float64(c))
}

// fnma32 is -(a·b)+c rounded once (_mm512_fnmadd_ps), computed as fma32 is.
func fnma32(a, b, c float32) float32 {
	return float32(float64(c) - float64(a)*float64(b))
}

// abs32 is fabsf: x with its sign bit cleared.
func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// The ...Bytes functions adapt the kernels above to tensor.DotFunc's signature (mulMatDot).
func sgemmF32Bytes(n int, w, x []byte) float32 {
	return sgemmF32(tensor.Float32s(w)[:n], tensor.Float32s(x)[:n])
}

func vecDotF32Bytes(n int, w, x []byte) float32 {
	return vecDotF32(tensor.Float32s(w)[:n], tensor.Float32s(x)[:n], n)
}

func sgemmF16Bytes(n int, w, x []byte) float32 { return sgemmF16(uint16s(w)[:n], uint16s(x)[:n]) }

func vecDotF16Bytes(n int, w, x []byte) float32 { return vecDotF16(uint16s(w)[:n], uint16s(x)[:n]) }
