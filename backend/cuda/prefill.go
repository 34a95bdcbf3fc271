package cuda

/*
#include "driver.h"
*/
import "C"

// swigluH16 enqueues SwiGLU of a prompt batch (the GEMM path's rows) as swiglu_h16,
// which also leaves dst in F16 in the x16 scratch for the down projection's GEMM, and
// reports whether it did; it does not when the kernel is missing or the buffers are not
// 16-byte aligned runs of 4.
func (d *Device) swigluH16(o, g, u *Buffer) bool {
	n := o.rows * o.cols
	if o.rows < gemmMinRows || d.blas == nil || n%4 != 0 || (o.ptr|g.ptr|u.ptr)%16 != 0 || !d.has("swiglu_h16") {
		return false
	}
	d.enqueue("swiglu_h16", func() error {
		b := d.blas
		var h C.CUdeviceptr
		if !b.tune.noX16 {
			var err error
			if h, err = d.scratch(&b.x16, n*2); err != nil {
				return err
			}
		}
		b.x16Key = q8Key{}
		a := new(args).ptr(o.ptr).ptr(uint64(h)).ptr(g.ptr).ptr(u.ptr).u64(uint64(n / 4))
		if err := d.launch("swiglu_h16", dim3{min(ceilDiv(n/4, threads), maxGrid), 1, 1}, dim3{threads, 1, 1}, a); err != nil {
			return err
		}
		if h != 0 {
			b.x16Key = d.q8KeyOf(o)
		}
		return nil
	})
	return true
}

// ropeTable is ROPE_TABLE of rope.cu: the most rotated pairs a head the row kernels take.
const ropeTable = 512

// ropeRows reports whether a RoPE of n rows runs as rope_rows_f32 / rope2_rows_f32 (one
// block a row, each angle's cos and sin computed once a row): prompt batches, which
// rope_f32 (every pair computes its own) leaves arithmetic-bound.
func (d *Device) ropeRows(n int, r ropeParams) bool {
	return n >= gemmMinRows && r.dims/2 <= ropeTable && d.has("rope_rows_f32") && d.has("rope2_rows_f32")
}

// launchRopeRows launches held RoPE p alone (q nil) or p and q together with the row
// kernels; it runs under the lock.
func (d *Device) launchRopeRows(p, q *heldPair) error {
	r, n, block := p.rp, p.a.rows, dim3{threads, 1, 1}
	if q == nil {
		a := new(args).ptr(p.a.ptr).ptr(r.pos).ptr(r.factors).i32(p.a.cols).i32(r.headDim).i32(r.dims).f32(r.base).f32(r.scale).i32(r.neox)
		return d.launch("rope_rows_f32", dim3{n, 1, 1}, block, a)
	}
	a := new(args).ptr(p.a.ptr).ptr(q.a.ptr).ptr(r.pos).ptr(r.factors).i32(p.a.cols).i32(q.a.cols).i32(r.headDim).i32(r.dims).f32(r.base).f32(r.scale).i32(r.neox)
	return d.launch("rope2_rows_f32", dim3{n, 2, 1}, block, a)
}
