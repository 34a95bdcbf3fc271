package tensor_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

// randRow returns n values: normal with the given scale plus an offset, with every
// 16th value an outlier, so blocks have mixed signs, skewed ranges and a dominant value.
func randRow(r *rand.Rand, n int, scale, offset float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		v := r.NormFloat64()*scale + offset
		if i%16 == 5 {
			v *= 4
		}
		x[i] = float32(v)
	}
	return x
}

// blockBound is the largest dequantization error a block format allows by design, given
// the float32 block x and its encoded bytes b.
type blockBound func(x []float32, b []byte) float64

// half reads the f16 at b[0:2].
func half(b []byte) float64 { return float64(tensor.F16ToF32(uint16(b[0]) | uint16(b[1])<<8)) }

const f16Eps = 0x1p-11 // relative rounding error of a normal half

// symmetricBound is for d = max/-nmax formats (Q4_0 nmax 8, Q5_0 nmax 16): values on the
// side of the extreme map into [-nmax, nmax-1] with error d/2; values of the other sign
// reach +nmax, are clamped to nmax-1 and may be off by a whole step d. The stored d is
// rounded to f16, which moves a level q by at most nmax*|d-d16|.
func symmetricBound(nmax float64) blockBound {
	return func(x []float32, b []byte) float64 {
		var amax float64
		for _, v := range x {
			amax = max(amax, math.Abs(float64(v)))
		}
		d := amax / nmax
		return d + nmax*d*f16Eps + 1e-6*amax
	}
}

// absMaxBound is for Q8_0/Q8_1: d = amax/127, every level rounds to nearest, error d/2,
// plus 127 times the f16 rounding of d.
func absMaxBound(x []float32, b []byte) float64 {
	var amax float64
	for _, v := range x {
		amax = max(amax, math.Abs(float64(v)))
	}
	d := amax / 127
	return d/2 + 127*d*f16Eps + 1e-6*amax
}

// minMaxBound is for d = (max-min)/nmax with an offset m = min (Q4_1 nmax 15, Q5_1 nmax
// 31): rounding to the nearest level costs d/2, the f16 roundings of d and of m add
// nmax*|d-d16| and |m-m16|.
func minMaxBound(nmax float64) blockBound {
	return func(x []float32, b []byte) float64 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range x {
			lo, hi = min(lo, float64(v)), max(hi, float64(v))
		}
		d := (hi - lo) / nmax
		m := math.Abs(lo - half(b[2:]))
		return d/2 + nmax*d*f16Eps + m + 1e-6*(hi-lo+math.Abs(lo))
	}
}

func TestQuantizeRoundTripBounds(t *testing.T) {
	tests := []struct {
		typ   tensor.DType
		bound blockBound
	}{
		{tensor.Q4_0, symmetricBound(8)},
		{tensor.Q4_1, minMaxBound(15)},
		{tensor.Q5_0, symmetricBound(16)},
		{tensor.Q5_1, minMaxBound(31)},
		{tensor.Q8_0, absMaxBound},
		{tensor.Q8_1, absMaxBound},
	}
	r := rand.New(rand.NewPCG(7, 8))
	const n = 64 * tensor.QK
	for _, tc := range tests {
		t.Run(tc.typ.String(), func(t *testing.T) {
			for _, offset := range []float64{0, 0.7, -3} {
				x := randRow(r, n, 1, offset)
				q := make([]byte, tc.typ.RowBytes(n))
				if err := tensor.Quantize(tc.typ, q, x); err != nil {
					t.Fatal(err)
				}
				y := make([]float32, n)
				if err := tensor.Dequantize(tc.typ, y, q); err != nil {
					t.Fatal(err)
				}
				bb := tc.typ.BlockBytes()
				var worst float64 // largest error as a fraction of its bound
				for ib := 0; ib < n/tensor.QK; ib++ {
					xb, yb := x[ib*tensor.QK:][:tensor.QK], y[ib*tensor.QK:][:tensor.QK]
					bound := tc.bound(xb, q[ib*bb:][:bb])
					for j := range xb {
						e := math.Abs(float64(xb[j]) - float64(yb[j]))
						if e > bound {
							t.Fatalf("offset %g block %d elem %d: |%g - %g| = %g > bound %g", offset, ib, j, xb[j], yb[j], e, bound)
						}
						worst = max(worst, e/bound)
					}
				}
				if worst < 0.3 {
					t.Errorf("offset %g: largest error only %.2f of the bound: bound too loose to test anything", offset, worst)
				}
			}
		})
	}
}

// TestQ8_1SumField checks that s is the f16 of d times the sum of the quants, with d
// the float32 scale amax/127.
func TestQ8_1SumField(t *testing.T) {
	x := randRow(rand.New(rand.NewPCG(9, 9)), 8*tensor.QK, 1, 0.3)
	q := make([]byte, tensor.Q8_1.RowBytes(len(x)))
	if err := tensor.Quantize(tensor.Q8_1, q, x); err != nil {
		t.Fatal(err)
	}
	for ib, b := 0, q; len(b) > 0; ib, b = ib+1, b[tensor.Q8_1.BlockBytes():] {
		var sum int32
		for _, v := range b[4 : 4+tensor.QK] {
			sum += int32(int8(v))
		}
		var amax float32 // s uses the float32 d = amax/127, not its f16 rounding
		for _, v := range x[ib*tensor.QK:][:tensor.QK] {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		want := tensor.F32ToF16(float32(sum) * (amax / 127))
		if got := uint16(b[2]) | uint16(b[3])<<8; got != want {
			t.Errorf("s = %#04x, want f16(%d*d) = %#04x", got, sum, want)
		}
	}
}

// TestQuantizeZeroBlock: an all-zero block encodes as d = 0 (and m = 0) and decodes to zeros.
func TestQuantizeZeroBlock(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0, tensor.Q8_1, tensor.F16, tensor.BF16} {
		n := tensor.QK
		q := make([]byte, typ.RowBytes(n))
		for i := range q {
			q[i] = 0xAA
		}
		if err := tensor.Quantize(typ, q, make([]float32, n)); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, n)
		for i := range y {
			y[i] = 1
		}
		if err := tensor.Dequantize(typ, y, q); err != nil {
			t.Fatal(err)
		}
		for i, v := range y {
			if v != 0 {
				t.Errorf("%v: zero row decodes to y[%d] = %g", typ, i, v)
				break
			}
		}
	}
}

// TestHalfFormatsRoundTrip: values representable in F16/BF16 survive exactly; others
// come back within half a unit in the last place.
func TestHalfFormatsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1000
	for _, tc := range []struct {
		typ     tensor.DType
		toF32   func(uint16) float32
		relULP2 float64 // half an ulp, relative
	}{
		{tensor.F16, tensor.F16ToF32, 0x1p-11},
		{tensor.BF16, tensor.BF16ToF32, 0x1p-8},
	} {
		exact := make([]float32, n)
		for i := range exact {
			for exact[i] = tc.toF32(uint16(r.Uint32())); exact[i] != exact[i]; {
				exact[i] = tc.toF32(uint16(r.Uint32()))
			}
		}
		q := make([]byte, tc.typ.RowBytes(n))
		y := make([]float32, n)
		if err := tensor.Quantize(tc.typ, q, exact); err != nil {
			t.Fatal(err)
		}
		if err := tensor.Dequantize(tc.typ, y, q); err != nil {
			t.Fatal(err)
		}
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(exact[i]) {
				t.Fatalf("%v: representable %g came back as %g", tc.typ, exact[i], y[i])
			}
		}
		x := randRow(r, n, 3, 0)
		if err := tensor.Quantize(tc.typ, q, x); err != nil {
			t.Fatal(err)
		}
		if err := tensor.Dequantize(tc.typ, y, q); err != nil {
			t.Fatal(err)
		}
		for i := range y {
			if e := math.Abs(float64(y[i] - x[i])); e > tc.relULP2*math.Abs(float64(x[i]))+0x1p-24 {
				t.Fatalf("%v: %g came back as %g", tc.typ, x[i], y[i])
			}
		}
	}
}
