package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend/backendtest"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/tensor"
)

// BenchmarkMatMul times a 4096×4096 weight against batches of 1 (decode) and 64
// (prefill) rows, per weight type, reporting weight bytes streamed per second.
func BenchmarkMatMul(b *testing.B) {
	const dim = 4096
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float32, dim*dim)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	for _, wt := range backendtest.WeightTypes() {
		wq := make([]byte, wt.RowBytes(dim*dim))
		if err := tensor.Quantize(wt, wq, w); err != nil {
			continue
		}
		for _, n := range []int{1, 64} {
			b.Run(fmt.Sprintf("%v/n=%d", wt, n), func(b *testing.B) {
				d := cpu.New(0)
				defer d.Close()
				x := make([]float32, n*dim)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				wb, _ := d.Wrap(wt, dim, dim, wq)
				xb, _ := d.Wrap(tensor.F32, n, dim, tensor.Float32Bytes(x))
				dst, _ := d.Alloc(tensor.F32, n, dim)
				b.SetBytes(int64(len(wq)))
				for b.Loop() {
					d.MatMul(dst, wb, xb)
				}
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
