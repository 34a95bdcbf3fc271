package cpu

import (
	"fmt"
	"math"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// faTile is GGML_FA_TILE_Q and GGML_FA_TILE_KV: llama.cpp's CPU flash attention takes
// its tiled path for batches of at least faTile query rows, walking the cache in tiles
// of faTile rows.
const faTile = 64

// faTileAlign is GGML_F32_EPR of the AVX-512 build that made the references: the tiled
// path also needs the head size to be a multiple of it.
const faTileAlign = 16

// Attention kernels, chosen per call as llama.cpp chooses them.
const (
	attendF32     = iota // F32 cache, flash attention off: mul_mat, soft_max, mul_mat
	attendFAChunk        // F16 cache, small batch: flash_attn_ext_f16_one_chunk
	attendFATiled        // F16 cache, batch ≥ 64: flash_attn_ext_tiled
)

// attentionScratch is one worker's memory; sized by Attention before the pool runs.
type attentionScratch struct {
	s      []float32 // (ctx) scores of one head
	e      []float32 // (ctx) their exponentials (one-chunk path)
	raised []bool    // (ctx) whether each score raised the running maximum (one-chunk path)
	qf     []float32 // (headDim) the query rounded to F16, widened back
	acc    []float32 // (max(ctx, headDim)) output accumulator, or one V column
	acc16  []uint16  // (headDim) F16 output accumulator of the one-chunk path
	// attendOneChunks: the weights of chunkHeads heads interleaved key by key, (4·ctx)
	// each, and their accumulators (heads of 8).
	e4   []float32
	r4   []bool
	s4   []float32               // (4·ctx) their scores (AVX-512)
	q4   [8 * chunkHeads]float32 // their queries rounded to F16 (AVX-512)
	acc4 [8 * chunkHeads]uint16
}

func (s *attentionScratch) grow(ctx, headDim int) {
	ctx = (ctx + 4*lanes - 1) &^ (4*lanes - 1) // attendSoftmax pads to blocks of 64
	if len(s.s) < ctx {
		s.s = make([]float32, ctx)
		s.e = make([]float32, ctx)
		s.raised = make([]bool, ctx)
		s.e4 = make([]float32, chunkHeads*ctx)
		s.r4 = make([]bool, chunkHeads*ctx)
		s.s4 = make([]float32, chunkHeads*ctx)
	}
	if len(s.acc) < max(ctx, headDim) {
		s.acc = make([]float32, max(ctx, headDim))
	}
	if len(s.qf) < headDim {
		s.qf = make([]float32, headDim)
		s.acc16 = make([]uint16, headDim)
	}
}

// attentionTask computes heads of query rows; unit u is row balancedRow(u/Heads, n),
// head u%Heads.
type attentionTask struct {
	kernel  int
	dst, q  []float32 // (n, heads·headDim)
	k, v    []byte    // (ctx, kvHeads·headDim) of F32 or F16
	pos     []int32   // (n)
	a       backend.Attention
	scratch []attentionScratch // per worker
	// The tiled kernel's keys transposed to float32 (AVX-512, transposeKeys): kt is
	// (kvHeads, headDim, kts) for the cache rows 0..keys-1, kts their count rounded up
	// to 16; kt is nil when the kernel reads the cache itself. transpose makes run
	// fill kt instead of attending. ktBuf is kt's memory, kept between calls.
	kt        []float32
	ktBuf     []float32
	keys, kts int
	transpose bool
}

func (t *attentionTask) run(worker, lo, hi int) {
	if t.transpose {
		t.transposeKeys(lo, hi)
		return
	}
	hd, group := t.a.HeadDim, t.a.Heads/t.a.KVHeads
	qCols, kvCols := t.a.Heads*hd, t.a.KVHeads*hd
	sc := &t.scratch[worker]
	n := len(t.pos)
	for u := lo; u < hi; u++ {
		i, h := balancedRow(u/t.a.Heads, n), u%t.a.Heads
		if t.kernel == attendFAChunk && useAVX2 && hd == 8 && hi-u >= chunkHeads && h+chunkHeads <= t.a.Heads {
			var outs, qs [chunkHeads][]float32
			var hs [chunkHeads]kvHead
			for g := range chunkHeads {
				outs[g] = t.dst[i*qCols+(h+g)*hd : i*qCols+(h+g+1)*hd]
				qs[g] = t.q[i*qCols+(h+g)*hd : i*qCols+(h+g+1)*hd]
				hs[g] = kvHead{off: ((h + g) / group) * hd, cols: kvCols, n: int(t.pos[i]) + 1}
			}
			attendOneChunks(&outs, &qs, uint16s(t.k), uint16s(t.v), &hs, t.a.Scale, sc)
			u += chunkHeads - 1
			continue
		}
		q := t.q[i*qCols+h*hd : i*qCols+(h+1)*hd]
		out := t.dst[i*qCols+h*hd : i*qCols+(h+1)*hd]
		kh := kvHead{off: (h / group) * hd, cols: kvCols, n: int(t.pos[i]) + 1}
		if t.kt != nil {
			g := h / group
			kh.kt, kh.kts = t.kt[g*hd*t.kts:(g+1)*hd*t.kts], t.kts
		}
		switch t.kernel {
		case attendF32:
			attendSoftmax(out, q, tensor.Float32s(t.k), tensor.Float32s(t.v), kh, t.a.Scale, len(t.pos), sc)
		case attendFAChunk:
			attendOneChunk(out, q, uint16s(t.k), uint16s(t.v), kh, t.a.Scale, sc)
		default:
			attendTiled(out, q, uint16s(t.k), uint16s(t.v), kh, t.a.Scale, sc)
		}
	}
}

// balancedRow maps the k-th unit row to query row 0, n-1, 1, n-2, 2, ... so that
// contiguous ranges of units get rows of short and long causal spans alike and the
// workers equal shares of a batch's attention. Each row and head is computed the same
// way whichever worker takes it.
func balancedRow(k, n int) int {
	if k%2 == 0 {
		return k / 2
	}
	return n - 1 - k/2
}

// transposeKeys fills t.kt for units [lo, hi): unit u is the sixteen cache rows from
// 16·(u%g) of KV head u/g, g = kts/16.
func (t *attentionTask) transposeKeys(lo, hi int) {
	hd, cols, groups := t.a.HeadDim, t.a.KVHeads*t.a.HeadDim, t.kts/16
	k := uint16s(t.k)
	for u := lo; u < hi; u++ {
		g, j := u/groups, 16*(u%groups)
		transposeKF16AVX512(&k[j*cols+g*hd], 2*cols, hd, min(16, t.keys-j), &t.kt[g*hd*t.kts+j], t.kts)
	}
}

// kvHead locates one K/V head in the cache: element d of cache row j is at
// j·cols + off + d, and rows 0..n-1 are attended to. kt, if not nil, holds the head's
// keys transposed to float32 as well: element d of row j at kt[d·kts + j], for rows
// up to n rounded up to 16 at least (attentionTask.kt).
type kvHead struct {
	off, cols, n int
	kt           []float32
	kts          int
}

// Attention sets dst (n, heads·headDim) to causal attention of q over the cache rows
// k, v (ctx, kvHeads·headDim); row i attends to cache rows 0..positions[i].
//
// With an F32 cache it follows llama.cpp with flash attention off (scores in float32,
// softmax summed in float64). With an F16 cache it follows llama.cpp's CPU flash
// attention, whose default precision depends on the batch: fewer than 64 query rows
// (or a head size not a multiple of 16) take flash_attn_ext_f16_one_chunk, which rounds
// the query to F16 and accumulates V in F16; larger batches take the tiled kernel,
// which keeps everything in float32.
func (d *Device) Attention(dst, q, k, v, positions backend.Buffer, a backend.Attention) {
	o := d.arg("Attention", "dst", dst, tensor.F32)
	qb := d.arg("Attention", "q", q, tensor.F32)
	kb := d.arg("Attention", "k", k, tensor.F32, tensor.F16)
	vb := d.arg("Attention", "v", v, kb.dt)
	p := d.arg("Attention", "positions", positions, tensor.I32)
	if a.KVHeads <= 0 || a.Heads%a.KVHeads != 0 || a.HeadDim <= 0 {
		panic(fmt.Sprintf("cpu: Attention: %d heads over %d KV heads of %d", a.Heads, a.KVHeads, a.HeadDim))
	}
	shape("Attention", "q", qb, o.rows, a.Heads*a.HeadDim)
	shape("Attention", "dst", o, qb.rows, a.Heads*a.HeadDim)
	shape("Attention", "k", kb, kb.rows, a.KVHeads*a.HeadDim)
	shape("Attention", "v", vb, kb.rows, a.KVHeads*a.HeadDim)
	shape("Attention", "positions", p, qb.rows, 1)
	if !d.lock("Attention") {
		return
	}
	defer d.mu.Unlock()
	for _, pos := range p.i32() {
		if pos < 0 || int(pos) >= kb.rows {
			d.fail(fmt.Errorf("cpu: Attention: position %d outside a cache of %d rows", pos, kb.rows))
			return
		}
	}
	kernel := attendF32
	if kb.dt == tensor.F16 {
		kernel = attendFAChunk
		if qb.rows >= faTile && a.HeadDim%faTileAlign == 0 {
			kernel = attendFATiled
		}
	}
	for w := range d.att.scratch {
		d.att.scratch[w].grow(kb.rows, a.HeadDim)
	}
	t := &d.att
	t.kernel, t.dst, t.q, t.k, t.v, t.pos, t.a = kernel, o.f32(), qb.f32(), kb.data, vb.data, p.i32(), a
	// A unit (row, head) costs about its keys times the head size, twice (scores, V).
	maxKeys := 0
	for _, pos := range t.pos {
		maxKeys = max(maxKeys, int(pos)+1)
	}
	if kernel == attendFATiled && hasAVX512 {
		d.transposeKeys(maxKeys)
	}
	d.pool.parallel(t, qb.rows*a.Heads, grainFor(maxKeys*a.HeadDim, 1))
	t.dst, t.q, t.k, t.v, t.pos, t.kt = nil, nil, nil, nil, nil, nil
}

// transposeKeys sets d.att.kt to the cache rows 0..keys-1 of every KV head transposed
// to float32, for the tiled kernel's scores (scoresTileF32TAVX512): each query row and
// head then reads its keys with plain loads, where it would gather and widen them
// again for every query row and head.
func (d *Device) transposeKeys(keys int) {
	t := &d.att
	t.keys, t.kts = keys, (keys+15)&^15
	n := t.a.KVHeads * t.a.HeadDim * t.kts
	if len(t.ktBuf) < n {
		t.ktBuf = make([]float32, n)
	}
	t.kt = t.ktBuf[:n]
	t.transpose = true
	d.pool.parallel(t, t.a.KVHeads*t.kts/16, grainFor(16*t.a.HeadDim, 1))
	t.transpose = false
}

// attendSoftmax is llama.cpp's attention without flash attention over an F32 cache,
// for a batch of n query rows: kq = k·q (ggml_vec_dot_f32), soft_max_ext(kq·scale) with
// ggml_v_expf in 16-lane groups summed in float64 and scaled by float32(1/sum), then
// kqv = v·p, which llamafile's tinyBLAS computes for n ≥ 2 and ggml_vec_dot_f32 over the
// cache padded to a multiple of 64 for n = 1. Cache rows past the query are masked;
// they would add exact zeros.
func attendSoftmax(out, q, k, v []float32, h kvHead, scale float32, n int, sc *attentionScratch) {
	s := sc.s[:h.n]
	hd := len(q)
	if useAVX2 && hd > 0 {
		_ = k[(h.n-1)*h.cols+h.off+hd-1]
		vecDotF32RowsAVX2(&k[h.off], 4*h.cols, &q[0], hd, h.n, &s[0])
		for j := range s {
			s[j] *= scale
		}
	} else {
		for j := range s {
			s[j] = vecDotF32(q, k[j*h.cols+h.off:j*h.cols+h.off+hd], hd) * scale
		}
	}
	m := float32(math.Inf(-1))
	for _, x := range s {
		m = max(m, x)
	}
	inv := float32(1 / softmaxExp(s, m))
	for j := range s {
		s[j] *= inv
	}
	np := (h.n + 4*lanes - 1) &^ (4*lanes - 1)
	if useAVX2 { // the padding as zeros in memory: full blocks for the assembly
		s = sc.s[:np]
		clear(s[h.n:])
	}
	vcol := sc.acc[:len(s)] // (n) column d of this head's V
	for d := range out {
		for j := range h.n {
			vcol[j] = v[j*h.cols+h.off+d]
		}
		switch {
		case useAVX2 && n >= 2:
			out[d] = sgemmF32BlocksAVX2(&vcol[0], &s[0], (h.n+lanes-1)/lanes)
		case useAVX2:
			vecDotF32RowsAVX2(&vcol[0], 0, &s[0], np, 1, &out[d])
		case n >= 2:
			out[d] = sgemmPadded(vcol, s)
		default:
			out[d] = vecDotF32(vcol, s, np)
		}
	}
}

// sgemmPadded is sgemmF32 over rows whose length need not be a multiple of 16: the
// missing elements are zeros, as in a padded KV cache.
func sgemmPadded(a, b []float32) float32 {
	var c [lanes]float32
	for i := range a {
		c[i%lanes] = fma32(a[i], b[i], c[i%lanes])
	}
	return reduce16(&c)
}
