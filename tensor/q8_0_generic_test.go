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

// TestR32: r32Bits finds exactly the float32 midpoints (fmafMid) and r32 rounds every
// other value as float64(float32(v)) does, bit for bit: random values of float32's
// normal range (rounding carries into the exponent included), values next to midpoints,
// zeros, infinities and widened float32 NaNs.
func TestR32(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	check := func(v float64) {
		t.Helper()
		u := r32Bits(v)
		if mid := u&r32Low == 0; mid != fmafMid(v) {
			t.Fatalf("r32Bits(%x): midpoint %v, fmafMid %v", math.Float64bits(v), mid, fmafMid(v))
		} else if mid {
			return
		}
		if got, want := math.Float64bits(r32(u)), math.Float64bits(float64(float32(v))); got != want {
			t.Fatalf("r32(%x) = %x, float32 %x", math.Float64bits(v), got, want)
		}
	}
	for _, v := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), float64(float32(math.NaN())),
		-float64(float32(math.NaN())), math.MaxFloat32, -math.MaxFloat32, 0x1p-126, -0x1p-126, 0x1p-48, 1.5, -3} {
		check(v)
	}
	for range 2000000 {
		e := uint64(1023-126+r.IntN(254)) << 52 // float32's normal exponents, MaxFloat32's bits kept below
		m := r.Uint64() & (1<<52 - 1)
		switch r.IntN(4) {
		case 0: // the low 29 bits next to or at the midpoint
			m = m&^r32Low | uint64(1<<28+r.IntN(5)-2)
		case 1: // all ones above the cut: rounding up carries into the exponent
			m |= (1<<52 - 1) &^ r32Low
		}
		v := math.Float64frombits(e | m | uint64(r.IntN(2))<<63)
		if math.Abs(v) >= math.MaxFloat32 {
			continue // rounds to infinity in float32; never an accumulator (r32Low's comment)
		}
		check(v)
	}
}
