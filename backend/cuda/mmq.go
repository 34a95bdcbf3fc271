package cuda

import (
	"fmt"

	"github.com/infergo/infer/tensor"
)

// MMQ_BM and MMQ_THREADS of mmq.cu: the weight rows one block of an MMQ kernel takes,
// and its threads.
const (
	mmqRows    = 128
	mmqThreads = 128
)

// mmqMinRows is the batch from which MatMul multiplies quantized weights with the MMQ
// kernels (mmq.cu) instead of the mat-vec kernels.
const mmqMinRows = gemmMinRows

// mmqTiles are the token tiles (BN of mmq.cu) the MMQ kernels of dt come in: 32 and 64
// for every block format, 128 too for Q4_0 and Q8_0 (whose shared memory fits it).
func mmqTiles(dt tensor.DType) []int {
	if dt == tensor.Q4_0 || dt == tensor.Q8_0 {
		return []int{32, 64, 128}
	}
	return []int{32, 64}
}

// mmqName is the MMQ kernel of weights dt with token tile bn: "mmq_q4_0_64".
func mmqName(dt tensor.DType, bn int) string { return fmt.Sprintf("mmq_%s_%d", typeName(dt), bn) }

// mmqTile is the token tile for a batch of n rows: 32 for small batches (twice the
// blocks of 64, for a GPU that would otherwise idle), else 64; d.mmqTile when set.
func (d *Device) mmqTile(n int) int {
	switch {
	case d.mmqTileSet != 0:
		return d.mmqTileSet
	case n <= 32:
		return 32
	}
	return 64
}

// useMMQ reports whether MatMul runs a batch of n rows against w with an MMQ kernel: a
// block format with its kernels loaded, n at least mmqMinRows, and not turned off.
func (d *Device) useMMQ(w *Buffer, n int) bool {
	return !d.noMMQ && n >= mmqMinRows && quantized(w.dt) && d.has(mmqName(w.dt, d.mmqTile(n)))
}

// mmq is MatMul through an MMQ kernel: x quantized to int8 blocks of 32 by quantize_q8
// (shared with the mat-vec kernels and with consecutive MatMuls of the same x), then
// one launch over tiles of mmqRows weight rows × the token tile. It runs under do.
func (d *Device) mmq(o, w, x *Buffer) error {
	n := x.rows
	bn := d.mmqTile(n)
	xq, xd, err := d.quantizeQ8(x)
	if err != nil {
		return err
	}
	defer d.wrote(o)
	a := new(args).ptr(o.ptr).ptr(w.ptr).ptr(xq).ptr(xd).i32(w.rows).i32(w.cols).i32(n)
	return d.launch(mmqName(w.dt, bn), dim3{ceilDiv(w.rows, mmqRows), ceilDiv(n, bn), 1}, dim3{mmqThreads, 1, 1}, a)
}
