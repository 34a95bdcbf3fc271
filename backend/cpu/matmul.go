package cpu

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// matmulTask computes dst (n, out) = x · wᵀ in two passes over the pool: quantize
// converts each row of x once to w's vec-dot type, then dot walks blocks of weight rows
// with the n activation rows inside, so each weight row is read once per batch.
type matmulTask struct {
	quantize bool
	dst      []float32 // (n, out)
	x        []float32 // (n, in)
	w        []byte    // (out, in) of wt
	xq       []byte    // (n, in) of wt.VecDotType()
	wt, qt   tensor.DType
	dot      func(n int, w, x []byte) float32
	n, in    int
	out      int
}

func (t *matmulTask) run(_, lo, hi int) {
	if t.quantize {
		rb := t.qt.RowBytes(t.in)
		for i := lo; i < hi; i++ {
			// Lengths were checked by MatMul, so Quantize cannot fail here.
			_ = quantizeActivations(t.qt, t.xq[i*rb:(i+1)*rb], t.x[i*t.in:(i+1)*t.in])
		}
		return
	}
	wrb, xrb := t.wt.RowBytes(t.in), t.qt.RowBytes(t.in)
	for o := lo; o < hi; o++ {
		wrow := t.w[o*wrb : (o+1)*wrb]
		for i := 0; i < t.n; i++ {
			t.dst[i*t.out+o] = t.dot(t.in, wrow, t.xq[i*xrb:(i+1)*xrb])
		}
	}
}

// MatMul sets dst (n, out) = x (n, in) · wᵀ for w (out, in) of any weight type. As in
// ggml_compute_forward_mul_mat, x is first converted to w.DType().VecDotType() (Q8_0
// for Q4_0, Q8_K for the k-quants, F16 for F16; F32 stays F32), then each output is one
// tensor.DotFunc(w) dot product.
func (d *Device) MatMul(dst, w, x backend.Buffer) {
	o := d.arg("MatMul", "dst", dst, tensor.F32)
	wb := d.arg("MatMul", "w", w)
	xb := d.arg("MatMul", "x", x, tensor.F32)
	shape("MatMul", "x", xb, o.rows, wb.cols)
	shape("MatMul", "dst", o, xb.rows, wb.rows)
	if !d.lock("MatMul") {
		return
	}
	defer d.mu.Unlock()
	dot, err := matmulDot(wb.dt, xb.rows, wb.cols, wb.rows)
	qt := wb.dt.VecDotType()
	if err == nil && wb.cols%qt.BlockSize() != 0 {
		err = fmt.Errorf("row of %d is not a multiple of %v's block", wb.cols, qt)
	}
	if err != nil {
		d.fail(fmt.Errorf("cpu: MatMul: %w", err))
		return
	}
	t := &d.mm
	*t = matmulTask{dst: o.f32(), x: xb.f32(), w: wb.data, wt: wb.dt, qt: qt, dot: dot, n: xb.rows, in: wb.cols, out: wb.rows}
	if qt == tensor.F32 {
		t.xq = xb.data
	} else {
		t.xq = d.scratch(xb.rows * qt.RowBytes(wb.cols))
		if err := quantizeActivations(qt, t.xq[:qt.RowBytes(wb.cols)], t.x[:wb.cols]); err != nil {
			d.fail(fmt.Errorf("cpu: MatMul: activations to %v: %w", qt, err))
			*t = matmulTask{}
			return
		}
		t.quantize = true
		d.pool.parallel(t, t.n, 1)
		t.quantize = false
	}
	d.pool.parallel(t, t.out, 16)
	*t = matmulTask{}
}

// scratch returns the device's activation scratch, grown to at least n bytes. Growth
// allocates; steady-state calls do not.
func (d *Device) scratch(n int) []byte {
	if cap(d.xq) < n {
		d.xq = make([]byte, n)
	}
	return d.xq[:n]
}
