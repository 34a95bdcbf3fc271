package tensor

import (
	"fmt"
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

// TestExact48: the float64 sum of an exact product p = d·s (d a product of two F16 values,
// subnormal ones too) and a float32 multiple of 2^-48 is exact wherever exact48 holds; and
// the bound is not loose: just above it, sums that are not exact exist.
func TestExact48(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	half := func() float32 {
		if r.IntN(8) == 0 {
			return F16ToF32(uint16(r.IntN(0x400)) | uint16(r.IntN(2))<<15)
		}
		return F16ToF32(F32ToF16(float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(30)-15)))))
	}
	twoSumErr := func(p, z float64) float64 {
		v := p + z
		bz := v - p
		return (p - (v - bz)) + (z - bz)
	}
	checked, inexact := 0, 0
	for range 1000000 {
		p := float64(half()*half()) * float64(r.IntN(1<<17+1)-1<<16)
		// z: a float32 of up to 24 bits, a multiple of 2^-48, below 2^6 in magnitude
		z := float64(float32(math.Ldexp(float64(r.IntN(1<<24)-1<<23), -48+r.IntN(31))))
		if r.IntN(2) == 0 {
			z = float64(float32(z - p)) // a sum of a few bits: cancellation
		}
		v := p + z
		if exact48(v) {
			checked++
			if e := twoSumErr(p, z); e != 0 {
				t.Fatalf("exact48(%g + %g): the sum is off by %g", p, z, e)
			}
		}
	}
	// Just above 2^5: the float32 z in [32, 64) and an odd multiple of 2^-48 need 54 bits.
	for range 1000 {
		z := float64(float32(32 + 32*r.Float64()))
		p := float64(F16ToF32(1)*F16ToF32(1)) * float64(2*r.IntN(100)+1) // 2^-48·odd
		if v := p + z; twoSumErr(p, z) != 0 {
			inexact++
			if exact48(v) {
				t.Fatalf("exact48(%g) holds for a sum that is not exact", v)
			}
		}
	}
	if checked < 100000 || inexact < 900 {
		t.Errorf("%d exact sums checked, %d inexact ones above 2^5: the cases are not exercised", checked, inexact)
	}
}

// TestTilesMidpoints: the Q8_0 and Q4_0 Go tiles (the x86 order and the repack ones) on
// blocks whose scales are powers of two, so that many of the float32 FMAs land on
// midpoints (the rounding cases of exact48 and midFix), give their Go code's bits.
func TestTilesMidpoints(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	pow2 := func() uint16 { return F32ToF16(float32(math.Ldexp(1, r.IntN(12)-9))) | uint16(r.IntN(2))<<15 }
	for _, c := range tileOrders() {
		if c.typ != Q8_0 && c.typ != Q4_0 || c.name == "generic" {
			continue
		}
		t.Run(fmt.Sprintf("%v/%s", c.typ, c.name), func(t *testing.T) {
			typ, bb := c.typ, c.typ.BlockBytes()
			mids, fmas := 0, 0
			for trial := range 40 {
				nb := 1 + r.IntN(24)
				mw, mx := 2+r.IntN(10), 1+r.IntN(9)
				if trial%3 == 0 {
					mx = 1
				}
				n := QK * nb
				ws, xs := typ.RowBytes(n), Q8_0.RowBytes(n)
				w := make([]byte, mw*ws)
				randomWeights(r, typ, w)
				x := make([]byte, mx*xs)
				for i := range mx {
					if err := QuantizeActivations(Q8_0, x[i*xs:(i+1)*xs], randActivations(r, n)); err != nil {
						t.Fatal(err)
					}
				}
				for k := 0; k+bb <= len(w); k += bb { // power-of-two scales
					h := pow2()
					w[k], w[k+1] = byte(h), byte(h>>8)
				}
				for k := 0; k+q8_0Bytes <= len(x); k += q8_0Bytes {
					h := pow2()
					x[k], x[k+1] = byte(h), byte(h>>8)
				}
				dst := make([]float32, mx*mw)
				c.tile(n, w, ws, mw, x, xs, mx, dst, mw)
				for i := range mx {
					ref := c.ref
					if c.gemm != nil && i < mx-mx%X86RepackGemmRows {
						ref = c.gemm
					}
					for o := range mw {
						if want := ref(n, w[o*ws:], x[i*xs:]); math.Float32bits(dst[i*mw+o]) != math.Float32bits(want) {
							t.Fatalf("trial %d (%d blocks, %d×%d): [%d][%d] = %.9g, Go %.9g", trial, nb, mx, mw, i, o, dst[i*mw+o], want)
						}
						m, f := countMidpoints(typ, c.name, n, w[o*ws:], x[i*xs:])
						mids, fmas = mids+m, fmas+f
					}
				}
			}
			t.Logf("%d of %d FMAs on midpoints", mids, fmas)
			if mids < 200 {
				t.Errorf("%d of %d FMAs on midpoints: too few to test their rounding", mids, fmas)
			}
		})
	}
}

// countMidpoints counts the FMAs of the Go order (the x86 one's lanes, or the repack
// one's block sums) whose float64 sum lies on a float32 midpoint.
func countMidpoints(typ DType, order string, n int, w, x []byte) (mids, fmas int) {
	var acc [lanes8]float32
	var q [QK]byte
	for b := range n / QK {
		wb, xb := w[b*typ.BlockBytes():], x[b*q8_0Bytes:]
		d := halfAt(wb) * halfAt(xb)
		if typ == Q4_0 { // levels u−8 as int8 quants
			for k := range QK / 2 {
				q[k], q[k+QK/2] = wb[2+k]&15-8, wb[2+k]>>4-8
			}
		} else {
			copy(q[:], wb[2:2+QK])
		}
		var s [lanes8]int32
		for k := range QK {
			s[k/4] += int32(int8(q[k])) * int32(int8(xb[2+k]))
		}
		if order != "x86" { // one FMA of the block sum
			var sum int32
			for _, v := range s {
				sum += v
			}
			s = [lanes8]int32{sum}
		}
		for l := range acc {
			if order != "x86" && l > 0 {
				break
			}
			fmas++
			if fmafMid(float64(d)*float64(s[l]) + float64(acc[l])) {
				mids++
			}
			acc[l] = fmaf(d, float32(s[l]), acc[l])
		}
	}
	return mids, fmas
}
