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
