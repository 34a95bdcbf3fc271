package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ4KTileExtremes: the Q4_K repack tiles (gemm and gemv) give their Go code's bits
// where the float32 FMAs leave the normal range: activations so large that sums overflow
// to infinity (the bound of the Go gemm tile's fast case, fmaKMax), or so small that
// they fall below 2^-126 (exact, fmaKMax's comment argues: checked all the same).
func TestQ4KTileExtremes(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for _, c := range tileOrders() {
		if c.typ != Q4_K || c.name == "generic" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var inf, tiny int
			for trial := range 60 {
				nb, mw, mx := 1+r.IntN(4), 1+r.IntN(9), 4+r.IntN(5)
				n := QKK * nb
				ws, xs := Q4_K.RowBytes(n), Q8_K.RowBytes(n)
				w := make([]byte, mw*ws)
				randomWeights(r, Q4_K, w)
				for k := 0; k+q4KBytes <= len(w); k += q4KBytes { // large scales, or small ones
					for _, o := range []int{0, 2} {
						h := F32ToF16(float32(math.Ldexp(1+r.Float64(), 8+r.IntN(7))))
						if trial%2 == 1 {
							h = F32ToF16(float32(math.Ldexp(1+r.Float64(), -14-r.IntN(8))))
						}
						w[k+o], w[k+o+1] = byte(h), byte(h>>8)
					}
				}
				x := make([]byte, mx*xs)
				for i := range mx {
					a := make([]float32, n)
					e := 80 + r.IntN(48) // overflowing sums
					if trial%2 == 1 {
						e = -120 // sums below 2^-126
					}
					for k := range a {
						a[k] = float32(math.Ldexp(r.NormFloat64(), e))
						if trial%2 == 1 && k%64 != 0 { // sparse: small sums
							a[k] = 0
						}
					}
					if err := QuantizeActivations(Q8_K, x[i*xs:(i+1)*xs], a); err != nil {
						t.Fatal(err)
					}
				}
				dst := make([]float32, mx*mw)
				c.tile(n, w, ws, mw, x, xs, mx, dst, mw)
				for i := range mx {
					ref := c.ref
					if c.gemm != nil && i < mx-mx%X86RepackGemmRows {
						ref = c.gemm
					}
					for o := range mw {
						want := ref(n, w[o*ws:], x[i*xs:])
						if math.Float32bits(dst[i*mw+o]) != math.Float32bits(want) {
							t.Fatalf("trial %d: [%d][%d] = %g, Go %g", trial, i, o, dst[i*mw+o], want)
						}
						if math.IsInf(float64(want), 0) || math.IsNaN(float64(want)) {
							inf++
						} else if want != 0 && math.Abs(float64(want)) < 0x1p-126 {
							tiny++
						}
					}
				}
			}
			if inf < 20 || tiny < 20 {
				t.Errorf("%d infinite and %d tiny results: the cases are not exercised", inf, tiny)
			}
		})
	}
}
