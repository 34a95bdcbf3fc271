package cpu

import (
	"fmt"
	"math"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// rmsTask normalises rows [lo, hi) of x into dst.
type rmsTask struct {
	dst, x, w []float32
	cols      int
	eps       float32
}

func (t *rmsTask) run(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		rmsNormRow(t.dst[r*t.cols:(r+1)*t.cols], t.x[r*t.cols:(r+1)*t.cols], t.w, t.eps)
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

// RMSNorm sets each row of dst to x/rms(x) ⊙ weight; weight is one F32 row.
func (d *Device) RMSNorm(dst, x, weight backend.Buffer, eps float32) {
	o := d.arg("RMSNorm", "dst", dst, tensor.F32)
	a := d.arg("RMSNorm", "x", x, tensor.F32)
	w := d.arg("RMSNorm", "weight", weight, tensor.F32)
	shape("RMSNorm", "x", a, o.rows, o.cols)
	if w.rows*w.cols != o.cols {
		panic(fmt.Sprintf("cpu: RMSNorm: weight has %d elements, rows %d", w.rows*w.cols, o.cols))
	}
	if !d.lock("RMSNorm") {
		return
	}
	defer d.mu.Unlock()
	d.rms = rmsTask{dst: o.f32(), x: a.f32(), w: w.f32(), cols: o.cols, eps: eps}
	d.pool.parallel(&d.rms, o.rows, 8)
	d.rms = rmsTask{}
}
