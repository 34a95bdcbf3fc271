package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFastKernelsBits checks that the assembly forms of simd.go's kernels give the bits
// of the Go code, on values of widely spread magnitudes (where double rounding, signed
// zeros and cancellations show) and ordinary ones, for lengths around the block sizes.
func TestFastKernelsBits(t *testing.T) {
	t.Logf("AVX-512: %v", hasAVX512)
	r := rand.New(rand.NewPCG(5, 6))
	gen := func(n int, wide bool) []float32 {
		v := make([]float32, n)
		for i := range v {
			x := r.NormFloat64()
			if wide {
				x = math.Ldexp(x, r.IntN(60)-30)
				if r.IntN(16) == 0 {
					x = 0
				}
			}
			v[i] = float32(x)
		}
		return v
	}
	for trial := range 400 {
		n := []int{1, 8, 15, 16, 17, 32, 63, 64, 65, 100, 128, 172, 256, 300, 768}[trial%15]
		wide := trial%2 == 0
		a, b := gen(n, wide), gen(n, wide)
		for _, pad := range []int{n, (n + 63) &^ 63} {
			if got, want := vecDotF32(a, b, pad), vecDotF32Go(a, b, pad); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("vecDotF32 n=%d pad=%d: %g, Go %g", n, pad, got, want)
			}
		}
		ah, bh := make([]uint16, n), make([]uint16, n)
		for i := range a {
			ah[i], bh[i] = toF16(a[i]), toF16(b[i])
		}
		if got, want := vecDotF16(ah, bh), vecDotF16Go(ah, bh); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("vecDotF16 n=%d: %g, Go %g", n, got, want)
		}
		if got, want := sgemmF16(ah, bh), sgemmF16Go(ah, bh); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("sgemmF16 n=%d: %g, Go %g", n, got, want)
		}
		if got, want := sgemmF32(a, b), sgemmF32Go(a, b); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("sgemmF32 n=%d: %g, Go %g", n, got, want)
		}
	}
}

// TestFastF16RowsBits checks the assembly F16 row kernels of attendOneChunk against
// their Go loops, bit for bit, including results that overflow or go subnormal in F16.
func TestFastF16RowsBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := []int{8, 16, 24, 32, 64, 128}[trial%6]
		k, v, acc := make([]uint16, n), make([]uint16, n), make([]uint16, n)
		qf := make([]float32, n)
		for i := range k {
			e := r.IntN(40) - 25
			k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), e)))
			v[i] = toF16(float32(math.Ldexp(r.NormFloat64(), e)))
			acc[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-25)))
			qf[i] = fromF16(toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(20)-10))))
		}
		if n < 4*lanes { // one key's score: the float64 sum alone
			var got [1]float32
			chunkScores(got[:], k, qf, kvHead{cols: n, n: 1})
			if want := float32(scoreF16Go(k, qf)); math.Float32bits(got[0]) != math.Float32bits(want) {
				t.Fatalf("chunkScores n=%d: %g, Go %g", n, got[0], want)
			}
		}
		s := float32(math.Ldexp(r.Float64(), r.IntN(10)-5))
		a1, a2 := append([]uint16(nil), acc...), append([]uint16(nil), acc...)
		madRowF16(a1, v, s)
		madRowF16Go(a2, v, s)
		for i := range a1 {
			if a1[i] != a2[i] {
				t.Fatalf("madRowF16 n=%d [%d]: %#x, Go %#x", n, i, a1[i], a2[i])
			}
		}
		f1, f2 := make([]float32, n), make([]float32, n)
		for i := range f1 {
			f1[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-20))
			f2[i] = f1[i]
		}
		accRowF16(f1, v, s)
		accRowF16Go(f2, v, s)
		for i := range f1 {
			if math.Float32bits(f1[i]) != math.Float32bits(f2[i]) {
				t.Fatalf("accRowF16 n=%d [%d]: %g, Go %g", n, i, f1[i], f2[i])
			}
		}
		scaleRowF16(a1, s)
		scaleRowF16Go(a2, s)
		for i := range a1 {
			if a1[i] != a2[i] {
				t.Fatalf("scaleRowF16 n=%d [%d]: %#x, Go %#x", n, i, a1[i], a2[i])
			}
		}
	}
}

// TestFastSwiGLUBits checks swigluRow's assembly against the Go lanes, bit for bit, over
// the whole range of vexpf (underflow, overflow, infinities, zeros, subnormals).
func TestFastSwiGLUBits(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), 88, -88, 89, -89,
		103, -103, 104, -104, 130, -130, 200, -200, 1e-40, -1e-40, 0x1p-149, math.MaxFloat32, -math.MaxFloat32}
	for trial := range 2000 {
		n := []int{16, 32, 48, 172, 768}[trial%5]
		g, u := make([]float32, n), make([]float32, n)
		for i := range g {
			switch r.IntN(8) {
			case 0:
				g[i] = specials[r.IntN(len(specials))]
			case 1:
				g[i] = float32(r.Float64()*400 - 200)
			case 2:
				g[i] = math.Float32frombits(r.Uint32())
				if g[i] != g[i] {
					g[i] = 1
				}
			default:
				g[i] = float32(r.NormFloat64() * 4)
			}
			u[i] = float32(r.NormFloat64())
		}
		got, want := make([]float32, n), make([]float32, n)
		swigluRow(got, g, u)
		swigluRowGo(want, g, u)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("swiglu(%g, %g) = %g (%#x), Go %g (%#x)", g[i], u[i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// TestFastTileScoresBits checks attendTiled's eight-key score kernel against the Go
// chains, bit for bit, for heads of several sizes inside a wider cache row.
func TestFastTileScoresBits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 200 {
		hd := []int{8, 16, 32, 64, 128}[trial%5]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(80)
		k := make([]uint16, (nkeys+r.IntN(9))*cols) // cache rows past the keys, sometimes
		for i := range k {
			k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(30)-15)))
		}
		q := make([]float32, hd)
		for i := range q {
			q[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(30)-15))
		}
		h := kvHead{off: r.IntN(kvHeads) * hd, cols: cols, n: nkeys}
		t0 := r.IntN(nkeys)
		n := min(faTile, nkeys-t0)
		got, want := make([]float32, n), make([]float32, n)
		tileScores(got, q, k, t0, h, 0.125)
		tileScoresGo(want, q, k, t0, h, 0.125)
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("hd=%d key %d: %g, Go %g", hd, t0+j, got[j], want[j])
			}
		}
	}
}
