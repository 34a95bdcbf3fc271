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
	ov, gv, uv := o.f32(), g.f32(), u.f32()
	simd := o.cols &^ (lanes - 1)
	for r := 0; r < o.rows; r++ {
		for c := 0; c < o.cols; c++ {
			i := r*o.cols + c
			if c < simd {
				ov[i] = vsilu(gv[i]) * uv[i]
			} else {
				ov[i] = silu(gv[i]) * uv[i]
			}
		}
	}
}

// silu is ggml_silu_f32: x/(1+expf(-x)).
func silu(x float32) float32 {
	return x / (1 + expf(-x))
}

// Add sets dst += x.
func (d *Device) Add(dst, x backend.Buffer) {
	o := d.arg("Add", "dst", dst, tensor.F32)
	a := d.arg("Add", "x", x, tensor.F32)
	shape("Add", "x", a, o.rows, o.cols)
	if !d.lock("Add") {
		return
	}
	defer d.mu.Unlock()
	ov, av := o.f32(), a.f32()
	for i := range ov {
		ov[i] += av[i]
	}
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
