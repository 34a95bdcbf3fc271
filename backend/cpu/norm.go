package cpu

import (
	"fmt"
	"math"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// rmsTask normalises rows [lo, hi) of x into dst, each group of len(w) elements
// separately (one group a row unless the norm is per head).
type rmsTask struct {
	dst, x, w []float32
	cols      int
	eps       float32
}

func (t *rmsTask) run(_, lo, hi int) {
	g := len(t.w)
	for i := lo * t.cols; i < hi*t.cols; i += g {
		rmsNormRow(t.dst[i:i+g], t.x[i:i+g], t.w, t.eps)
	}
}

// rmsNormRow is ggml_compute_forward_rms_norm_f32 followed by ggml_mul: the squares are
// float32 products summed in float64, mean and scale are float32, and the row is scaled
// before it is multiplied by the weight.
func rmsNormRow(dst, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	for i, v := range x {
		dst[i] = (v * scale) * w[i]
	}
}

// RMSNorm sets each group of weight's elements of each row of dst to x/rms(x) ⊙
// weight, the group normalised on its own; weight is one F32 row whose length divides
// the rows' (the whole row, or one head). dst may be x.
func (d *Device) RMSNorm(dst, x, weight backend.Buffer, eps float32) {
	o := d.arg("RMSNorm", "dst", dst, tensor.F32)
	a := d.arg("RMSNorm", "x", x, tensor.F32)
	w := d.arg("RMSNorm", "weight", weight, tensor.F32)
	shape("RMSNorm", "x", a, o.rows, o.cols)
	if g := w.rows * w.cols; w.rows != 1 || g == 0 || o.cols%g != 0 {
		panic(fmt.Sprintf("cpu: RMSNorm: weight is (%d, %d), want one row dividing the rows' %d", w.rows, w.cols, o.cols))
	}
	if !d.lock("RMSNorm") {
		return
	}
	defer d.mu.Unlock()
	d.rms = rmsTask{dst: o.f32(), x: a.f32(), w: w.f32(), cols: o.cols, eps: eps}
	d.pool.parallel(&d.rms, o.rows, 8)
	d.rms = rmsTask{}
}
