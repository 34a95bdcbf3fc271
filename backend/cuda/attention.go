package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// Launch shape of attention.cu: ATT_WARPS·32 threads, head dimensions up to ATT_MAX_DIM.
const (
	attentionThreads = 4 * 32
	maxHeadDim       = 256
)

// Split decoding (flash-decoding): batches of at most splitMaxRows query rows divide the
// cache into splits of at least splitMinKeys rows (at most maxSplits of them), so that
// one decode step's attention spreads over the whole GPU.
const (
	splitMaxRows = 8
	splitMinKeys = 128 // one tile of 32 keys per warp
	maxSplits    = 256
)

// Attention sets dst (n, heads·headDim) to causal softmax attention of q over the cache
// rows k, v (ctx, kvHeads·headDim), F32 or F16; row i attends to rows 0..positions[i].
// The split of the cache depends only on its capacity (ctx), not on the positions, so a
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
	if entry, ok := flashEntry(kb.dt, n, hd); ok && !d.noFlash {
		a := new(args).ptr(o.ptr).ptr(qb.ptr).ptr(kb.ptr).ptr(vb.ptr).ptr(p.ptr).i32(n).i32(at.Heads).i32(at.KVHeads).f32(at.Scale)
		d.run(entry, dim3{ceilDiv(n, flashRows), at.Heads, 1}, dim3{flashThreads, 1, 1}, a)
		return
	}
	splits, chunk := 1, ctx
	if n <= splitMaxRows && ctx > splitMinKeys {
		splits = min(ceilDiv(ctx, splitMinKeys), maxSplits)
		chunk = ceilDiv(ceilDiv(ctx, splits), 32) * 32
		splits = ceilDiv(ctx, chunk)
	}
	entry := "attention_" + typeName(kb.dt)
	d.enqueue(entry, func() error {
		var part C.CUdeviceptr
		if splits > 1 {
			var err error
			if part, err = d.scratch(&d.attnPart, n*at.Heads*splits*(hd+2)*4); err != nil {
				return err
			}
		}
		a := new(args).ptr(o.ptr).ptr(qb.ptr).ptr(kb.ptr).ptr(vb.ptr).ptr(p.ptr).i32(at.Heads).i32(at.KVHeads).i32(hd).f32(at.Scale).i32(chunk).ptr(uint64(part))
		if err := d.launch(entry, dim3{at.Heads, n, splits}, dim3{attentionThreads, 1, 1}, a); err != nil || splits == 1 {
			return err
		}
		a = new(args).ptr(o.ptr).ptr(uint64(part)).i32(at.Heads).i32(hd).i32(splits)
		return d.launch("attention_combine", dim3{at.Heads, n, 1}, dim3{attentionThreads, 1, 1}, a)
	})
}

// Launch shape of the tensor-core flash attention for prompt batches (attention.cu):
// FA_WARPS warps of 16 query rows each.
const (
	flashThreads = 4 * 32
	flashRows    = 4 * 16
)

// flashEntry names the flash-attention kernel for a batch of n query rows over a cache
// of dt with head dimension hd, and reports whether there is one: prompt batches (more
// rows than a decode step's split path takes) over an F16 cache with a head dimension
// the kernel is instantiated for. An F32 cache keeps the exact f32 path.
func flashEntry(dt tensor.DType, n, hd int) (string, bool) {
	if dt != tensor.F16 || n <= splitMaxRows {
		return "", false
	}
	switch hd {
	case 64, 80, 96, 128:
		return fmt.Sprintf("flash_attn_f16_hd%d", hd), true
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
