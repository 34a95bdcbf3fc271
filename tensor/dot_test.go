package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

// quantized returns x encoded as typ and decoded back.
func quantized(t testing.TB, typ tensor.DType, x []float32) ([]byte, []float32) {
	t.Helper()
	q := make([]byte, typ.RowBytes(len(x)))
	if err := tensor.Quantize(typ, q, x); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	if err := tensor.Dequantize(typ, y, q); err != nil {
		t.Fatal(err)
	}
	return q, y
}

// refDot is the dot product of the dequantized rows in float64, and the sum of the
// absolute products (the scale of the float32 rounding error). Q8_1 activations carry
// s = f16(d*sum(q)), which llama.cpp uses in place of the sum of the dequantized
// activations in the min term; refDot does the same, with the weight block's min m.
func refDot(wt tensor.DType, wq []byte, w, x []float32, xq []byte) (dot, scale float64) {
	for i := range w {
		dot += float64(w[i]) * float64(x[i])
		scale += math.Abs(float64(w[i]) * float64(x[i]))
	}
	if wt.VecDotType() != tensor.Q8_1 {
		return dot, scale
	}
	wb, xb := wt.BlockBytes(), tensor.Q8_1.BlockBytes()
	for ib := 0; ib < len(w)/tensor.QK; ib++ {
		m, s := half(wq[ib*wb+2:]), half(xq[ib*xb+2:])
		var sum float64
		for _, v := range x[ib*tensor.QK:][:tensor.QK] {
			sum += float64(v)
		}
		dot += m * (s - sum)
	}
	return dot, scale
}

var dotTypes = []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0}

func TestDotMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, typ := range dotTypes {
		for _, n := range []int{32, 96, 4096} {
			if typ.BlockSize() == 1 {
				n += 5 // exercise the tail after the 8-lane loop
			}
			t.Run(fmt.Sprintf("%v/%d", typ, n), func(t *testing.T) {
				wq, w := quantized(t, typ, randRow(r, n, 0.02, 0.01))
				xq, x := quantized(t, typ.VecDotType(), randRow(r, n, 1, -0.2))
				got, err := tensor.Dot(typ, n, wq, xq)
				if err != nil {
					t.Fatal(err)
				}
				want, scale := refDot(typ, wq, w, x, xq)
				if e := math.Abs(float64(got) - want); e > 1e-5*scale {
					t.Errorf("Dot = %.9g, float64 reference %.9g: error %.3g > 1e-5 * %.3g", got, want, e, scale)
				}
			})
		}
	}
}

// TestDotZero: a zero activation row gives exactly zero through DotFunc.
func TestDotZero(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const n = 256
	for _, typ := range dotTypes {
		wq, _ := quantized(t, typ, randRow(r, n, 1, 0))
		xq, _ := quantized(t, typ.VecDotType(), make([]float32, n))
		f, err := tensor.DotFunc(typ)
		if err != nil {
			t.Fatal(err)
		}
		if got := f(n, wq, xq); got != 0 {
			t.Errorf("%v: dot with zeros = %g", typ, got)
		}
	}
}

func TestErrors(t *testing.T) {
	unknown := tensor.DType(99)
	f := make([]float32, 64)
	tests := []struct {
		name string
		err  error
	}{
		{"dequantize unknown", tensor.Dequantize(unknown, f, make([]byte, 1024))},
		{"dequantize partial block", tensor.Dequantize(tensor.Q4_0, f[:40], make([]byte, 1024))},
		{"dequantize short src", tensor.Dequantize(tensor.Q8_0, f, make([]byte, 67))},
		{"quantize unknown", tensor.Quantize(unknown, make([]byte, 1024), f)},
		{"quantize partial block", tensor.Quantize(tensor.Q5_1, make([]byte, 1024), f[:33])},
		{"quantize short dst", tensor.Quantize(tensor.F16, make([]byte, 127), f)},
		{"dot unknown", dotErr(unknown, 64, 1024, 1024)},
		{"dot Q8_1 weights", dotErr(tensor.Q8_1, 64, 1024, 1024)},
		{"dot partial block", dotErr(tensor.Q4_1, 48, 1024, 1024)},
		{"dot short weights", dotErr(tensor.Q4_0, 64, 35, 1024)},
		{"dot short activations", dotErr(tensor.Q4_1, 64, 1024, 71)},
		{"dot short F16 activations", dotErr(tensor.F16, 64, 128, 127)},
	}
	for _, tc := range tests {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := tensor.DotFunc(tensor.Q8_1); err == nil {
		t.Error("DotFunc(Q8_1): no error")
	}
	if err := tensor.Dequantize(tensor.Q8_0, f, make([]byte, 68)); err != nil {
		t.Errorf("exact length: %v", err)
	}
}

func dotErr(typ tensor.DType, n, nw, nx int) error {
	_, err := tensor.Dot(typ, n, make([]byte, nw), make([]byte, nx))
	return err
}

// BenchmarkDot measures one weight row of n = 4096 against its activations; the
// reported throughput is weight bytes per second.
func BenchmarkDot(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(1, 1))
	for _, typ := range dotTypes {
		b.Run(typ.String(), func(b *testing.B) {
			wq, _ := quantized(b, typ, randRow(r, n, 1, 0))
			xq, _ := quantized(b, typ.VecDotType(), randRow(r, n, 1, 0))
			f, err := tensor.DotFunc(typ)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(wq)))
			var sink float32
			for b.Loop() {
				sink += f(n, wq, xq)
			}
			_ = sink
		})
	}
}

// BenchmarkQuantizeActivations measures converting a 4096-float activation row to each
// vec-dot type.
func BenchmarkQuantizeActivations(b *testing.B) {
	const n = 4096
	x := randRow(rand.New(rand.NewPCG(2, 2)), n, 1, 0)
	for _, typ := range []tensor.DType{tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q8_1} {
		b.Run(typ.String(), func(b *testing.B) {
			q := make([]byte, typ.RowBytes(n))
			b.SetBytes(4 * n)
			for b.Loop() {
				if err := tensor.Quantize(typ, q, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
