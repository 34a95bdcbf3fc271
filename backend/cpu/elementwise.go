package cpu

import (
	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// SwiGLU sets dst = silu(gate) ⊙ up, silu(x) = x/(1+e^-x), as ggml_vec_swiglu_f32
// computes each row: 16-lane ggml_v_silu for the first multiple of 16 elements, then
// ggml_silu_f32 with libm's expf for the tail.
func (d *Device) SwiGLU(dst, gate, up backend.Buffer) {
	o := d.arg("SwiGLU", "dst", dst, tensor.F32)
	g := d.arg("SwiGLU", "gate", gate, tensor.F32)
	u := d.arg("SwiGLU", "up", up, tensor.F32)
	shape("SwiGLU", "gate", g, o.rows, o.cols)
	shape("SwiGLU", "up", u, o.rows, o.cols)
	if !d.lock("SwiGLU") {
		return
	}
	defer d.mu.Unlock()
	d.ew = rowsTask{op: rowsSwiGLU, dst: o.f32(), a: g.f32(), b: u.f32(), cols: o.cols}
	d.pool.parallel(&d.ew, o.rows, rowsGrain(o.cols))
	d.ew = rowsTask{}
}

// swigluRow is one row of SwiGLU: vsilu on the first multiple of 16 elements (in
// assembly where there is one, same bits), silu on the rest.
func swigluRow(dst, gate, up []float32) {
	simd := len(dst) &^ (lanes - 1)
	gate, up = gate[:len(dst)], up[:len(dst)]
	c := 0
	if simd > 0 && useAVX2 {
		if hasAVX512 {
			swigluF32AVX512(&dst[0], &gate[0], &up[0], simd/lanes)
		} else {
			swigluF32AVX2(&dst[0], &gate[0], &up[0], simd/8)
		}
		c = simd
	}
	for ; c < simd; c++ {
		dst[c] = vsilu(gate[c]) * up[c]
	}
	for ; c < len(dst); c++ {
		dst[c] = silu(gate[c]) * up[c]
	}
}

// swigluRowGo is swigluRow without assembly.
func swigluRowGo(dst, gate, up []float32) {
	simd := len(dst) &^ (lanes - 1)
	for c := range dst {
		if c < simd {
			dst[c] = vsilu(gate[c]) * up[c]
		} else {
			dst[c] = silu(gate[c]) * up[c]
		}
	}
}

// silu is ggml_silu_f32: x/(1+expf(-x)).
func silu(x float32) float32 {
	return x / (1 + expf(-x))
}

// Add sets dst += x, element-wise; x is dst's shape or one row, added to every row
// (a bias).
func (d *Device) Add(dst, x backend.Buffer) {
	o := d.arg("Add", "dst", dst, tensor.F32)
	a := d.arg("Add", "x", x, tensor.F32)
	if a.rows != 1 {
		shape("Add", "x", a, o.rows, o.cols)
	}
	shape("Add", "x", a, a.rows, o.cols)
	if !d.lock("Add") {
		return
	}
	defer d.mu.Unlock()
	if o.cols == 0 {
		return
	}
	d.ew = rowsTask{op: rowsAdd, dst: o.f32(), a: a.f32(), cols: o.cols}
	d.pool.parallel(&d.ew, o.rows, rowsGrain(o.cols))
	d.ew = rowsTask{}
}

// Copy copies src into dst of the same shape, converting between types with
// tensor.Dequantize / tensor.Quantize (F32 ↔ F16, round to nearest even).
func (d *Device) Copy(dst, src backend.Buffer) {
	o := d.arg("Copy", "dst", dst)
	s := d.arg("Copy", "src", src)
	shape("Copy", "src", s, o.rows, o.cols)
	if !d.lock("Copy") {
		return
	}
	defer d.mu.Unlock()
	o.dropPanels()
	var err error
	switch {
	case o.dt == s.dt:
		copy(o.data, s.data)
	case o.dt == tensor.F32:
		err = tensor.Dequantize(s.dt, o.f32(), s.data)
	case s.dt == tensor.F32:
		err = tensor.Quantize(o.dt, o.data, s.f32())
	default:
		panic("cpu: Copy: " + s.dt.String() + " to " + o.dt.String() + " not supported")
	}
	if err != nil {
		d.fail(err)
	}
}
