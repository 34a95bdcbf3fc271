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
	qf, acc := sc.qf[:hd], sc.acc16[:hd]
	for d, x := range q {
		qf[d] = fromF16(toF16(x))
	}
	clear(acc)
	m, sum := float32(math.Inf(-1)), float32(0)
	for j := 0; j < h.n; j++ {
		s := float32(scoreF16(k[j*h.cols+h.off:j*h.cols+h.off+hd], qf)) * scale
		ms, vs := float32(1), float32(1)
		if s > m {
			ms = expf(m - s)
			m = s
			scaleRowF16(acc, ms)
		} else {
			vs = expf(s - m)
		}
		madRowF16(acc, v[j*h.cols+h.off:j*h.cols+h.off+hd], vs)
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

// scoreF16 is ggml_vec_dot_f16 for rows under 64 elements: the exact float32 products
// of k (F16) and qf (F16 values widened) summed in float64 in order.
func scoreF16(k []uint16, qf []float32) float64 {
	if hasAVX512 && len(k)%8 == 0 && len(k) > 0 && len(qf) >= len(k) {
		return dotF16Seq(&k[0], &qf[0], len(k))
	}
	return scoreF16Go(k, qf)
}

func scoreF16Go(k []uint16, qf []float32) float64 {
	var dot float64
	for d, kd := range k {
		dot += float64(fromF16(kd) * qf[d])
	}
	return dot
}

// madRowF16 is ggml_vec_mad_f16's scalar loop: acc += v·s, the product rounded to
// float32 and the sum to F16.
func madRowF16(acc, v []uint16, s float32) {
	if hasAVX512 && len(acc)%8 == 0 && len(acc) > 0 && len(v) >= len(acc) {
		madF16(&acc[0], &v[0], s, len(acc))
		return
	}
	madRowF16Go(acc, v, s)
}

func madRowF16Go(acc, v []uint16, s float32) {
	v = v[:len(acc)]
	for d, vd := range v {
		acc[d] = toF16(fromF16(acc[d]) + float32(fromF16(vd)*s))
	}
}

// scaleRowF16 is ggml_vec_scale_f16's scalar loop: acc *= s, rounded to F16.
func scaleRowF16(acc []uint16, s float32) {
	if hasAVX512 && len(acc)%8 == 0 && len(acc) > 0 {
		scaleF16(&acc[0], s, len(acc))
		return
	}
	scaleRowF16Go(acc, s)
}

func scaleRowF16Go(acc []uint16, s float32) {
	for d, a := range acc {
		acc[d] = toF16(fromF16(a) * s)
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
		tileScores(s, q, k, t0, h, scale)
		tmax := float32(math.Inf(-1))
		for _, x := range s {
			tmax = max(tmax, x)
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
			accRowF16(acc, v[r+h.off:r+h.off+hd], p)
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

// tileScores sets s[j] to the score of key t0+j in attendTiled: one fma32 chain over
// the head's elements, times scale; eight keys at a time in assembly where there is one.
func tileScores(s, q []float32, k []uint16, t0 int, h kvHead, scale float32) {
	hd := len(q)
	j := 0
	if hasAVX512 && hd%8 == 0 && hd > 0 && len(s) >= 8 {
		var idx [8]int32
		for l := range idx {
			idx[l] = int32(l * h.cols * 2)
		}
		for ; j+8 <= len(s); j += 8 {
			r := (t0+j)*h.cols + h.off
			_ = k[r+7*h.cols+hd-1]
			scores8F16(&k[r], &idx, &q[0], hd, scale, &s[j])
		}
	}
	for ; j < len(s); j++ {
		r := (t0+j)*h.cols + h.off
		var dot float32
		for d, kd := range k[r : r+hd] {
			dot = fma32(q[d], fromF16(kd), dot)
		}
		s[j] = dot * scale
	}
}

// tileScoresGo is tileScores without assembly.
func tileScoresGo(s, q []float32, k []uint16, t0 int, h kvHead, scale float32) {
	hd := len(q)
	for j := range s {
		r := (t0+j)*h.cols + h.off
		var dot float32
		for d, kd := range k[r : r+hd] {
			dot = fma32(q[d], fromF16(kd), dot)
		}
		s[j] = dot * scale
	}
}

// accRowF16 is acc[d] = fma32(p, v[d], acc[d]) over a row of F16 values.
func accRowF16(acc []float32, v []uint16, p float32) {
	if hasAVX512 && len(acc)%8 == 0 && len(acc) > 0 && len(v) >= len(acc) {
		fmaRowF16(&acc[0], &v[0], p, len(acc))
		return
	}
	accRowF16Go(acc, v, p)
}

func accRowF16Go(acc []float32, v []uint16, p float32) {
	v = v[:len(acc)]
	for d, vd := range v {
		acc[d] = fma32(p, fromF16(vd), acc[d])
	}
}

// toF16 and fromF16 are tensor's F16 conversions under short names.
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
