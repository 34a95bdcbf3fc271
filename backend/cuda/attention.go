package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// Launch shape of attention.cu's decode kernels: ATT_WARPS·32 threads, head dimensions up
// to ATT_MAX_DIM.
const (
	attentionThreads = 4 * 32
	maxHeadDim       = 256
)

// Split decoding (flash-decoding): for batches of at most splitMaxRows query rows, each
// head's attention spreads over several blocks (splits): one per splitKeys rows of the
// cache's capacity, and at least one per splitMinKeys rows up to splitMin of them (a short
// cache's latency), at most maxSplits (ATT_MAX_SPLITS). The grid depends only on the
// capacity, so a recorded decode step stays valid as the positions advance; the kernel
// divides each row's keys 0..pos among the splits' warps (at least warpMinKeys keys a
// warp), so that the blocks past the position exit at once and the others share the work
// evenly. The last block of a row and head to finish merges the splits, counting on
// attnCount (zeroed once, left at zero by every launch).
const (
	splitMaxRows = 8
	splitKeys    = 512
	splitMinKeys = 128
	splitMin     = 4
	warpMinKeys  = 32
	maxSplits    = 256
)

// An F16 cache with a head dimension of 64, 128 or 256 goes through attention_gqa_*
// instead (attendGrouped): the same splits, blocks of g query heads of a K/V head (one
// by default: gqaMax), and for a batch-1 decode step the RoPE of q and k and the cache
// stores before it in the same launch (attnchain.go).

// decodeSplits is the number of splits for a cache of ctx rows when a split takes keys of
// its capacity (splitKeys but in benchmarks).
func decodeSplits(ctx, keys int) int {
	return min(max(ceilDiv(ctx, keys), min(ceilDiv(ctx, splitMinKeys), splitMin)), maxSplits)
}

// Attention sets dst (n, heads·headDim) to causal softmax attention of q over the cache
// rows k, v (ctx, kvHeads·headDim), F32 or F16; row i attends to rows 0..positions[i].
// The launch depends only on the cache's capacity (ctx), not on the positions, so a
// recorded decode step stays valid as the positions advance.
func (d *Device) Attention(dst, q, k, v, positions backend.Buffer, at backend.Attention) {
	o, qb := d.buffer(dst, "Attention dst"), d.buffer(q, "Attention q")
	kb, vb, p := d.buffer(k, "Attention k"), d.buffer(v, "Attention v"), d.buffer(positions, "Attention positions")
	hd := at.HeadDim
	need(hd > 0 && hd <= maxHeadDim && at.KVHeads > 0 && at.Heads%at.KVHeads == 0, "Attention: %d heads, %d kv heads, head dim %d (at most %d)", at.Heads, at.KVHeads, hd, maxHeadDim)
	need(o.dt == tensor.F32 && qb.dt == tensor.F32 && o.cols == at.Heads*hd && qb.cols == o.cols && qb.rows == o.rows, "Attention: dst %v (%d, %d), q %v (%d, %d)", o.dt, o.rows, o.cols, qb.dt, qb.rows, qb.cols)
	need(kb.dt == vb.dt && (kb.dt == tensor.F32 || kb.dt == tensor.F16) && kb.cols == at.KVHeads*hd && vb.cols == kb.cols && vb.rows == kb.rows, "Attention: k %v (%d, %d), v %v (%d, %d)", kb.dt, kb.rows, kb.cols, vb.dt, vb.rows, vb.cols)
	need(p.dt == tensor.I32 && p.rows == o.rows, "Attention: positions %v (%d rows) for %d rows", p.dt, p.rows, o.rows)
	n, ctx := o.rows, kb.rows
	if entry, ok := flashEntry(kb.dt, n, hd); ok && !d.noFlash && d.has(entry) {
		a := new(args).ptr(o.ptr).ptr(qb.ptr).ptr(kb.ptr).ptr(vb.ptr).ptr(p.ptr).i32(n).i32(at.Heads).i32(at.KVHeads).f32(at.Scale)
		grid, block := dim3{ceilDiv(n, flashRows), at.Heads, 1}, dim3{flashThreads, 1, 1}
		d.enqueue(entry, func() error { return d.launchShared(d.stream, entry, grid, block, flashSmem(hd), a) })
		return
	}
	entry := decodeEntry(kb.dt, hd)
	d.enqueueAs("Attention", kernelCall|holdCall|exactCall, func() error {
		gEntry, g, grouped := gqaEntry(kb.dt, hd, at.Heads/at.KVHeads, d.attnSplit.group)
		grouped = grouped && n <= splitMaxRows && d.has(gEntry)
		if c := d.heldChain(); grouped && c != nil && d.held == nil && c.feeds(o, qb, kb, vb, p, at, g) {
			d.pair = nil
			return d.attendGrouped(gEntry, o, qb, kb, vb, p, at, g, c)
		}
		if err := d.flush(); err != nil {
			return err
		}
		if grouped {
			return d.attendGrouped(gEntry, o, qb, kb, vb, p, at, g, nil)
		}
		defer d.wrote(o)
		keys, warpKeys := d.splitPolicy()
		splits := 1
		if n <= splitMaxRows {
			splits = decodeSplits(ctx, keys)
		}
		part, count, err := d.splitScratch(n, at.Heads, splits, hd)
		if err != nil {
			return err
		}
		a := new(args).ptr(o.ptr).ptr(qb.ptr).ptr(kb.ptr).ptr(vb.ptr).ptr(p.ptr).i32(at.Heads).i32(at.KVHeads).i32(hd).
			f32(at.Scale).i32(ctx).i32(warpKeys).ptr(uint64(part)).ptr(uint64(count))
		return d.launch(entry, dim3{at.Heads, n, splits}, dim3{attentionThreads, 1, 1}, a)
	})
}

// splitPolicy is the split policy in force: the keys of a split and the fewest keys of
// a warp (d.attnSplit in benchmarks and tests, else splitKeys and warpMinKeys).
func (d *Device) splitPolicy() (keys, warpKeys int) {
	if d.attnSplit.keys > 0 {
		return d.attnSplit.keys, d.attnSplit.warpKeys
	}
	return splitKeys, warpMinKeys
}

// splitScratch returns the partial results and counters of a split launch of n rows
// and heads heads (none for one split); it runs under the lock.
func (d *Device) splitScratch(n, heads, splits, hd int) (part, count C.CUdeviceptr, err error) {
	if splits == 1 {
		return 0, 0, nil
	}
	if part, err = d.scratch(&d.attnPart, n*heads*splits*(hd+2)*4); err != nil {
		return 0, 0, err
	}
	if count, err = d.zeroScratch(&d.attnCount, n*heads*4); err != nil {
		return 0, 0, err
	}
	return part, count, nil
}

// gqaMax is the most query heads a block of the K/V-head kernels serves by default
// (d.attnSplit.group replaces it in tests and benchmarks). One: on an H200 the blocks
// of one head each read a K/V head's cache through the L2 faster than blocks of 2 or 4
// heads read it once (BenchmarkAttentionDecodeGQA, 8B shape: 20.9 us a layer at depth
// 5071 for one head a block, 17.2 for two, 25.3 for four; 8.5, 9.4, 11.2 at 511), and
// `infer bench` of the 8B runs faster with one (decattn2's notes).
const gqaMax = 1

// gqaEntries names the K/V-head kernels (attention.cu's attention_gqa_*) by head
// dimension 64, 128, 256 and query heads a block serves 1, 2, 4; kernelTable loads them
// from this table (optional: older PTX has none).
var gqaEntries = [3][3]string{
	{"attention_gqa_f16_hd64_g1", "attention_gqa_f16_hd64_g2", "attention_gqa_f16_hd64_g4"},
	{"attention_gqa_f16_hd128_g1", "attention_gqa_f16_hd128_g2", "attention_gqa_f16_hd128_g4"},
	{"attention_gqa_f16_hd256_g1", "attention_gqa_f16_hd256_g2", "attention_gqa_f16_hd256_g4"},
}

// gqaEntry names the decode kernel that reads an F16 cache once per K/V head, for head
// dimension hd and group query heads per K/V head, and the query heads g one of its
// blocks serves (the most of 4, 2, 1 that divides group, and at most most when most >
// 0); ok is false where there is none (then the per-head kernels run).
func gqaEntry(dt tensor.DType, hd, group, most int) (entry string, g int, ok bool) {
	if dt != tensor.F16 {
		return "", 0, false
	}
	var row int
	switch hd {
	case 64:
		row = 0
	case 128:
		row = 1
	case 256:
		row = 2
	default:
		return "", 0, false
	}
	if most <= 0 {
		most = gqaMax
	}
	switch {
	case group%4 == 0 && most >= 4:
		return gqaEntries[row][2], 4, true
	case group%2 == 0 && most >= 2:
		return gqaEntries[row][1], 2, true
	}
	return gqaEntries[row][0], 1, true
}

// gqaWarpKeys is the fewest keys a warp of a block serving several query heads takes
// (the policy's warpKeys / g down to this).
const gqaWarpKeys = 16

// gqaSplits is the grid depth and the fewest keys a warp takes for a cache of ctx rows
// when a block serves g query heads, under the split policy (keys, warpKeys): g times
// decodeSplits' splits, since such a block does g times the work of a key.
func gqaSplits(ctx, g, keys, warpKeys int) (splits, minKeys int) {
	return min(decodeSplits(ctx, keys)*g, maxSplits), max(warpKeys/g, min(warpKeys, gqaWarpKeys))
}

// attendGrouped launches entry, an attention_gqa kernel serving g query heads a block,
// for dst o; with c, the held RoPEs and cache stores that feed it, it is also their
// launch (fused; the K/V heads' counters follow the split counters in attnCount). It
// runs under the lock and reports what it writes.
func (d *Device) attendGrouped(entry string, o, q, k, v, p *Buffer, at backend.Attention, g int, c *attnChain) error {
	n, ctx, hd := o.rows, k.rows, at.HeadDim
	keys, warpKeys := d.splitPolicy()
	splits, minKeys := gqaSplits(ctx, g, keys, warpKeys)
	part, count, err := d.splitScratch(n, at.Heads, splits, hd)
	if err != nil {
		return err
	}
	blocksPerKV := at.Heads / at.KVHeads / g
	var kx, vx uint64
	var kvCount C.CUdeviceptr
	var rp ropeParams
	fused := 0
	if c != nil {
		kx, vx, rp, fused = c.k.a.ptr, c.setV.a.ptr, c.q.rp, 1
		if blocksPerKV > 1 { // counters after the splits' (n = 1)
			if kvCount, err = d.zeroScratch(&d.attnCount, (at.Heads+at.KVHeads)*4); err != nil {
				return err
			}
			kvCount += C.CUdeviceptr(at.Heads * 4)
		}
	}
	a := new(args).ptr(o.ptr).ptr(q.ptr).ptr(kx).ptr(vx).ptr(k.ptr).ptr(v.ptr).ptr(p.ptr).i32(at.Heads).i32(at.KVHeads).
		f32(at.Scale).i32(ctx).i32(minKeys).ptr(uint64(part)).ptr(uint64(count)).ptr(uint64(kvCount)).
		ptr(rp.factors).i32(rp.dims).f32(rp.base).f32(rp.scale).i32(rp.neox).i32(fused)
	if err := d.launch(entry, dim3{at.KVHeads * blocksPerKV, n, splits}, dim3{attentionThreads, 1, 1}, a); err != nil {
		return err
	}
	d.wrote(o)
	if c != nil {
		d.wrote(q)
		d.wrote(c.k.a)
		d.wrote(k)
		d.wrote(v)
	}
	return nil
}

// decodeEntry names the per-row attention kernel for a cache of dt and head dimension hd:
// one with coalesced loads where attention.cu instantiates it (a power-of-two number of
// 16-byte loads per key), else the general one.
// The names are literals: this runs on every eager decode step.
func decodeEntry(dt tensor.DType, hd int) string {
	switch dt {
	case tensor.F16:
		switch hd {
		case 64:
			return "attention_f16_hd64"
		case 128:
			return "attention_f16_hd128"
		case 256:
			return "attention_f16_hd256"
		}
		return "attention_f16"
	case tensor.F32:
		switch hd {
		case 64:
			return "attention_f32_hd64"
		case 128:
			return "attention_f32_hd128"
		}
		return "attention_f32"
	}
	return "attention_" + typeName(dt)
}

// Launch shape of the tensor-core flash attention for prompt batches (attention.cu):
// FA_WARPS warps of 16 query rows each; K/V tiles of FA_KEYS cache rows, FA_PAD halves
// longer than the head, in FA_STAGES buffers.
const (
	flashThreads = 4 * 32
	flashRows    = 4 * 16
	flashKeys    = 64
	flashStages  = 2
	flashPad     = 8
)

// flashKernels are the flash kernels by head dimension: the one list flashEntry and
// prepareFlash read.
var flashKernels = [...]struct {
	hd   int
	name string
}{{64, "flash_attn_f16_hd64"}, {80, "flash_attn_f16_hd80"}, {96, "flash_attn_f16_hd96"}, {128, "flash_attn_f16_hd128"}}

// flashSmem is the dynamic shared memory of flash_attn_f16_hd<hd>: a K and a V tile of
// F16 per stage.
func flashSmem(hd int) int { return flashStages * 2 * flashKeys * (hd + flashPad) * 2 }

// prepareFlash lets each loaded flash kernel use its dynamic shared memory (beyond the
// default 48 KB for the larger heads), dropping one the GPU cannot give that much
// (Attention then takes the per-row path). It runs under do, after the kernels are loaded.
func (d *Device) prepareFlash() {
	for _, k := range flashKernels {
		if f, ok := d.funcs[k.name]; ok && check("cuFuncSetAttribute", C.cu_func_set_attribute(f, cuFuncAttrMaxDynamicShared, C.int(flashSmem(k.hd)))) != nil {
			delete(d.funcs, k.name)
		}
	}
}

// flashEntry names the flash-attention kernel for a batch of n query rows over a cache
// of dt with head dimension hd, and reports whether there is one: prompt batches (more
// rows than a decode step's split path takes) over an F16 cache with a head dimension
// the kernel is instantiated for. An F32 cache keeps the exact f32 path.
func flashEntry(dt tensor.DType, n, hd int) (string, bool) {
	if dt != tensor.F16 || n <= splitMaxRows {
		return "", false
	}
	for _, k := range flashKernels {
		if k.hd == hd {
			return k.name, true
		}
	}
	return "", false
}

// scratch returns device memory of at least size bytes held in *a, growing it when
// needed; it runs under do. The old block is freed after the stream drains, except while
// a graph is being recorded (which may refer to it): then it is kept until Close.
func (d *Device) scratch(a **allocation, size int) (C.CUdeviceptr, error) {
	if *a != nil && (*a).size >= size {
		if d.uses != nil {
			d.uses[*a] = struct{}{}
		}
		return (*a).ptr, nil
	}
	if old := *a; old != nil && !d.capturing {
		if err := check("cuStreamSynchronize", C.cu_stream_synchronize(d.stream)); err != nil {
			return 0, err
		}
		delete(d.allocs, old)
		if err := d.dropGraphs(nil); err != nil { // recorded graphs may use old
			return 0, err
		}
		if err := old.release(); err != nil {
			return 0, err
		}
	}
	n := &allocation{size: (size + 1<<20 - 1) &^ (1<<20 - 1)}
	if err := check("cuMemAlloc_v2", C.cu_mem_alloc(&n.ptr, C.size_t(n.size))); err != nil {
		return 0, err
	}
	d.allocs[n] = struct{}{}
	*a = n
	if d.uses != nil {
		d.uses[n] = struct{}{}
	}
	return n.ptr, nil
}

// zeroScratch is scratch for memory that must start at zero (the split counters, which
// every launch leaves at zero): a block is cleared on the stream before its first use
// until one clear has run outside a graph capture. A clear made while recording is a node
// of the graph (it clears again at each replay: harmless) and counts for nothing, since
// the graph may never be launched (a failed Record, a Capture closed unlaunched): the
// next call outside a capture clears the block again.
func (d *Device) zeroScratch(a **allocation, size int) (C.CUdeviceptr, error) {
	p, err := d.scratch(a, size)
	if err != nil || (*a).zeroed {
		return p, err
	}
	if err := check("cuMemsetD8Async", C.cu_memset_d8_async(p, 0, C.size_t((*a).size), d.stream)); err != nil {
		return 0, err
	}
	(*a).zeroed = !d.capturing
	return p, nil
}
