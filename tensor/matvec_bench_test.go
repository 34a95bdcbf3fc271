package tensor_test

import (
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

// BenchmarkMatVec multiplies a 4096×4096 weight matrix by one activation row, row after
// row through DotFunc as the CPU matmul does on one thread, so the weights stream from
// memory as in decoding; the throughput is weight bytes per second.
func BenchmarkMatVec(b *testing.B) {
	const n, rows = 4096, 4096
	r := rand.New(rand.NewPCG(3, 3))
	for _, typ := range []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.F32, tensor.F16, tensor.Q4_K, tensor.Q6_K} {
		b.Run(typ.String(), func(b *testing.B) {
			// One quantized row repeated: quantizing 16M values per type would dominate
			// the benchmark's set-up time, and the bytes need not differ between rows.
			wq, _ := quantized(b, typ, randRow(r, n, 1, 0))
			xq, _ := quantized(b, typ.VecDotType(), randRow(r, n, 1, 0))
			rb := len(wq)
			w := make([]byte, rows*rb)
			for i := range rows {
				copy(w[i*rb:], wq)
			}
			f, err := tensor.DotFunc(typ)
			if err != nil {
				b.Fatal(err)
			}
			y := make([]float32, rows)
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				for i := range y {
					y[i] = f(n, w[i*rb:(i+1)*rb], xq)
				}
			}
		})
	}
}
