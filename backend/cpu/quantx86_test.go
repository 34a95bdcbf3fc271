package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

// TestQuantizeQ8x86 checks the x86 activation quantizer against the reference one: the
// same scale, quants at most one step apart, and the cases where they must differ.
func TestQuantizeQ8x86(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 1024)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, qt := range []tensor.DType{tensor.Q8_0, tensor.Q8_1} {
		got, want := make([]byte, qt.RowBytes(len(x))), make([]byte, qt.RowBytes(len(x)))
		if err := quantizeActivations(qt, got, x); err != nil {
			t.Fatal(err)
		}
		if err := tensor.Quantize(qt, want, x); err != nil {
			t.Fatal(err)
		}
		bb, off := qt.BlockBytes(), qt.BlockBytes()-tensor.QK
		for b := 0; b < len(x)/tensor.QK; b++ {
			g, w := got[b*bb:(b+1)*bb], want[b*bb:(b+1)*bb]
			if g[0] != w[0] || g[1] != w[1] {
				t.Fatalf("%v block %d: scale %x, reference %x", qt, b, g[:2], w[:2])
			}
			for j := 0; j < tensor.QK; j++ {
				if d := int(int8(g[off+j])) - int(int8(w[off+j])); d < -1 || d > 1 {
					t.Fatalf("%v block %d quant %d: %d, reference %d", qt, b, j, int8(g[off+j]), int8(w[off+j]))
				}
			}
		}
	}
	// amax 127 makes the scale 1: 2.5 rounds to even (2) here, away from zero (3) in the
	// reference quantizer.
	block := make([]float32, tensor.QK)
	block[0], block[1] = 127, 2.5
	got, want := make([]byte, q8Bytes), make([]byte, q8Bytes)
	quantizeQ8x86(got, block, q8Bytes, false)
	if err := tensor.Quantize(tensor.Q8_0, want, block); err != nil {
		t.Fatal(err)
	}
	if got[3] != 2 || want[3] != 3 {
		t.Errorf("2.5 with scale 1: x86 %d (want 2), reference %d (want 3)", got[3], want[3])
	}
}

// TestDotsX86 checks the x86-order Q8_0 and Q5_0 dot products against the tensor
// package's, which add the same integers in another order.
func TestDotsX86(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 512
	w, x := make([]float32, n), make([]float32, n)
	for i := range w {
		w[i], x[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	xq := make([]byte, tensor.Q8_0.RowBytes(n))
	quantizeQ8x86(xq, x, q8Bytes, false)
	for _, tt := range []struct {
		wt  tensor.DType
		dot func(int, []byte, []byte) float32
	}{{tensor.Q8_0, dotQ8_0x86}, {tensor.Q5_0, dotQ5_0x86}} {
		wq := make([]byte, tt.wt.RowBytes(n))
		if err := tensor.Quantize(tt.wt, wq, w); err != nil {
			t.Fatal(err)
		}
		want, err := tensor.Dot(tt.wt, n, wq, xq)
		if err != nil {
			t.Fatal(err)
		}
		if got := tt.dot(n, wq, xq); math.Abs(float64(got-want)) > 1e-5*math.Abs(float64(want))+1e-5 {
			t.Errorf("%v: %g, tensor.Dot %g", tt.wt, got, want)
		}
	}
}
