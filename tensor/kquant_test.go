package tensor_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/tensor"
)

var kTypes = []tensor.DType{tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.Q8_K}

// kqRoundTrip quantizes x to typ and returns the bytes and their dequantization.
func kqRoundTrip(t testing.TB, typ tensor.DType, x []float32) ([]byte, []float32) {
	t.Helper()
	q := make([]byte, typ.RowBytes(len(x)))
	if err := tensor.Quantize(typ, q, x); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	if err := tensor.Dequantize(typ, y, q); err != nil {
		t.Fatal(err)
	}
	return q, y
}

// kqNormal returns n values drawn from N(mean, sigma²).
func kqNormal(r *rand.Rand, n int, sigma, mean float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(mean + sigma*r.NormFloat64())
	}
	return x
}

// TestKBlockBytes checks the block sizes against sizeof(block_q*_K) in ggml-common.h.
func TestKBlockBytes(t *testing.T) {
	want := map[tensor.DType]int{
		tensor.Q2_K: 84, tensor.Q3_K: 110, tensor.Q4_K: 144,
		tensor.Q5_K: 176, tensor.Q6_K: 210, tensor.Q8_K: 292,
	}
	for _, typ := range kTypes {
		if typ.BlockSize() != 256 || typ.BlockBytes() != want[typ] || typ.VecDotType() != tensor.Q8_K {
			t.Errorf("%v: block %d elements, %d bytes, vec dot %v; want 256, %d, Q8_K",
				typ, typ.BlockSize(), typ.BlockBytes(), typ.VecDotType(), want[typ])
		}
	}
}

// TestKQuantizeErrorBounds bounds the relative RMS error of a round trip of Gaussian
// data. A uniform quantizer with step Δ has RMS error Δ/√12; the expected steps are
//
//	Q2_K: range of 16 normals (≈3.5σ) / 3    → 0.29σ
//	Q3_K: max |x| of 16 normals (≈2.0σ) / 4  → 0.14σ
//	Q4_K: range of 32 normals (≈4.1σ) / 15   → 0.079σ
//	Q5_K: range of 32 normals / 31           → 0.038σ
//	Q6_K: max |x| of 16 normals / 32         → 0.018σ
//	Q8_K: max |x| of 256 normals (≈2.9σ)/127 → 0.0066σ
//
// and the bounds allow about 25% above that. A wrong bit layout or scale gives errors
// of the order of σ.
func TestKQuantizeErrorBounds(t *testing.T) {
	bound := map[tensor.DType]float64{
		tensor.Q2_K: 0.36, tensor.Q3_K: 0.18, tensor.Q4_K: 0.095,
		tensor.Q5_K: 0.047, tensor.Q6_K: 0.022, tensor.Q8_K: 0.0083,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range kTypes {
		for _, d := range []struct{ sigma, mean float64 }{{1, 0}, {0.02, 0}, {0.02, 0.01}} {
			t.Run(fmt.Sprintf("%v/N(%g,%g)", typ, d.mean, d.sigma), func(t *testing.T) {
				x := kqNormal(r, 256*32, d.sigma, d.mean)
				_, y := kqRoundTrip(t, typ, x)
				var e2, x2 float64
				for i := range x {
					e := float64(x[i]) - float64(y[i])
					e2 += e * e
					x2 += float64(x[i]) * float64(x[i])
				}
				if rel := math.Sqrt(e2 / x2); rel > bound[typ] {
					t.Errorf("relative RMS error %.4f > %.4f", rel, bound[typ])
				}
			})
		}
	}
}

// kqGrid returns 256·blocks values that typ represents exactly: levels q drawn from
// [lo, hi] (each 16- or 32-element sub-block using both ends), as s·q − m.
func kqGrid(r *rand.Rand, blocks, sub int, lo, hi int, s, m float32) []float32 {
	x := make([]float32, 256*blocks)
	for i := range x {
		q := lo + r.IntN(hi-lo+1)
		switch i % sub {
		case 0:
			q = lo
		case 1:
			q = hi
		}
		x[i] = s*float32(q) - m
	}
	return x
}

// TestKQuantizeGridExact: data already on a type's grid comes back bit for bit. The
// scales are chosen so that d, dmin and the sub-block scales are exact (powers of two,
// or 15·2^k and 63·2^k for the types that quantize scales to 4 and 6 bits).
func TestKQuantizeGridExact(t *testing.T) {
	tests := []struct {
		typ    tensor.DType
		sub    int
		lo, hi int
		s, m   float32
	}{
		{tensor.Q2_K, 16, 0, 3, 15.0 / 64, 15.0 / 128},
		{tensor.Q3_K, 16, -4, 3, 1.0 / 8, 0},
		{tensor.Q4_K, 32, 0, 15, 63.0 / 1024, 63.0 / 2048},
		{tensor.Q5_K, 32, 0, 31, 63.0 / 2048, 63.0 / 4096},
		{tensor.Q6_K, 16, -32, 31, 1.0 / 32, 0},
		{tensor.Q8_K, 256, -127, 127, 1.0 / 64, 0},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range tests {
		t.Run(tt.typ.String(), func(t *testing.T) {
			x := kqGrid(r, 8, tt.sub, tt.lo, tt.hi, tt.s, tt.m)
			_, y := kqRoundTrip(t, tt.typ, x)
			for i := range x {
				if x[i] != y[i] {
					t.Fatalf("x[%d] = %g decodes to %g", i, x[i], y[i])
				}
			}
		})
	}
}

// TestKQuantizeDegenerate: zero rows decode to zeros; rows with a single non-zero value
// or tiny values stay finite and keep the large value's sign.
func TestKQuantizeDegenerate(t *testing.T) {
	for _, typ := range kTypes {
		zero := make([]float32, 512)
		q, y := kqRoundTrip(t, typ, zero)
		for i, v := range y {
			if v != 0 {
				t.Fatalf("%v: zero row decodes to y[%d] = %g (bytes % x)", typ, i, v, q[:8])
			}
		}
		for _, v := range []float32{3, -3, 1e-30, 6e4} {
			x := make([]float32, 256)
			x[37] = v
			for i := 100; i < 110; i++ {
				x[i] = v * 1e-3
			}
			_, y := kqRoundTrip(t, typ, x)
			for i, w := range y {
				if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
					t.Fatalf("%v: x[37] = %g: y[%d] = %g", typ, v, i, w)
				}
			}
			if math.Abs(float64(v)) > 1e-3 && (y[37] > 0) != (v > 0) {
				t.Errorf("%v: x[37] = %g decodes to %g", typ, v, y[37])
			}
		}
	}
}

// TestQ8KBlock checks each Q8_K block: bsums are the sums of 16 quants, quants lie in
// [-127, 127], the largest magnitude maps to ∓127, and every value is within d/2.
func TestQ8KBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := kqNormal(r, 256*16, 1, 0.1)
	q, y := kqRoundTrip(t, tensor.Q8_K, x)
	for ib := 0; ib < len(x)/256; ib++ {
		b := q[ib*292 : (ib+1)*292]
		d := math.Float32frombits(binary.LittleEndian.Uint32(b))
		var amax float32
		for _, v := range x[ib*256 : (ib+1)*256] {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		if got := float64(amax / 127); math.Abs(math.Abs(float64(d))-got) > 1e-6*got {
			t.Errorf("block %d: |d| = %g, want max|x|/127 = %g", ib, d, got)
		}
		for j := range 16 {
			sum := 0
			for _, v := range b[4+16*j : 4+16*j+16] {
				sum += int(int8(v))
				if int8(v) == -128 {
					t.Errorf("block %d: quant -128", ib)
				}
			}
			if got := int(int16(binary.LittleEndian.Uint16(b[260+2*j:]))); got != sum {
				t.Errorf("block %d: bsums[%d] = %d, want %d", ib, j, got, sum)
			}
		}
		for i := ib * 256; i < (ib+1)*256; i++ {
			if e := math.Abs(float64(x[i] - y[i])); e > 0.5001*math.Abs(float64(d)) {
				t.Fatalf("x[%d] = %g decodes to %g: error > d/2 = %g", i, x[i], y[i], d/2)
			}
		}
	}
}
