package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// gemmMinRows is the batch from which MatMul uses cuBLAS (when loaded) instead of the
// mat-vec kernels, which re-read the weights once per 8 rows.
const gemmMinRows = 16

// aheadMinRows is the smallest batch whose quantized weights are dequantized on the side
// stream (dequant_ahead.go): every batch that takes cuBLAS. (It was 1024 while a side
// stream that had run beside the compute stream left every later decode step ~7% slower;
// on the tree of 2026-12-01 12:00 UTC that no longer happens on an H200:
// BenchmarkDecodeAfterSideStream and tg128 after pp512 in one `infer bench` measure the
// same decode with and without it, and the overlap gains 7.5% on pp512.)
const aheadMinRows = gemmMinRows

// mvWarps is MV_WARPS of matvec.cu: the warps of a block share its rows' chunks.
const mvWarps = 4

// MatMul sets dst (n, out) = x (n, in) · wᵀ, w (out, in) of any weight type.
//
// Small batches (decode) run the mat-vec kernels: quantized weights against activations
// quantized to int8 blocks of 32 (Q8_0's rounding, as llama.cpp does) with dp4a, float
// weights against the F32 activations; each weight byte is read once. Larger batches
// (prefill) dequantize w to F16 and x to F16 and call cuBLAS GemmEx with F32
// accumulation, as llama.cpp's cuBLAS path does; F32 weights stay F32 throughout. On
// Hopper, Q4_0 and Q8_0 batches whose grid is about a wave of the GPU (wgWins) run the
// wgmma kernels instead (wgmma.go), which decode the blocks in registers. With
// Options.MMQ, larger batches of quantized weights run the MMQ kernels instead (mmq.go):
// the same int8 activations times the weights unpacked to int8 tile by tile, on the
// tensor cores.
func (d *Device) MatMul(dst, w, x backend.Buffer) {
	o, wb, xb := d.buffer(dst, "MatMul dst"), d.buffer(w, "MatMul w"), d.buffer(x, "MatMul x")
	need(o.dt == tensor.F32 && xb.dt == tensor.F32, "MatMul: dst %v, x %v (want F32)", o.dt, xb.dt)
	need(wb.cols == xb.cols && o.rows == xb.rows && o.cols == wb.rows, "MatMul: dst (%d, %d) = x (%d, %d) · w (%d, %d)ᵀ", o.rows, o.cols, xb.rows, xb.cols, wb.rows, wb.cols)
	need(isWeightType(wb.dt), "MatMul: no kernels for %v weights", wb.dt)
	if d.useMMQ(wb, o.rows) {
		d.enqueueAs("MatMul", kernelCall|exactCall, func() error { return d.mmq(o, wb, xb) })
		return
	}
	if o.rows >= gemmMinRows && d.blas != nil {
		d.enqueueAs("MatMul", kernelCall|exactCall, func() error {
			defer d.wrote(o)
			return d.gemm(o, wb, xb)
		})
		return
	}
	if o.rows == 1 && !d.noFuse && !overlaps(o, xb) {
		d.holdMatVec(o, wb, xb)
		return
	}
	d.enqueueAs("MatMul", kernelCall|exactCall, func() error { return d.matVec(o, wb, xb) })
}

// matVec launches mv_<type>_<nc> with nc the smallest width covering the batch (8 for
// larger ones, one launch with ceil(n/8) column chunks). Quantized weights first need x
// quantized to int8 blocks (quantize_q8), which consecutive MatMuls of one x share. It
// runs under do.
func (d *Device) matVec(o, w, x *Buffer) error {
	n := x.rows
	nc := matVecWidths[len(matVecWidths)-1]
	for _, c := range matVecWidths {
		if n <= c {
			nc = c
			break
		}
	}
	entry := mvEntry(w.dt, nc)
	grid, block := dim3{ceilDiv(w.rows, mvRows(w.dt, nc)), ceilDiv(n, nc), 1}, dim3{mvWarps * 32, 1, 1}
	defer d.wrote(o)
	if !quantized(w.dt) {
		return d.launch(entry, grid, block, new(args).ptr(o.ptr).ptr(w.ptr).ptr(x.ptr).i32(w.rows).i32(w.cols).i32(n))
	}
	xq, xd, err := d.quantizeQ8(x)
	if err != nil {
		return err
	}
	return d.launch(entry, grid, block, new(args).ptr(o.ptr).ptr(w.ptr).ptr(xq).ptr(xd).i32(w.rows).i32(w.cols).i32(n))
}

// wrote reports a write to b by a call made with exactCall (a mat-vec, a held kernel
// pair): it forgets the quantized activations when b overlaps their source. It runs
// under the lock.
func (d *Device) wrote(b *Buffer) {
	if d.q8.covers(b) || d.blas != nil && d.blas.x16Key.covers(b) {
		d.writes++
	}
}

// covers reports whether b overlaps the F32 activations k names.
func (k q8Key) covers(b *Buffer) bool {
	return k.rows > 0 && b.ptr < k.ptr+uint64(k.rows*k.cols*4) && k.ptr < b.ptr+uint64(b.Bytes())
}

// q8Key says which activations the q8 scratch holds: x's address and shape, and the
// device's write count when they were quantized. The count is bumped in one place, lock,
// by every call not made with exactCall (kernels, copies, uploads, frees, graph
// launches, captures, and whatever call is added later), and by wrote, through which
// the exact calls report their writes; so the scratch is reused only while nothing may
// have written its source since, and no write path can forget to invalidate it.
type q8Key struct {
	ptr        uint64
	rows, cols int
	writes     uint64
}

// q8KeyOf is the key of x quantized now; it runs under the lock.
func (d *Device) q8KeyOf(x *Buffer) q8Key {
	return q8Key{ptr: x.ptr, rows: x.rows, cols: x.cols, writes: d.writes}
}

// q8Scratch returns the addresses where x (n, cols) quantized to int8 blocks of 32 (xq)
// and their scales (xd) go; it runs under do.
func (d *Device) q8Scratch(n, cols int) (xq, xd uint64, err error) {
	scaleOff := (n*cols + 255) &^ 255
	base, err := d.scratch(&d.q8Buf, scaleOff+n*cols/32*4)
	if err != nil {
		return 0, 0, err
	}
	return uint64(base), uint64(base) + uint64(scaleOff), nil
}

// quantizeQ8 returns the addresses of x quantized to int8 blocks of 32 (xq) and their
// scales (xd), quantizing it unless the scratch already holds it; it runs under do.
func (d *Device) quantizeQ8(x *Buffer) (xq, xd uint64, err error) {
	n, cols := x.rows, x.cols
	if xq, xd, err = d.q8Scratch(n, cols); err != nil {
		return 0, 0, err
	}
	if d.q8 == d.q8KeyOf(x) {
		return xq, xd, nil
	}
	blocks := n * cols / 32
	a := new(args).ptr(xq).ptr(xd).ptr(x.ptr).u64(uint64(blocks))
	if err := d.launch("quantize_q8", dim3{min(ceilDiv(blocks, threads/32), maxGrid), 1, 1}, dim3{threads, 1, 1}, a); err != nil {
		return 0, 0, err
	}
	d.q8 = d.q8KeyOf(x)
	return xq, xd, nil
}

// mvRows is the number of weight rows one block of mv_<dt>_<nc> takes (MV_ROWS_* of
// matvec.cu): the quantized kernels share each activation load among several rows.
func mvRows(dt tensor.DType, nc int) int {
	if dt == tensor.F32 || dt == tensor.F16 || dt == tensor.BF16 {
		return 1
	}
	switch nc {
	case 1:
		return 4
	case 2:
		return 2
	}
	return 1
}

// gemm is MatMul through cuBLAS, or a wgmma kernel where one wins; it runs under do.
// Quantized weights are dequantized to F16 for cuBLAS: into scratch on every call, or
// once into the weight cache (OpenWith), by the same kernel, so the two give identical
// results.
func (d *Device) gemm(o, w, x *Buffer) error {
	out, in, n := w.rows, w.cols, x.rows
	if w.dt == tensor.F32 {
		return d.blas.gemm(C.CUdeviceptr(o.ptr), C.CUdeviceptr(w.ptr), C.CUdeviceptr(x.ptr), cudaR32F, out, in, n)
	}
	if w.dt == tensor.BF16 {
		return d.gemmBF16(o, w, x)
	}
	wp := C.CUdeviceptr(w.ptr)
	wHalf := 0 // bytes of dequantized weights in scratch; 0 when w is F16 already or cached
	var slot *aheadSlot
	if w.dt != tensor.F16 {
		p, cached, err := d.cachedWeight(w)
		if err != nil {
			return err
		}
		if entry := d.wgEntry(w); entry != "" && !cached && d.wgWins(w, n) {
			xp, err := d.halfActivations(x)
			if err != nil {
				return err
			}
			return d.wgMatMul(entry, o, w, xp, n)
		}
		switch wp = p; {
		case cached:
		case !d.capturing && n >= d.aheadRows && in%8 == 0 && d.has(dequant8Kernel(w.dt)):
			if wp, slot, err = d.dequantAhead(w); err != nil {
				return err
			}
		default:
			wHalf = out * in * 2
		}
	}
	if wHalf > 0 {
		if d.blas.grows(wHalf) {
			if err := d.dropGraphs(nil); err != nil { // recorded graphs may use the old scratch
				return err
			}
		}
		scratch, err := d.blas.reserve(wHalf, d.stream)
		if err != nil {
			return err
		}
		wp = scratch
		if err := d.widen(d.stream, wp, w); err != nil {
			return err
		}
	}
	xp, err := d.halfActivations(x)
	if err != nil {
		return err
	}
	if err := d.blas.gemm(C.CUdeviceptr(o.ptr), wp, xp, cudaR16F, out, in, n); err != nil || slot == nil {
		return err
	}
	return check("cuEventRecord", C.cu_event_record(slot.free, d.stream)) // the copy may be overwritten now
}

// halfActivations returns x (n, in) F32 as F16 in the x16 scratch, converting it
// unless the scratch holds it already: the q, k and v GEMMs (gate and up) share one
// input, and swiglu_h16 leaves the down GEMM's there (SwiGLU). It runs under do.
func (d *Device) halfActivations(x *Buffer) (C.CUdeviceptr, error) {
	b := d.blas
	old := b.x16
	p, err := d.scratch(&b.x16, x.rows*x.cols*2)
	if err != nil {
		return 0, err
	}
	if b.x16 == old && !b.tune.noX16 && b.x16Key == d.q8KeyOf(x) {
		return p, nil
	}
	b.x16Key = q8Key{}
	if err := d.toHalf(p, x.ptr, x.rows*x.cols); err != nil {
		return 0, err
	}
	b.x16Key = d.q8KeyOf(x)
	return p, nil
}

// toHalf converts n F32 at src to F16 at dst on the stream; it runs under do.
func (d *Device) toHalf(dst C.CUdeviceptr, src uint64, n int) error {
	if n%4 == 0 && src%16 == 0 && dst%8 == 0 && d.has("copy4_f32_f16") {
		a := new(args).ptr(uint64(dst)).ptr(src).u64(uint64(n / 4))
		return d.launch("copy4_f32_f16", dim3{min(ceilDiv(n/4, threads), maxGrid), 1, 1}, dim3{threads, 1, 1}, a)
	}
	a := new(args).ptr(uint64(dst)).ptr(src).u64(uint64(n))
	return d.launch("copy_f32_f16", dim3{min(ceilDiv(n, threads), maxGrid), 1, 1}, dim3{threads, 1, 1}, a)
}

// gemmBF16 is MatMul of BF16 weights through cuBLAS in F32: the weights widened to F32
// (exact; into scratch, or once into the weight cache) and the F32 activations as they
// are, as the CPU backend multiplies them, so the two agree to float32 summation order;
// it runs under do.
func (d *Device) gemmBF16(o, w, x *Buffer) error {
	out, in := w.rows, w.cols
	wp, cached, err := d.cachedWeight(w)
	if err != nil {
		return err
	}
	if !cached {
		if d.blas.grows(out * in * 4) {
			if err := d.dropGraphs(nil); err != nil { // recorded graphs may use the old scratch
				return err
			}
		}
		if wp, err = d.blas.reserve(out*in*4, d.stream); err != nil {
			return err
		}
		if err := d.widen(d.stream, wp, w); err != nil {
			return err
		}
	}
	return d.blas.gemm(C.CUdeviceptr(o.ptr), wp, C.CUdeviceptr(x.ptr), cudaR32F, out, in, x.rows)
}

// quantized reports whether dt is a block format (its mat-vec kernels take int8 activations).
func quantized(dt tensor.DType) bool { return dt.BlockSize() > 1 }

func isWeightType(dt tensor.DType) bool {
	for _, t := range weightTypes {
		if t == dt {
			return true
		}
	}
	return false
}
