package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestF16ToF32AVX2: VCVTPH2PS, which the kernels use, gives the bits of the F16ToF32
// table for every half, NaNs included.
func TestF16ToF32AVX2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2/F16C")
	}
	h := make([]uint16, 1<<16)
	for i := range h {
		h[i] = uint16(i)
	}
	f := make([]float32, len(h))
	f16ToF32AVX2(&h[0], &f[0], len(h)/8)
	for i, v := range f {
		if math.Float32bits(v) != math.Float32bits(F16ToF32(uint16(i))) {
			t.Fatalf("half %#04x: VCVTPH2PS %#08x, table %#08x", i, math.Float32bits(v), math.Float32bits(F16ToF32(uint16(i))))
		}
	}
}

// fastDots pairs each dot product as dispatched on this machine with its Go code.
var fastDots = []struct {
	typ        DType
	fast, slow func(n int, w, x []byte) float32
}{
	{F32, dotF32, dotF32Go},
	{F16, dotF16, dotF16Go},
	{BF16, dotBF16, dotBF16Go},
	{Q4_0, dotQ4_0, dotQ4_0Go},
	{Q4_1, dotQ4_1, dotQ4_1Go},
	{Q5_0, dotQ5_0, dotQ5_0Go},
	{Q5_1, dotQ5_1, dotQ5_1Go},
	{Q8_0, dotQ8_0, dotQ8_0Go},
	{Q2_K, dotQ2K, dotQ2KGo},
	{Q3_K, dotQ3K, dotQ3KGo},
	{Q4_K, dotQ4K, dotQ4KGo},
	{Q5_K, dotQ5K, dotQ5KGo},
	{Q6_K, dotQ6K, dotQ6KGo},
}

// TestDotFastMatchesGo: on this machine's fast path (AVX2 where present), every dot
// product gives the same bits as the Go code, on random bytes (quants and block sums
// outside what the quantizers produce included) and on quantized random rows.
func TestDotFastMatchesGo(t *testing.T) {
	if !hasAVX2 {
		t.Log("no AVX2/F16C: the fast path is the Go code")
	}
	r := rand.New(rand.NewPCG(31, 32))
	for _, d := range fastDots {
		var lens []int
		switch d.typ.BlockSize() {
		case 1:
			lens = []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 4096, 4103}
		case QK:
			lens = []int{32, 224, 256, 288, 512 + 7*32, 4096, 4096 + 3*32}
		default:
			lens = []int{256, 512, 2048, 4096, 11008 / 256 * 256}
		}
		for _, n := range lens {
			t.Run(fmt.Sprintf("%v/%d", d.typ, n), func(t *testing.T) {
				for trial := range 30 {
					var w, x []byte
					switch trial % 3 {
					case 0, 1:
						w = randomRow(r, d.typ, n, trial%3 == 1)
						x = randomRow(r, d.typ.VecDotType(), n, trial%3 == 1)
					case 2:
						w = make([]byte, d.typ.RowBytes(n))
						x = make([]byte, d.typ.VecDotType().RowBytes(n))
						f := make([]float32, n)
						for i := range f {
							f[i] = float32(r.NormFloat64() * 0.1)
						}
						quantizeOrFatal(t, d.typ, w, f)
						for i := range f {
							f[i] = float32(r.NormFloat64())
						}
						quantizeOrFatal(t, d.typ.VecDotType(), x, f)
					}
					got, want := d.fast(n, w, x), d.slow(n, w, x)
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("trial %d: fast %.9g (%#08x), Go %.9g (%#08x)", trial, got, math.Float32bits(got), want, math.Float32bits(want))
					}
				}
			})
		}
	}
}

// TestDotKernels checks every kernel this machine can run, not only the one dispatched:
// each must give the bits of the Go code over the whole groups of eight blocks it sums.
func TestDotKernels(t *testing.T) {
	type kernel struct {
		name string
		typ  DType
		ok   bool
		f    func(w, x *byte, ng int) float32
		slow func(n int, w, x []byte) float32
	}
	kernels := []kernel{
		{"dotQ8_0AVX2", Q8_0, hasAVX2, dotQ8_0AVX2, dotQ8_0Go},
		{"dotQ8_0VNNI", Q8_0, hasVNNI, dotQ8_0VNNI, dotQ8_0Go},
		{"dotQ4_0AVX2", Q4_0, hasAVX2, dotQ4_0AVX2, dotQ4_0Go},
		{"dotQ4_0VNNI", Q4_0, hasVNNI, dotQ4_0VNNI, dotQ4_0Go},
		{"dotQ4_1AVX2", Q4_1, hasAVX2, dotQ4_1AVX2, dotQ4_1Go},
		{"dotQ4_1VNNI", Q4_1, hasVNNI, dotQ4_1VNNI, dotQ4_1Go},
		{"dotQ5_0AVX2", Q5_0, hasAVX2, dotQ5_0AVX2, dotQ5_0Go},
		{"dotQ5_0VNNI", Q5_0, hasVNNI, dotQ5_0VNNI, dotQ5_0Go},
		{"dotQ5_1AVX2", Q5_1, hasAVX2, dotQ5_1AVX2, dotQ5_1Go},
		{"dotQ5_1VNNI", Q5_1, hasVNNI, dotQ5_1VNNI, dotQ5_1Go},
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, k := range kernels {
		if !k.ok {
			t.Logf("%s: not supported here", k.name)
			continue
		}
		for _, ng := range []int{1, 2, 5, 16} {
			n := 8 * QK * ng
			for trial := range 20 {
				w := randomRow(r, k.typ, n, false)
				x := randomRow(r, k.typ.VecDotType(), n, false)
				got, want := k.f(&w[0], &x[0], ng), k.slow(n, w, x)
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%s, %d groups, trial %d: %.9g, Go %.9g", k.name, ng, trial, got, want)
				}
			}
		}
	}
}

// TestKDotKernels: where both run, the AVX2 and the AVX512-VNNI k-quant kernels give the
// same integer sums (the dispatched one is checked against the Go code above).
func TestKDotKernels(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX512-VNNI")
	}
	pairs := []struct {
		typ        DType
		per        int // int32 sums per block
		avx2, vnni func(w, x *byte, nb int, out *int32)
	}{
		{Q6_K, 1, q6KSumsAVX2, q6KSumsVNNI},
	}
	r := rand.New(rand.NewPCG(51, 52))
	for _, p := range pairs {
		for trial := range 50 {
			nb := 1 + trial%kChunk
			n := nb * QKK
			var w, x []byte
			if trial%2 == 0 {
				w, x = randomRow(r, p.typ, n, false), randomRow(r, Q8_K, n, false)
			} else {
				f := make([]float32, n)
				for i := range f {
					f[i] = float32(r.NormFloat64())
				}
				w, x = make([]byte, p.typ.RowBytes(n)), make([]byte, Q8_K.RowBytes(n))
				quantizeOrFatal(t, p.typ, w, f)
				quantizeOrFatal(t, Q8_K, x, f)
			}
			a, b := make([]int32, p.per*nb), make([]int32, p.per*nb)
			p.avx2(&w[0], &x[0], nb, &a[0])
			p.vnni(&w[0], &x[0], nb, &b[0])
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("%v trial %d: sum %d: AVX2 %d, VNNI %d", p.typ, trial, i, a[i], b[i])
				}
			}
		}
	}
}

// TestDotNonPositive: a block format's dot product of n ≤ 0 elements is 0, as in the Go
// code, and reads nothing.
func TestDotNonPositive(t *testing.T) {
	for _, d := range fastDots {
		if d.typ.BlockSize() == 1 {
			continue // the Go code slices [:n], which panics for n < 0
		}
		for _, n := range []int{0, -8 * QKK, -1} {
			got, want := d.fast(n, nil, nil), d.slow(n, nil, nil)
			if math.Float32bits(got) != math.Float32bits(want) || got != 0 {
				t.Errorf("%v, n = %d: fast %g, Go %g", d.typ, n, got, want)
			}
		}
	}
}

// TestDotTileFunc checks that DotTileFunc's tiles give, output for output, the bits of
// DotFunc's dot and of the Go code, for tiles of every width around the four-row step
// and rows with and without whole groups of eight blocks.
func TestDotTileFunc(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, typ := range []DType{Q4_0} {
		tile := DotTileFunc(typ)
		dot, err := DotFunc(typ)
		if tile == nil || err != nil {
			t.Fatalf("%v: no tile or dot (%v)", typ, err)
		}
		for _, n := range []int{32, 64, 224, 256, 288, 768} {
			for _, mx := range []int{1, 3, 4, 5, 8, 9} {
				const mw = 3
				wStride, xStride := typ.RowBytes(n)+5, typ.VecDotType().RowBytes(n)+3
				w := make([]byte, mw*wStride)
				x := make([]byte, mx*xStride)
				for o := 0; o < mw; o++ {
					copy(w[o*wStride:], randomRow(r, typ, n, o == 1))
				}
				for i := 0; i < mx; i++ {
					copy(x[i*xStride:], randomRow(r, typ.VecDotType(), n, i == 2))
				}
				dstStride := mw + 2
				dst := make([]float32, mx*dstStride)
				tile(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
				for i := 0; i < mx; i++ {
					for o := 0; o < mw; o++ {
						want := dot(n, w[o*wStride:], x[i*xStride:])
						goWant := dotQ4_0Go(n, w[o*wStride:], x[i*xStride:])
						got := dst[i*dstStride+o]
						if math.Float32bits(got) != math.Float32bits(want) || math.Float32bits(want) != math.Float32bits(goWant) {
							if !(got != got && want != want && goWant != goWant) {
								t.Fatalf("%v n=%d mx=%d [%d,%d]: tile %g, dot %g, Go %g", typ, n, mx, i, o, got, want, goWant)
							}
						}
					}
				}
			}
		}
	}
}
