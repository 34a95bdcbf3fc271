package cuda

/*
#include "driver.h"
*/
import "C"

import "github.com/infergo/infer/tensor"

// MMQ_BM, MMQ_KT, MMQ_STRIDE and MMQ_THREADS of mmq.cu: the weight rows one block of an
// MMQ kernel takes, the cols of a stage, the bytes of a row of a stage's tile in shared
// memory, and the block's threads.
const (
	mmqRows    = 128
	mmqStage   = 128
	mmqStride  = mmqStage + 16
	mmqThreads = 256
)

// mmqModule is the kernel module (kernels/mmq.cu) of the MMQ kernels, loaded only with
// Options.MMQ.
const mmqModule = "mmq"

// cuFuncAttrMaxDynamicShared is CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
const cuFuncAttrMaxDynamicShared = 8

// mmqMinRows is the batch from which MatMul multiplies quantized weights with the MMQ
// kernels (mmq.cu) instead of the mat-vec kernels, when they are on (Options.MMQ).
const mmqMinRows = gemmMinRows

// mmqTiles are the token tiles (BN of mmq.cu) the MMQ kernels of dt come in: 32 and 64
// for every block format, 128 too for Q4_0 and Q8_0.
func mmqTiles(dt tensor.DType) []int {
	if dt == tensor.Q4_0 || dt == tensor.Q8_0 {
		return []int{32, 64, 128}
	}
	return []int{32, 64}
}

// mmqSmem is the dynamic shared memory of mmq_<dt>_<bn>: two stage buffers of
// MMQLayout (mmq.cu): the int8 weight and activation tiles, the weight scales (one per
// 16 weights for Q2_K, Q3_K, Q6_K, else per 32) and offsets (the formats with a min),
// the activation scales, and for the formats with offsets the activation sums.
func mmqSmem(dt tensor.DType, bn int) int {
	ks := mmqStage / 32
	if dt == tensor.Q2_K || dt == tensor.Q3_K || dt == tensor.Q6_K {
		ks = mmqStage / 16
	}
	ksm := 0
	switch dt {
	case tensor.Q4_1, tensor.Q5_1, tensor.Q2_K, tensor.Q4_K, tensor.Q5_K:
		ksm = ks
	}
	size := mmqRows*mmqStride + bn*mmqStride + (ks+ksm)*(mmqRows+8)*4 + (mmqStage/32+ksm)*(bn+8)*4
	return 2 * size
}

// prepareMMQ lets each loaded MMQ kernel use its dynamic shared memory (beyond the
// default 48 KB), dropping a kernel the GPU cannot give that much (MatMul then does
// without it). It runs under do, after the kernels are loaded.
func (d *Device) prepareMMQ() {
	for _, dt := range weightTypes {
		if !quantized(dt) {
			continue
		}
		for _, bn := range mmqTiles(dt) {
			name := mmqName(dt, bn)
			if f, ok := d.funcs[name]; ok && check("cuFuncSetAttribute", C.cu_func_set_attribute(f, cuFuncAttrMaxDynamicShared, C.int(mmqSmem(dt, bn)))) != nil {
				delete(d.funcs, name)
			}
		}
	}
}

// mmqTile is the token tile for a batch of n rows: 32 for small batches (twice the
// blocks of 64, for a GPU that would otherwise idle), else 64; d.mmqTileSet when set.
func (d *Device) mmqTile(n int) int {
	switch {
	case d.mmqTileSet != 0:
		return d.mmqTileSet
	case n <= 32:
		return 32
	}
	return 64
}

// useMMQ reports whether MatMul runs a batch of n rows against w with an MMQ kernel: the
// kernels on (Options.MMQ, or a test), a block format with its kernel loaded, n at least
// mmqMinRows.
func (d *Device) useMMQ(w *Buffer, n int) bool {
	return d.mmqOn && n >= mmqMinRows && quantized(w.dt) && d.has(mmqName(w.dt, d.mmqTile(n)))
}

// mmq is MatMul through an MMQ kernel: x quantized to int8 blocks of 32 by quantize_q8
// (shared with the mat-vec kernels and with consecutive MatMuls of the same x), then
// one launch over tiles of mmqRows weight rows × the token tile. It runs under do.
func (d *Device) mmq(o, w, x *Buffer) error {
	xq, xd, err := d.quantizeQ8(x)
	if err != nil {
		return err
	}
	defer d.wrote(o)
	return d.launchMMQ(o, w, x.rows, d.mmqTile(x.rows), xq, xd)
}

// launchMMQ launches mmq_<w.dt>_<bn> for o (n, w.rows) = the int8 activations (xq, xd)
// of n rows · wᵀ; it runs under do.
func (d *Device) launchMMQ(o, w *Buffer, n, bn int, xq, xd uint64) error {
	a := new(args).ptr(o.ptr).ptr(w.ptr).ptr(xq).ptr(xd).i32(w.rows).i32(w.cols).i32(n)
	grid := dim3{ceilDiv(w.rows, mmqRows), ceilDiv(n, bn), 1}
	return d.launchShared(d.stream, mmqName(w.dt, bn), grid, dim3{mmqThreads, 1, 1}, mmqSmem(w.dt, bn), a)
}
