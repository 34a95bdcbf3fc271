package cpu

import (
	"math"
	"unsafe"

	"github.com/infergo/infer/tensor"
)

// attendOneChunk is ggml_compute_forward_flash_attn_ext_f16_one_chunk for one head
// over an F16 cache: the query is rounded to F16, each score is ggml_vec_dot_f16 (exact
// products summed in float64 for heads under 64) times scale, and the online softmax
// accumulates V in F16 (ggml_vec_scale_f16, ggml_vec_mad_f16), rounding at every step.
func attendOneChunk(out, q []float32, k, v []uint16, h kvHead, scale float32, sc *attentionScratch) {
	hd := len(q)
	q16, acc := sc.q16[:hd], sc.acc16[:hd]
	for d, x := range q {
		q16[d] = toF16(x)
	}
	clear(acc)
	m, sum := float32(math.Inf(-1)), float32(0)
	for j := 0; j < h.n; j++ {
		kr := k[j*h.cols+h.off : j*h.cols+h.off+hd]
		var dot float64
		for d, kd := range kr {
			dot += float64(fromF16(kd) * fromF16(q16[d]))
		}
		s := float32(dot) * scale
		ms, vs := float32(1), float32(1)
		if s > m {
			ms = expf(m - s)
			m = s
			for d, a := range acc {
				acc[d] = toF16(fromF16(a) * ms)
			}
		} else {
			vs = expf(s - m)
		}
		vr := v[j*h.cols+h.off : j*h.cols+h.off+hd]
		for d, vd := range vr {
			acc[d] = toF16(fromF16(acc[d]) + float32(fromF16(vd)*vs))
		}
		sum = float32(sum*ms) + vs
	}
	inv := float32(0)
	if sum != 0 {
		inv = 1 / sum
	}
	for d, a := range acc {
		out[d] = fromF16(a) * inv
	}
}

// attendTiled is ggml_compute_forward_flash_attn_ext_tiled for one query row and head:
// float32 query, K and V widened to float32, scores as one FMA chain per key, and per
// tile of 64 keys an online-softmax step (rescale by libm expf(Mold-Mnew), then
// ggml_vec_soft_max_f32 of the tile) followed by a float32 FMA accumulation of V.
func attendTiled(out, q []float32, k, v []uint16, h kvHead, scale float32, sc *attentionScratch) {
	hd := len(q)
	acc := sc.acc[:hd]
	clear(acc)
	m, sum := float32(math.Inf(-1)), float32(0)
	for t0 := 0; t0 < h.n; t0 += faTile {
		s := sc.s[:min(faTile, h.n-t0)]
		tmax := float32(math.Inf(-1))
		for j := range s {
			r := (t0 + j) * h.cols
			var dot float32
			for d, kd := range k[r+h.off : r+h.off+hd] {
				dot = fma32(q[d], fromF16(kd), dot)
			}
			s[j] = dot * scale
			tmax = max(tmax, s[j])
		}
		if tmax > m {
			ms := expf(m - tmax)
			for d := range acc {
				acc[d] *= ms
			}
			sum *= ms
			m = tmax
		}
		sum = float32(float64(sum) + softmaxExp(s, m))
		for j, p := range s {
			r := (t0 + j) * h.cols
			for d, vd := range v[r+h.off : r+h.off+hd] {
				acc[d] = fma32(p, fromF16(vd), acc[d])
			}
		}
	}
	inv := float32(0)
	if sum != 0 {
		inv = 1 / sum
	}
	for d, a := range acc {
		out[d] = a * inv
	}
}

// fma32 is fmaf(a, b, c): the float32 product is exact in float64, so one float64
// addition rounds the exact sum once; the rounding to float32 that follows differs from
// a true fused float32 operation only when the float64 result lands exactly halfway
// between two float32 values (about once in 2^29). Plain float64 arithmetic is several
// times faster than math.FMA here, and a compiler that fuses it changes nothing.
func fma32(a, b, c float32) float32 {
	return float32(float64(a)*float64(b) + float64(c))
}

func toF16(x float32) uint16   { return tensor.F32ToF16(x) }
func fromF16(h uint16) float32 { return tensor.F16ToF32(h) }

// uint16s views b (F16 data, 2-byte aligned) as []uint16.
func uint16s(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

// softmaxExp is ggml_vec_soft_max_f32 (AVX-512) over a row whose length is a multiple
// of 16 once padded with masked (zero) entries: it replaces s[j] by ggml_v_expf(s[j]-m)
// and returns the sum, each group of 16 reduced in float32 and added in float64.
func softmaxExp(s []float32, m float32) float64 {
	var sum float64
	for g := 0; g < len(s); g += lanes {
		var e [lanes]float32
		for l := range min(lanes, len(s)-g) {
			e[l] = vexpf(s[g+l] - m)
			s[g+l] = e[l]
		}
		sum += float64(reduce16(&e))
	}
	return sum
}
