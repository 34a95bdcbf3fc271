package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRMSNormRowsBits checks rmsTask, which takes four groups at a time
// (rmsNormRows4), against rmsNormRow group by group, bit for bit, over group sizes and
// row ranges that leave every remainder of four groups, on values spread over many
// binades (so that the float64 sum's order shows).
func TestRMSNormRowsBits(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for trial := range 300 {
		g := 1 + r.IntN(300)
		perRow := 1 + r.IntN(3) // groups a row (a per-head norm when > 1)
		cols, rows := g*perRow, 1+r.IntN(11)
		x, w := make([]float32, rows*cols), make([]float32, g)
		for i := range x {
			x[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(60)-30))
		}
		for i := range w {
			w[i] = float32(1 + 0.1*r.NormFloat64())
		}
		eps := float32(1e-5)
		got, want := make([]float32, len(x)), make([]float32, len(x))
		lo := r.IntN(rows)
		task := rmsTask{dst: got, x: x, w: w, cols: cols, eps: eps}
		task.run(0, lo, rows)
		for i := lo * cols; i < len(x); i += g {
			rmsNormRow(want[i:i+g], x[i:i+g], w, eps)
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d (groups of %d, rows %d..%d): [%d] = %g, rmsNormRow %g", trial, g, lo, rows, i, got[i], want[i])
			}
		}
	}
}

// TestRowKernelsBits checks rmsScaleRow and addRow (assembly at the AVX-512 level)
// against their Go definitions bit for bit, for every length up to 70 (each remainder
// of the 32- and 16-lane passes and of the masked tail) on values of every kind
// (subnormals, infinities, NaNs, signed zeros), with the elements past n untouched.
func TestRowKernelsBits(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	val := func() float32 {
		switch r.IntN(10) {
		case 0:
			return math.Float32frombits(r.Uint32()) // any bits
		case 1:
			return float32(math.Ldexp(r.NormFloat64(), -140)) // subnormal
		default:
			return float32(math.Ldexp(r.NormFloat64(), r.IntN(60)-30))
		}
	}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b) }
	for n := 0; n <= 70; n++ {
		for range 4 {
			x, w, d0 := make([]float32, n+3), make([]float32, n+3), make([]float32, n+3)
			for i := range x {
				x[i], w[i], d0[i] = val(), val(), val()
			}
			scale := val()
			got, want := append([]float32(nil), d0...), append([]float32(nil), d0...)
			rmsScaleRow(got[:n], x[:n], w[:n], scale)
			rmsScaleRowGo(want[:n], x[:n], w[:n], scale)
			for i := range got {
				if !same(got[i], want[i]) {
					t.Fatalf("rmsScaleRow n=%d [%d] = %g, Go %g", n, i, got[i], want[i])
				}
			}
			got, want = append([]float32(nil), d0...), append([]float32(nil), d0...)
			addRow(got[:n], x[:n])
			addRowGo(want[:n], x[:n])
			for i := range got {
				if !same(got[i], want[i]) {
					t.Fatalf("addRow n=%d [%d] = %g, Go %g", n, i, got[i], want[i])
				}
			}
		}
	}
}
