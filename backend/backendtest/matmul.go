package backendtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// WeightTypes returns the weight types MatMul is checked with, every weight type the
// tensor package can quantize to; a backend's benchmarks may range over them too.
func WeightTypes() []tensor.DType {
	return []tensor.DType{
		tensor.F32, tensor.F16, tensor.BF16,
		tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0,
		tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K,
	}
}

// testMatMul checks dst = x·wᵀ for every weight type and several batch sizes against
// the float64 product of the dequantized weights with the unquantized activations.
// The bound allows, per term, the error of rounding the activation to the weight's
// vec-dot type (half a step of its block scale for the Q8 types), plus 1e-5 relative.
//
// Shapes: 37 rows of 512, and 9 rows of 5376 (21 super-blocks: a device kernel that walks
// a row in steps of 1024 or 4096 elements meets several steps and a partial last one).
func testMatMul(t *testing.T, d backend.Device) {
	for _, sh := range []struct{ in, out int }{{512, 37}, {5376, 9}} {
		for _, wt := range WeightTypes() {
			for _, n := range []int{1, 5, 33} {
				name := fmt.Sprintf("%v/n=%d", wt, n)
				if sh.in != 512 {
					name = fmt.Sprintf("%v/%dx%d/n=%d", wt, sh.out, sh.in, n)
				}
				t.Run(name, func(t *testing.T) { testMatMulShape(t, d, wt, sh.in, sh.out, n) })
			}
		}
	}
}

// testMatMulShape is testMatMul's check of one weight type, shape and batch size.
func testMatMulShape(t *testing.T, d backend.Device, wt tensor.DType, in, out, n int) {
	r := rng(uint64(10*int(wt) + n + in - 512)) // the 512-wide shape keeps its seeds
	w, x := normals(r, out*in, 1), normals(r, n*in, 1)
	x[3] = 40 // an outlier makes a coarse block scale
	wq := quantized(t, wt, w)
	wd := dequantized(t, wt, wq, out*in)
	dst := upload(t, d, tensor.F32, n, out, nil)
	d.MatMul(dst, upload(t, d, wt, out, in, wq), f32Buf(t, d, n, x))
	if err := d.Sync(); err != nil {
		t.Fatalf("MatMul %v: %v", wt, err)
	}
	got := downloadF32(t, d, dst)
	step := activationStep(wt.VecDotType(), x, in)
	for i := 0; i < n; i++ {
		for o := 0; o < out; o++ {
			var want, mag, bound float64
			for k := 0; k < in; k++ {
				p := float64(wd[o*in+k]) * float64(x[i*in+k])
				want += p
				mag += math.Abs(p)
				bound += math.Abs(float64(wd[o*in+k])) * step[i*in+k]
			}
			bound += 1e-5 * mag
			if e := math.Abs(float64(got[i*out+o]) - want); !(e <= bound) {
				t.Fatalf("[%d][%d] = %g, want %g (error %.3g > bound %.3g)", i, o, got[i*out+o], want, e, bound)
			}
		}
	}
}

// activationStep returns, per activation element, the largest error of rounding it to
// the vec-dot type qt.
func activationStep(qt tensor.DType, x []float32, in int) []float64 {
	step := make([]float64, len(x))
	bs := qt.BlockSize()
	for b := 0; b < len(x); b += bs {
		var amax float64
		for _, v := range x[b : b+bs] {
			amax = math.Max(amax, math.Abs(float64(v)))
		}
		for k := b; k < b+bs; k++ {
			v := math.Abs(float64(x[k]))
			switch qt {
			case tensor.F32:
				step[k] = 0
			case tensor.F16:
				step[k] = v * 0x1p-11
			case tensor.BF16:
				step[k] = v * 0x1p-8
			default: // 8-bit blocks: half a step of amax/127, with slack for the scale's rounding
				step[k] = amax / 127
			}
		}
	}
	return step
}
