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
	i, end := lo*t.cols, hi*t.cols
	for ; i+4*g <= end; i += 4 * g {
		rmsNormRows4(t.dst[i:i+4*g], t.x[i:i+4*g], t.w, t.eps)
	}
	for ; i < end; i += g {
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
	rmsScaleRow(dst, x, w, rmsScale(sum, len(x), eps))
}

// rmsNormRows4 is rmsNormRow over four consecutive groups of len(w) elements (x and dst
// hold 4·len(w)), their four float64 sums side by side: the same additions in the same
// order for each, without waiting for one sum's additions before the next's.
func rmsNormRows4(dst, x, w []float32, eps float32) {
	g := len(w)
	x0, x1, x2, x3 := x[:g], x[g:2*g], x[2*g:3*g], x[3*g:4*g]
	var s0, s1, s2, s3 float64
	for i, v := range x0 {
		s0 += float64(v * v)
		s1 += float64(x1[i] * x1[i])
		s2 += float64(x2[i] * x2[i])
		s3 += float64(x3[i] * x3[i])
	}
	for k, s := range [4]float64{s0, s1, s2, s3} {
		rmsScaleRow(dst[k*g:(k+1)*g], x[k*g:(k+1)*g], w, rmsScale(s, g, eps))
	}
}

// rmsScale is rmsNormRow's scale for the float64 sum of n squares: the mean and the
// scale in float32.
func rmsScale(sum float64, n int, eps float32) float32 {
	mean := float32(sum / float64(n))
	return 1 / float32(math.Sqrt(float64(mean+eps)))
}

// rmsScaleRow sets dst[i] = (x[i]·scale)·w[i] (in assembly at the AVX-512 level).
func rmsScaleRow(dst, x, w []float32, scale float32) {
	x, w = x[:len(dst)], w[:len(dst)]
	if hasAVX512 && len(dst) > 0 {
		rmsScaleRowAVX512(&dst[0], &x[0], &w[0], scale, len(dst))
		return
	}
	rmsScaleRowGo(dst, x, w, scale)
}

// rmsScaleRowGo is rmsScaleRow without assembly.
func rmsScaleRowGo(dst, x, w []float32, scale float32) {
	x, w = x[:len(dst)], w[:len(dst)]
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
