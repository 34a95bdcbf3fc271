package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

// TestKDotMatchesFloat64: the dot product of a k-quant weight row with Q8_K activations
// equals the float64 dot product of the two dequantized rows, to 1e-5 of Σ|w·x| (the
// float32 combination of the exact integer block sums rounds at about 1e-7 of it).
func TestKDotMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, typ := range kTypes[:5] {
		for _, n := range []int{256, 768, 4096} {
			for _, mean := range []float64{0, 0.01} {
				t.Run(fmt.Sprintf("%v/%d/mean%g", typ, n, mean), func(t *testing.T) {
					wq, w := kqRoundTrip(t, typ, kqNormal(r, n, 0.02, mean))
					xq, x := kqRoundTrip(t, tensor.Q8_K, kqNormal(r, n, 1, 20*mean))
					got, err := tensor.Dot(typ, n, wq, xq)
					if err != nil {
						t.Fatal(err)
					}
					var want, scale float64
					for i := range w {
						want += float64(w[i]) * float64(x[i])
						scale += math.Abs(float64(w[i]) * float64(x[i]))
					}
					if e := math.Abs(float64(got) - want); e > 1e-5*scale {
						t.Errorf("Dot = %.9g, float64 reference %.9g: error %.3g > 1e-5 * %.3g", got, want, e, scale)
					}
				})
			}
		}
	}
}

// TestKDotFunc: every k-quant weight type has a dot product with Q8_K; Q8_K itself is
// only an activation format.
func TestKDotFunc(t *testing.T) {
	for _, typ := range kTypes {
		_, err := tensor.DotFunc(typ)
		if (err == nil) != (typ != tensor.Q8_K) {
			t.Errorf("DotFunc(%v): error %v", typ, err)
		}
	}
	w := make([]byte, tensor.Q4_K.RowBytes(512))
	x := make([]byte, tensor.Q8_K.RowBytes(256))
	if _, err := tensor.Dot(tensor.Q4_K, 512, w, x); err == nil {
		t.Error("Dot with a short activation row: no error")
	}
}

// BenchmarkDotK measures one 4096-element row dot product per k-quant weight type.
func BenchmarkDotK(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(10, 11))
	xq, _ := kqRoundTrip(b, tensor.Q8_K, kqNormal(r, n, 1, 0))
	for _, typ := range kTypes[:5] {
		b.Run(typ.String(), func(b *testing.B) {
			wq, _ := kqRoundTrip(b, typ, kqNormal(r, n, 0.02, 0))
			dot, err := tensor.DotFunc(typ)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(typ.RowBytes(n)))
			var s float32
			for b.Loop() {
				s += dot(n, wq, xq)
			}
			_ = s
		})
	}
}
