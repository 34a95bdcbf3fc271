package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestVexpf checks ggml_v_expf's emulation: within 2.5 ulp of e^x (ARM documents 1.95),
// and its special cases.
func TestVexpf(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x := float32(r.Float64()*180 - 100)
		got, want := float64(vexpf(x)), math.Exp(float64(x))
		if want < 0x1p-126 || want > math.MaxFloat32 {
			continue
		}
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1))) - float32(want))
		if math.Abs(got-want) > 2.5*ulp {
			t.Fatalf("vexpf(%g) = %g, want %g (error %.2f ulp)", x, got, want, math.Abs(got-want)/ulp)
		}
	}
	for _, tt := range []struct{ x, want float32 }{
		{0, 1}, {float32(math.Inf(-1)), 0}, {-200, 0}, {200, float32(math.Inf(1))}, {float32(math.Inf(1)), float32(math.Inf(1))},
	} {
		if got := vexpf(tt.x); got != tt.want {
			t.Errorf("vexpf(%g) = %g, want %g", tt.x, got, tt.want)
		}
	}
	if got := vexpf(float32(math.NaN())); !math.IsNaN(float64(got)) {
		t.Errorf("vexpf(NaN) = %g", got)
	}
}

// TestSIMDDots checks the lane-ordered dot products against float64 sums, padding of
// vecDotF32 with zeros, and that the 16-lane order is what they compute: a sum whose
// result depends on the order is reproduced.
func TestSIMDDots(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{16, 64, 172, 256, 1000} {
		a, b := make([]float32, n), make([]float32, n)
		ah, bh := make([]uint16, n), make([]uint16, n)
		var want, wantH float64
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			ah[i], bh[i] = toF16(a[i]), toF16(b[i])
			want += float64(a[i]) * float64(b[i])
			wantH += float64(fromF16(ah[i])) * float64(fromF16(bh[i]))
		}
		tol := 1e-5 * float64(n)
		check := func(name string, got float32, want float64) {
			if math.Abs(float64(got)-want) > tol {
				t.Errorf("%s n=%d: %g, want %g", name, n, got, want)
			}
		}
		check("vecDotF32", vecDotF32(a, b, n), want)
		check("vecDotF32 padded", vecDotF32(a, b, (n+63)&^63), want)
		check("vecDotF16", vecDotF16(ah, bh), wantH)
		check("sgemmPadded", sgemmPadded(a, b), want)
		if n%16 == 0 {
			check("sgemmF32", sgemmF32(a, b), want)
			check("sgemmF16", sgemmF16(ah, bh), wantH)
		}
	}
	// Lanes 0, 4, 8, 12 hold 2^24, 1, 1, 1. GCC's reduction adds lane 8 to lane 0 (the
	// 1 is lost to rounding) and lane 12 to lane 4 (2), then 2 to 2^24: 2^24+2. A
	// left-to-right sum would lose every 1 and give 2^24.
	var c [lanes]float32
	c[0], c[4], c[8], c[12] = 1<<24, 1, 1, 1
	if got := reduce16(&c); got != 1<<24+2 {
		t.Errorf("reduce16 = %.0f, want %d", got, 1<<24+2)
	}
}
