package cpu

import (
	"math"
	"unsafe"

	"github.com/infergo/infer/tensor"
)

// attendOneChunk is ggml_compute_forward_flash_attn_ext_f16_one_chunk for one head
// over an F16 cache: the query is rounded to F16, each score is ggml_vec_dot_f16 of the
// key and the query (blocks of 64 in 16-lane FMAs, the rest, all of it for heads under
// 64, exact products summed in float64) times scale, and the online softmax accumulates
// V in F16 (ggml_vec_scale_f16, ggml_vec_mad_f16), rounding at every step.
//
// The reference build (GCC, C++, -mfma) contracts a·b+c into one FMA wherever the source
// writes it in one expression (GCC's default -ffp-contract=fast outside ISO C): the
// scalar loop of ggml_vec_mad_f16 (acc + v·vs, rounded once to float32, then to F16) and
// the softmax sum S = S·ms + vs. Rounding the product first, as the source reads, moves
// an F16 accumulator by one step in about one operation of 10^4, and logits of
// synth-256-F32 by up to 1.2e-4 (synth-256-Q4_0: 8.4e-3, an 8-bit activation flipping).
//
// The keys are taken in order: key j either raises the running maximum m (the
// accumulator and the sum are then rescaled by ms = expf(m-s_j), and the key weighs 1)
// or weighs vs = expf(s_j-m). The maxima depend only on the scores, so all the scores,
// then all the exponentials are computed first, and V is accumulated last.
func attendOneChunk(out, q []float32, k, v []uint16, h kvHead, scale float32, sc *attentionScratch) {
	e, raised := chunkWeights(q, k, h, scale, sc)
	acc := sc.acc16[:len(q)]
	clear(acc)
	chunkOutput(out, acc, accumulateF16(acc, v, h, e, raised, sc.acc))
}

// chunkHeads is how many heads of one query row attendOneChunks takes together.
const chunkHeads = 4

// attendOneChunks is attendOneChunk for chunkHeads heads of eight elements of one query
// row (the same keys): the same numbers, the heads' V accumulations interleaved (AVX2
// kernel), their scores and maxima computed together at the AVX-512 level.
func attendOneChunks(outs, qs *[chunkHeads][]float32, k, v []uint16, hs *[chunkHeads]kvHead, scale float32, sc *attentionScratch) {
	nk, cols := hs[0].n, hs[0].cols
	var offs [chunkHeads]int // bytes
	for g := range chunkHeads {
		if hs[g].n != nk || hs[g].cols != cols || len(qs[g]) != 8 {
			panic("cpu: attendOneChunks: heads of different shapes")
		}
		_ = k[(nk-1)*cols+hs[g].off+7]
		_ = v[(nk-1)*cols+hs[g].off+7]
		offs[g] = 2 * hs[g].off
	}
	e4, r4 := chunkWeights4(qs, k, hs, &offs, scale, sc)
	acc := sc.acc4[:]
	clear(acc)
	var sums [chunkHeads]float32
	chunkAccF16x4AVX2(&acc[0], &v[0], 2*cols, &offs, &e4[0], &r4[0], nk, &sums)
	for g := range chunkHeads {
		chunkOutput(outs[g], acc[8*g:8*g+8], sums[g])
	}
}

// chunkWeights4 is chunkWeights for the heads of attendOneChunks (offs: their K offsets
// in bytes, bounds checked), the weights and flags interleaved key by key: head g's key
// j at e4[4j+g], r4[4j+g]. At the AVX-512 level the four heads' scores and maxima are
// computed together, in that order.
func chunkWeights4(qs *[chunkHeads][]float32, k []uint16, hs *[chunkHeads]kvHead, offs *[chunkHeads]int, scale float32, sc *attentionScratch) (e4 []float32, r4 []bool) {
	nk := hs[0].n
	e4, r4 = sc.e4[:chunkHeads*nk], sc.r4[:chunkHeads*nk]
	if hasAVX512 {
		s4 := sc.s4[:chunkHeads*nk]
		for g, q := range qs {
			roundF16Row(sc.q4[8*g:8*g+8], q[:8])
		}
		scores4x8F16AVX512(&k[0], 2*hs[0].cols, offs, &sc.q4, nk, &s4[0])
		chunkMax4(s4, r4, scale)
		expfRow(e4, s4)
		return e4, r4
	}
	for g := range chunkHeads {
		e, raised := chunkWeights(qs[g], k, hs[g], scale, sc)
		for j, x := range e {
			e4[chunkHeads*j+g], r4[chunkHeads*j+g] = x, raised[j]
		}
	}
	return e4, r4
}

// chunkWeights computes attendOneChunk's softmax weights for one head: the scores of the
// keys with the query rounded to F16, then e[j] = expf(m-s_j) for a key that raises the
// running maximum m (raised[j]), expf(s_j-m) for the others. e and raised are sc's.
func chunkWeights(q []float32, k []uint16, h kvHead, scale float32, sc *attentionScratch) (e []float32, raised []bool) {
	hd := len(q)
	qf := sc.qf[:hd]
	roundF16Row(qf, q)
	s, e, raised := sc.s[:h.n], sc.e[:h.n], sc.raised[:h.n]
	chunkScores(s, k, qf, h)
	chunkMax(s, raised, scale)
	expfRow(e, s)
	return e, raised
}

// chunkMax scales the scores s and replaces each by its exponent for chunkWeights: for
// each key j in order, x = s[j]·scale rounded, raised[j] = x > m for the running
// maximum m (from -Inf), and s[j] = m-x where it is raised (m becomes x), x-m otherwise.
func chunkMax(s []float32, raised []bool, scale float32) {
	raised = raised[:len(s)]
	if hasAVX512 && len(s) > 0 {
		chunkMaxAVX512(&s[0], &raised[0], len(s), scale)
		return
	}
	chunkMaxGo(s, raised, scale)
}

// chunkMax4 is chunkMax for chunkHeads heads' scores interleaved key by key (s[4j+g]
// is head g's key j), each head with its own running maximum.
func chunkMax4(s []float32, raised []bool, scale float32) {
	raised = raised[:len(s)]
	if hasAVX512 && len(s) > 0 && len(s)%chunkHeads == 0 {
		chunkMax4AVX512(&s[0], &raised[0], len(s), scale)
		return
	}
	chunkMax4Go(s, raised, scale)
}

// chunkMax4Go is chunkMax4 in Go, the definition of its bits: chunkMaxGo for each head.
func chunkMax4Go(s []float32, raised []bool, scale float32) {
	m := [chunkHeads]float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))}
	for j, x := range s {
		g := j % chunkHeads
		x = float32(x * scale)
		if raised[j] = x > m[g]; raised[j] {
			s[j], m[g] = m[g]-x, x
		} else {
			s[j] = x - m[g]
		}
	}
}

// chunkMaxGo is chunkMax in Go, the definition of its bits.
func chunkMaxGo(s []float32, raised []bool, scale float32) {
	m := float32(math.Inf(-1))
	for j, x := range s {
		x = float32(x * scale) // rounded: Go fuses it into m-x / x-m on arm64 otherwise
		if raised[j] = x > m; raised[j] {
			s[j], m = m-x, x
		} else {
			s[j] = x - m
		}
	}
}

// chunkOutput sets out = acc / sum (0 where the sum is 0), acc in F16.
func chunkOutput(out []float32, acc []uint16, sum float32) {
	inv := float32(0)
	if sum != 0 {
		inv = 1 / sum
	}
	for d, a := range acc {
		out[d] = fromF16(a) * inv
	}
}

// chunkScores sets s[j] to vecDotF16 (ggml_vec_dot_f16) of key j and the F16-rounded
// query (its values widened: qf), not yet scaled.
func chunkScores(s []float32, k []uint16, qf []float32, h kvHead) {
	hd := len(qf)
	if hd == 0 || len(s) == 0 {
		clear(s)
		return
	}
	if useNEON && chunkScoresNEON(s, k, qf, h) {
		return
	}
	if useAVX2 {
		_ = k[(len(s)-1)*h.cols+h.off+hd-1]
		j := 0
		switch {
		case hasAVX512 && hd < 4*lanes && hd%8 == 0:
			if j = len(s) &^ 7; j > 0 { // eight keys a step; the rest below
				scoresF16x8AVX512(&k[h.off], 2*h.cols, &qf[0], hd, j/8, &s[0])
			}
		case hasAVX512:
			vecDotF16F32RowsAVX512(&k[h.off], 2*h.cols, &qf[0], hd, len(s), &s[0])
			return
		}
		if j < len(s) {
			vecDotF16F32RowsAVX2(&k[j*h.cols+h.off], 2*h.cols, &qf[0], hd, len(s)-j, &s[j])
		}
		return
	}
	chunkScoresGo(s, k, qf, h)
}

// accumulateF16 is attendOneChunk's V accumulation: for each key j in order, with
// (ms, vs) = (e[j], 1) where the key raised the maximum, else (1, e[j]), acc is
// rescaled by ms where that is not 1 (scaleRowF16), V row j times vs is added to it
// (madRowF16), and the softmax sum becomes sum·ms + vs rounded once (an FMA). It
// returns the sum. accF (at least len(acc)) is scratch for the Go path.
func accumulateF16(acc, v []uint16, h kvHead, e []float32, raised []bool, accF []float32) float32 {
	hd := len(acc)
	if len(e) == 0 {
		return 0
	}
	raised = raised[:len(e)]
	if useAVX2 && hd%8 == 0 && hd > 0 {
		_ = v[(len(e)-1)*h.cols+h.off+hd-1]
		return chunkAccF16AVX2(&acc[0], &v[h.off], 2*h.cols, &e[0], &raised[0], len(e), hd)
	}
	if !hasAVX512 {
		return accumulateF16Go(acc, v, h, e, raised, accF)
	}
	var sum float32
	for j, x := range e {
		ms, vs := float32(1), x
		if raised[j] {
			ms, vs = x, 1
		}
		if ms != 1 {
			scaleRowF16(acc, ms)
		}
		madRowF16(acc, v[j*h.cols+h.off:j*h.cols+h.off+hd], vs)
		sum = tensor.Fmaf(sum, ms, vs)
	}
	return sum
}

// expfRow sets dst[j] = expf(src[j]).
func expfRow(dst, src []float32) {
	dst = dst[:len(src)]
	if hasAVX512 && len(src) > 0 {
		expfRowAVX512(&dst[0], &src[0], len(src))
		return
	}
	i := 0
	if useAVX2 && len(src) >= 4 {
		i = len(src) &^ 3
		if expfRowAVX2(&dst[0], &src[0], i/4) {
			for j, x := range src[:i] {
				if math.Float32bits(x)&0x7fffffff >= 0x42b00000 && !math.IsInf(float64(x), -1) {
					dst[j] = expf(x)
				}
			}
		}
	}
	for ; i < len(src); i++ {
		dst[i] = expf(src[i])
	}
}

// scoreF16Go is ggml_vec_dot_f16 for rows under 64 elements (vecDotF16 without blocks):
// the exact float32 products of k (F16) and qf (F16 values widened) summed in float64 in
// order.
func scoreF16Go(k []uint16, qf []float32) float64 {
	var dot float64
	for d, kd := range k {
		dot += float64(fromF16(kd) * qf[d])
	}
	return dot
}

// madRowF16 is ggml_vec_mad_f16's scalar loop as the reference compiled it: acc += v·s
// as one FMA in float32 (the product not rounded), the result rounded to F16.
func madRowF16(acc, v []uint16, s float32) {
	if useNEON && madRowF16NEON(acc, v, s) {
		return
	}
	if useAVX2 && len(acc)%8 == 0 && len(acc) > 0 && len(v) >= len(acc) {
		madF16(&acc[0], &v[0], s, len(acc)) // FMA and F16C only
		return
	}
	madRowF16Go(acc, v, s)
}

func madRowF16Go(acc, v []uint16, s float32) {
	v = v[:len(acc)]
	for d, vd := range v {
		a, c := fromF16(vd), fromF16(acc[d])
		r := float64(a)*float64(s) + float64(c) // tensor.Fmaf, its common case inline
		f := float32(r)
		if tensor.FmafHard(r) {
			f = tensor.FmafTie(a, s, c)
		}
		acc[d] = toF16(f)
	}
}

// scaleRowF16 is ggml_vec_scale_f16's scalar loop: acc *= s, rounded to F16.
func scaleRowF16(acc []uint16, s float32) {
	if useNEON && scaleRowF16NEON(acc, s) {
		return
	}
	if useAVX2 && len(acc)%8 == 0 && len(acc) > 0 {
		scaleF16(&acc[0], s, len(acc)) // AVX and F16C only
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
		tmax := tileMax(s)
		if tmax > m {
			ms := expf(m - tmax)
			for d := range acc {
				acc[d] *= ms
			}
			sum *= ms
			m = tmax
		}
		sum = float32(float64(sum) + softmaxExp(s, m))
		accTileF16(acc, v, t0, h, s)
	}
	inv := float32(0)
	if sum != 0 {
		inv = 1 / sum
	}
	for d, a := range acc {
		out[d] = a * inv
	}
}

// tileMax is Go's max over s from −Inf (tileMaxGo); in assembly where there is one, but
// for the NaNs and the signs of zeros, which tileMaxGo settles.
func tileMax(s []float32) float32 {
	if hasAVX512 && len(s) > 0 {
		if m, ok := tileMaxAVX512(&s[0], len(s)); ok {
			return m
		}
	}
	return tileMaxGo(s)
}

// tileMaxGo is tileMax without assembly.
func tileMaxGo(s []float32) float32 {
	m := float32(math.Inf(-1))
	for _, x := range s {
		m = max(m, x)
	}
	return m
}

// accTileF16 adds attendTiled's weighted V rows of a tile to acc in key order: for each
// key t0+j, acc[d] = fma32(s[j], v[d], acc[d]) (accRowF16).
func accTileF16(acc []float32, v []uint16, t0 int, h kvHead, s []float32) {
	hd := len(acc)
	if hasAVX512 && hd%lanes == 0 && hd > 0 && len(s) > 0 {
		_ = v[(t0+len(s)-1)*h.cols+h.off+hd-1]
		accTileF16AVX512(&acc[0], &v[t0*h.cols+h.off], 2*h.cols, &s[0], len(s), hd)
		return
	}
	if !useAVX2 && !useNEON {
		accTileF16Go(acc, v, t0, h, s)
		return
	}
	for j, p := range s {
		r := (t0 + j) * h.cols
		accRowF16(acc, v[r+h.off:r+h.off+hd], p)
	}
}

// accTileF16Go is accTileF16 without assembly: accRowF16Go key after key, each element's
// chain of fma32 over the tile's keys run to its end in a register, four elements at a
// time, the weights widened once.
func accTileF16Go(acc []float32, v []uint16, t0 int, h kvHead, s []float32) {
	hd := len(acc)
	if len(s) == 0 || hd == 0 {
		return
	}
	_ = v[(t0+len(s)-1)*h.cols+h.off+hd-1]
	var sw [faTile]float64
	p64 := sw[:len(s)] // len(s) ≤ faTile
	for j, p := range s {
		p64[j] = float64(p)
	}
	tab := tensor.F16Values()
	base := t0*h.cols + h.off
	d := 0
	for ; d+4 <= hd; d += 4 {
		a0, a1, a2, a3 := float64(acc[d]), float64(acc[d+1]), float64(acc[d+2]), float64(acc[d+3])
		for j, p := range p64 {
			row := (*[4]uint16)(v[base+j*h.cols+d:])
			a0 = float64(float32(p*float64(tab[row[0]]) + a0)) // fma32
			a1 = float64(float32(p*float64(tab[row[1]]) + a1))
			a2 = float64(float32(p*float64(tab[row[2]]) + a2))
			a3 = float64(float32(p*float64(tab[row[3]]) + a3))
		}
		acc[d], acc[d+1], acc[d+2], acc[d+3] = float32(a0), float32(a1), float32(a2), float32(a3)
	}
	for ; d < hd; d++ {
		a := float64(acc[d])
		for j, p := range p64 {
			a = float64(float32(p*float64(tab[v[base+j*h.cols+d]]) + a))
		}
		acc[d] = float32(a)
	}
}

// tileScores sets s[j] to the score of key t0+j in attendTiled: one fma32 chain over
// the head's elements, times scale; in assembly where there is one, a tile at a time
// (AVX-512: from the keys transposed to float32 if h has them) or eight keys at a time
// (AVX2).
func tileScores(s, q []float32, k []uint16, t0 int, h kvHead, scale float32) {
	if useNEON && tileScoresNEON(s, q, k, t0, h, scale) {
		return
	}
	hd := len(q)
	if hasAVX512 && h.kt != nil && hd > 0 && len(s) > 0 {
		_ = h.kt[(hd-1)*h.kts+t0+(len(s)+15)&^15-1]
		scoresTileF32TAVX512(&h.kt[t0], h.kts, &q[0], hd, len(s), scale, &s[0])
		return
	}
	if hasAVX512 && hd%2 == 0 && hd > 0 && len(s) > 0 {
		_ = k[(t0+len(s)-1)*h.cols+h.off+hd-1]
		scoresTileF16AVX512(&k[t0*h.cols+h.off], 2*h.cols, &q[0], hd, len(s), scale, &s[0])
		return
	}
	j := 0
	if useAVX2 && hd%8 == 0 && hd > 0 && len(s) >= 8 {
		var idx [8]int32
		for l := range idx {
			idx[l] = int32(l * h.cols * 2)
		}
		for ; j+8 <= len(s); j += 8 {
			r := (t0+j)*h.cols + h.off
			_ = k[r+7*h.cols+hd-1]
			scores8F16AVX2(&k[r], &idx, &q[0], hd, scale, &s[j])
		}
		// The last keys with the cache rows after them (unused scores) where the cache
		// has them.
		if r := (t0+j)*h.cols + h.off; useAVX2 && j < len(s) && r+7*h.cols+hd <= len(k) {
			var s8 [8]float32
			scores8F16AVX2(&k[r], &idx, &q[0], hd, scale, &s8[0])
			copy(s[j:], s8[:])
			j = len(s)
		}
	}
	tileScoresRest(s[j:], q, k, t0+j, h, scale)
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
	if useNEON && accRowF16NEON(acc, v, p) {
		return
	}
	if useAVX2 && len(acc)%8 == 0 && len(acc) > 0 && len(v) >= len(acc) {
		fmaRowF16AVX2(&acc[0], &v[0], p, len(acc))
		return
	}
	accRowF16Go(acc, v, p)
}

func accRowF16Go(acc []float32, v []uint16, p float32) {
	v = v[:len(acc)]
	tab := tensor.F16Values() // loaded once, not at every element as fromF16 does
	for d, vd := range v {
		acc[d] = fma32(p, tab[vd], acc[d])
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
	if hasAVX512 && len(s) > 0 {
		return softmaxExpAVX512(&s[0], len(s), m)
	}
	if useAVX2 && len(s) > 0 {
		return softmaxExpAVX2(&s[0], len(s), m)
	}
	return softmaxExpGo(s, m)
}

// softmaxExpGo is softmaxExp without assembly.
func softmaxExpGo(s []float32, m float32) float64 {
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
