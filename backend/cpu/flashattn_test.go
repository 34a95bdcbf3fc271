package cpu

import (
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/infergo/infer/tensor"
)

// TestFmaF32 checks tensor.Fmaf against a·b+c computed exactly and rounded once to float32,
// on random operands and on sums that land near float32 rounding midpoints (where a
// plain float64 sum would round twice).
func TestFmaF32(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	check := func(a, b, c float32) {
		if got, want := tensor.Fmaf(a, b, c), exact(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("tensor.Fmaf(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	for range 200000 {
		a, b := float32(r.NormFloat64()), float32(r.NormFloat64())
		check(a, b, float32(r.NormFloat64()))
		// c close to -a·b: cancellation. c with a far larger exponent: the product falls
		// below c's last bit, near a midpoint when its leading bit is half an ulp.
		check(a, b, -float32(float64(a)*float64(b)))
		c := float32(math.Ldexp(1+float64(r.Intn(1<<23))/(1<<23), 30))
		check(float32(math.Ldexp(1, 6)), float32(1+math.Ldexp(float64(r.Intn(8)), -23)), c)
	}
	for range 200000 { // results near and below 2^-126 (float32 subnormals), zeros
		a := float32(math.Ldexp(r.NormFloat64(), -60-r.Intn(30)))
		b := float32(math.Ldexp(r.NormFloat64(), -60-r.Intn(30)))
		check(a, b, float32(math.Ldexp(r.NormFloat64(), -126-r.Intn(24))))
		check(a, b, -float32(float64(a)*float64(b)))
		check(a, b, 0)
	}
	check(1, float32(math.Ldexp(1, -24)), 1) // an exact tie: to even
	// (1+2^-12)·(1-2^-12+2^-24)·2^-24 = 2^-24 + 2^-60: the float64 sum 1 + 2^-24 is a
	// float32 tie, which a second rounding sends down; the exact sum rounds up.
	a, b := float32(1+math.Ldexp(1, -12)), float32(math.Ldexp(1-math.Ldexp(1, -12)+math.Ldexp(1, -24), -24))
	if fma32(a, b, 1) == exact(a, b, 1) {
		t.Fatal("the double-rounding case rounds once in fma32 too; it tests nothing")
	}
	check(a, b, 1)
	check(-a, b, -1)
}

// TestMadRowF16FMA checks that ggml_vec_mad_f16's step acc += v·s is one FMA then an
// F16 rounding, as GCC compiles llama.cpp's scalar loop, at every kernel level: these
// operands (found by search) give another F16 value when the product is rounded to
// float32 first.
func TestMadRowF16FMA(t *testing.T) {
	for _, c := range []struct {
		acc, v uint16
		s      uint32
		want   uint16 // F16(fma(v, s, acc)); mul then add gives want±1
	}{
		{0x3c84, 0xbf29, 0x3f303faf, 0xae9f},
		{0x3704, 0xbdf3, 0x3e9661df, 0x16af},
		{0xbd16, 0x3c5b, 0x3f7b4767, 0xb27d},
	} {
		s := math.Float32frombits(c.s)
		if rounded := toF16(fromF16(c.acc) + float32(fromF16(c.v)*s)); rounded == c.want {
			t.Fatalf("case %#04x: mul then add gives the FMA's value too; the case tests nothing", c.acc)
		}
		for _, n := range []int{1, 8, 32} {
			acc, v := make([]uint16, n), make([]uint16, n)
			for i := range acc {
				acc[i], v[i] = c.acc, c.v
			}
			a2 := append([]uint16(nil), acc...)
			madRowF16(acc, v, s)
			madRowF16Go(a2, v, s)
			for i := range acc {
				if acc[i] != c.want || a2[i] != c.want {
					t.Fatalf("n=%d acc %#04x + %#04x·%g: madRowF16 %#04x, Go %#04x, want %#04x", n, c.acc, c.v, s, acc[i], a2[i], c.want)
				}
			}
		}
	}
}
