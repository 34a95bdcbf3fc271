package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ8FMA: q8FMA gives fmaf's bits for block scales that are products of two F16
// values (subnormal ones too) and accumulators built from them, on random chains and on
// sums made to lie on float32 midpoints (the case it takes out of line).
func TestQ8FMA(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	half := func() float32 {
		if r.IntN(8) == 0 {
			return F16ToF32(uint16(r.IntN(0x400)) | uint16(r.IntN(2))<<15) // subnormal or zero
		}
		return F16ToF32(F32ToF16(float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(30)-15)))))
	}
	mids := 0
	for chain := range 20000 {
		var acc float32
		a := 0.0
		for range 40 {
			d := half() * half()
			s := int32(r.IntN(1<<17+1) - 1<<16)
			if chain%4 == 0 { // a sum on a float32 midpoint: acc's ulp/2 from a multiple of it
				s = int32(r.IntN(64) - 32)
			}
			if fmafMid(float64(d)*float64(s) + a) {
				mids++
			}
			acc = fmaf(d, float32(s), acc)
			q8FMA(float64(d), s, &a)
			if math.Float32bits(float32(a)) != math.Float32bits(acc) {
				t.Fatalf("chain %d: q8FMA(%g, %d) = %g, fmaf %g", chain, d, s, a, acc)
			}
		}
	}
	t.Logf("%d midpoint sums", mids)
	if mids < 100 {
		t.Errorf("only %d midpoint sums: the out-of-line case is hardly tested", mids)
	}
}
