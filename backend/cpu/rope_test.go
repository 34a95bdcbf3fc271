package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRotateBits checks rotate (assembly for adjacent pairs at the AVX-512 level)
// against rotateGo bit for bit, adjacent and neox pairs, for rotated dims up to 72
// (each remainder of the eight-pair registers) within heads longer than them, on
// values of every kind, the elements past the rotated dims untouched.
func TestRotateBits(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 66))
	val := func() float32 {
		switch r.IntN(12) {
		case 0:
			return math.Float32frombits(r.Uint32()) // any bits
		case 1:
			return float32(math.Ldexp(r.NormFloat64(), -140)) // subnormal
		default:
			return float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-20))
		}
	}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b) }
	for dims := 2; dims <= 72; dims += 2 {
		for trial := range 6 {
			hd := dims + 2*r.IntN(3)
			x, cache := make([]float32, hd), make([]float32, dims)
			for i := range x {
				x[i] = val()
			}
			for i := 0; i < dims; i += 2 {
				th := r.Float64() * 100
				cache[i], cache[i+1] = float32(math.Cos(th)), float32(math.Sin(th))
				if trial == 5 {
					cache[i], cache[i+1] = val(), val()
				}
			}
			for _, neox := range []bool{false, true} {
				got, want := append([]float32(nil), x...), append([]float32(nil), x...)
				rotate(got, cache, neox)
				rotateGo(want, cache, neox)
				for i := range got {
					if !same(got[i], want[i]) {
						t.Fatalf("dims %d of %d, neox %v: [%d] = %g, Go %g", dims, hd, neox, i, got[i], want[i])
					}
				}
			}
		}
	}
}
