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
	quant    func(dst []byte, src []float32) // tensor.ActivationQuantizer(qt)
	dot      func(n int, w, x []byte) float32
	tile     func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) // dot's tile form, or nil
	n, in    int
	out      int
}

func (t *matmulTask) run(_, lo, hi int) {
	if t.quantize {
		rb := t.qt.RowBytes(t.in)
		for i := lo; i < hi; i++ {
			t.quant(t.xq[i*rb:(i+1)*rb], t.x[i*t.in:(i+1)*t.in])
		}
		return
	}
	wrb, xrb := t.wt.RowBytes(t.in), t.qt.RowBytes(t.in)
	if t.tile != nil {
		t.tile(t.in, t.w[lo*wrb:hi*wrb], wrb, hi-lo, t.xq, xrb, t.n, t.dst[lo:], t.out)
		return
	}
	for o := lo; o < hi; o++ {
		wrow := t.w[o*wrb : (o+1)*wrb]
		for i := 0; i < t.n; i++ {
			t.dst[i*t.out+o] = t.dot(t.in, wrow, t.xq[i*xrb:(i+1)*xrb])
		}
	}
}

// MatMul sets dst (n, out) = x (n, in) · wᵀ for w (out, in) of any weight type. As in
// ggml_compute_forward_mul_mat, x is first converted to w.DType().VecDotType() (Q8_0
// for Q4_0, Q8_K for the k-quants, F16 for F16; F32 stays F32) with the x86 backend's
// quantizers (tensor.QuantizeActivations), then each output is one dot product
// (mulMatDot, computed by tiles with mulMatTile's function where there is one).
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
	dot, err := mulMatDot(wb.dt, xb.rows, wb.cols, wb.rows)
	qt := activationType(wb.dt)
	var quant func(dst []byte, src []float32)
	if err == nil && qt != tensor.F32 {
		quant, err = tensor.ActivationQuantizer(qt)
	}
	if err == nil && wb.cols%qt.BlockSize() != 0 {
		err = fmt.Errorf("row of %d is not a multiple of %v's block", wb.cols, qt)
	}
	if err != nil {
		d.fail(fmt.Errorf("cpu: MatMul: %w", err))
		return
	}
	t := &d.mm
	*t = matmulTask{tile: mulMatTile(wb.dt), dst: o.f32(), x: xb.f32(), w: wb.data, wt: wb.dt, qt: qt, quant: quant, dot: dot, n: xb.rows, in: wb.cols, out: wb.rows}
	if qt == tensor.F32 {
		t.xq = xb.data
	} else {
		t.xq = d.scratch(xb.rows * qt.RowBytes(wb.cols))
		t.quantize = true
		d.pool.parallel(t, t.n, 1)
		t.quantize = false
	}
	d.pool.parallel(t, t.out, 16)
	*t = matmulTask{}
}

// activationType is the type x is converted to before the dot products with weights of
// type wt: wt.VecDotType(), except BF16 weights, which multiply F32 activations (exact
// products; llama.cpp rounds them to BF16, 0.016% apart in perplexity on stories260K-BF16)
// so that this backend and the CUDA one, whose BF16 GEMM runs in F32, agree.
func activationType(wt tensor.DType) tensor.DType {
	if wt == tensor.BF16 {
		return tensor.F32
	}
	return wt.VecDotType()
}

// scratch returns the device's activation scratch, grown to at least n bytes. Growth
// allocates; steady-state calls do not.
func (d *Device) scratch(n int) []byte {
	if cap(d.xq) < n {
		d.xq = make([]byte, n)
	}
	return d.xq[:n]
}

// mulMatDot is the dot product MatMul uses: matmulDot's, except for the weight types
// whose x86 float order the tensor package implements (Q8_0, Q5_0: tensor.X86DotFunc),
// which it returns directly.
func mulMatDot(wt tensor.DType, n, in, out int) (func(n int, w, x []byte) float32, error) {
	if f := tensor.X86DotFunc(wt); f != nil {
		return f, nil
	}
	return matmulDot(wt, n, in, out)
}

// mulMatTile is the tile form of mulMatDot's dot, or nil: tensor.X86DotTileFunc for the
// types of tensor.X86DotFunc, tensor.DotTileFunc for the types whose dot matmulDot takes
// from tensor.DotFunc.
func mulMatTile(wt tensor.DType) func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if tensor.X86DotFunc(wt) != nil {
		return tensor.X86DotTileFunc(wt)
	}
	switch wt {
	case tensor.F32, tensor.F16, tensor.Q8_0, tensor.Q5_0, tensor.BF16:
		return nil // matmulDot's own
	}
	return tensor.DotTileFunc(wt)
}

// dotQ8_0x86 and dotQ5_0x86 are the Q8_0 and Q5_0 dots of matmulDot (simd.go): llama.cpp's
// AVX2 ggml_vec_dot_q{8,5}_0_q8_0 order (and tinyBLAS_Q0_AVX's for batches), from the
// tensor package. MatMul calls tensor's functions directly (mulMatDot).
func dotQ8_0x86(n int, w, x []byte) float32 { return x86Dot(tensor.Q8_0, n, w, x) }

func dotQ5_0x86(n int, w, x []byte) float32 { return x86Dot(tensor.Q5_0, n, w, x) }

func x86Dot(wt tensor.DType, n int, w, x []byte) float32 { return tensor.X86DotFunc(wt)(n, w, x) }
