package cpu

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// TestRound16 checks round16 against the two conversions it replaces, on every float32
// of the subnormal, overflow and NaN boundary ranges, around every F16 value and its
// midpoints, and on a stride through all the others (with INFER_EXHAUSTIVE=1 in the
// environment: on all 2^32).
func TestRound16(t *testing.T) {
	check := func(u uint32) {
		f := math.Float32frombits(u)
		if got, want := round16(f), fromF16(toF16(f)); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("round16(%g [%#08x]) = %g [%#08x], want %g [%#08x]", f, u, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	step := uint64(127)
	if os.Getenv("INFER_EXHAUSTIVE") == "1" {
		step = 1
	}
	for u := uint64(0); u < 1<<32; u += step {
		check(uint32(u))
	}
	for b := uint32(0x38800000); b < 0x477ff000; b++ { // round16Normal's whole domain
		if got, want := round16Normal(b), math.Float32bits(round16(math.Float32frombits(b))); got != want {
			t.Fatalf("round16Normal(%#08x) = %#08x, round16 %#08x", b, got, want)
		}
	}
	for h := range 1 << 16 {
		u := math.Float32bits(fromF16(uint16(h)))
		for _, d := range []uint32{0, 1, 2, 0xFFF, 0x1000, 0x1001, 0x1FFF, 0x2000} {
			check(u + d)
			check(u - d)
		}
	}
	for _, sign := range []uint32{0, 1 << 31} {
		for u := uint32(0); u < 0x38800000+4096; u += 1 + u>>12 { // zero .. 2^-14, dense near the top
			check(sign | u)
		}
		for u := uint32(0x33000000) - 4096; u < 0x38800000+4096; u++ { // 2^-25 .. 2^-14
			check(sign | u)
		}
		for u := uint32(0x477fe000) - 4096; u < 0x47800000+4096; u++ { // 65504 .. 2^16
			check(sign | u)
		}
		for u := uint32(0x7f800000) - 4096; u < 0x7f800000+4096; u++ { // Inf, NaNs
			check(sign | u)
		}
	}
}

// TestMadRow16 checks madRow16 and scaleRow16 against madRowF16Go and scaleRowF16Go
// (through the F16 bits) on accumulators and V values of spread magnitudes, with
// zeros, subnormals, values near the F16 overflow, infinities and NaNs among them.
func TestMadRow16(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	specials := []uint16{0, 0x8000, 1, 0x8001, 0x3ff, 0x400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00}
	randF16 := func() uint16 {
		switch r.IntN(8) {
		case 0:
			return specials[r.IntN(len(specials))]
		case 1:
			return uint16(r.Uint32())
		}
		return toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-24)))
	}
	// Sums below 2^-126 (tensor.FmafHard's second case, which madRow16 leaves to round16) and
	// exact zeros of either sign.
	for _, c := range []struct {
		acc, v uint16
		s      float32
	}{
		{0, 0x3c00, 0x1p-130}, {0x8000, 0xbc00, 0x1p-130}, {0, 0xbc00, 0x1p-149}, {0x8000, 0x8000, 1},
		{0x8000, 0, 1}, {0, 0x8000, 0x1p-140}, {0x0001, 0xbc00, 0x1p-24}, {0x8001, 0x3c00, 0x1p-24},
	} {
		acc, af := []uint16{c.acc}, []float32{fromF16(c.acc)}
		madRow16(af, []uint16{c.v}, c.s)
		madRowF16Go(acc, []uint16{c.v}, c.s)
		if math.Float32bits(af[0]) != math.Float32bits(fromF16(acc[0])) {
			t.Fatalf("madRow16(%#04x + %#04x·%g) = %#08x, madRowF16Go %#04x", c.acc, c.v, c.s, math.Float32bits(af[0]), acc[0])
		}
	}
	for trial := range 20000 {
		n := 1 + trial%40
		acc, v := make([]uint16, n), make([]uint16, n)
		for i := range acc {
			acc[i], v[i] = randF16(), randF16()
		}
		s := float32(math.Ldexp(r.Float64(), -r.IntN(30)))
		switch trial % 5 {
		case 0:
			s = float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-20))
		case 1: // products and sums near and below 2^-126
			s = float32(math.Ldexp(r.NormFloat64(), -90-r.IntN(60)))
		}
		af := make([]float32, n)
		for i, a := range acc {
			af[i] = fromF16(a)
		}
		madRow16(af, v, s)
		madRowF16Go(acc, v, s)
		for i := range acc {
			if got := toF16(af[i]); got != acc[i] || math.Float32bits(af[i]) != math.Float32bits(fromF16(acc[i])) {
				t.Fatalf("madRow16 trial %d [%d] (s %g): %#08x, madRowF16Go %#04x", trial, i, s, math.Float32bits(af[i]), acc[i])
			}
		}
		scaleRow16(af, s)
		scaleRowF16Go(acc, s)
		for i := range acc {
			if math.Float32bits(af[i]) != math.Float32bits(fromF16(acc[i])) {
				t.Fatalf("scaleRow16 trial %d [%d] (s %g): %#08x, scaleRowF16Go %#04x", trial, i, s, math.Float32bits(af[i]), acc[i])
			}
		}
	}
}

// TestChunkScoresGo checks chunkScoresGo against vecDotF16Go key by key, at every
// level (chunkScores tests it only where it runs).
func TestChunkScoresGo(t *testing.T) {
	checkChunkScores(t, rand.New(rand.NewPCG(33, 34)), 300, []int{4, 8, 16, 32, 48, 64, 72, 128}, 40,
		chunkScoresGo)
}

// checkChunkScores checks scores against vecDotF16Go, key by key, bit for bit, over
// trials random heads (of the sizes hds in turn, up to maxKeys keys) inside a cache row
// of one to three heads.
func checkChunkScores(t *testing.T, r *rand.Rand, trials int, hds []int, maxKeys int, scores func(got []float32, k []uint16, qf []float32, h kvHead)) {
	t.Helper()
	for trial := range trials {
		hd := hds[trial%len(hds)]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(maxKeys)
		k := make([]uint16, nkeys*cols)
		for i := range k {
			k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(30)-15)))
		}
		q16, qf := make([]uint16, hd), make([]float32, hd)
		for i := range qf {
			q16[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(20)-10)))
			qf[i] = fromF16(q16[i])
		}
		h := kvHead{off: r.IntN(kvHeads) * hd, cols: cols, n: nkeys}
		got := make([]float32, nkeys)
		scores(got, k, qf, h)
		for j := range got {
			want := vecDotF16Go(k[j*cols+h.off:j*cols+h.off+hd], q16)
			if math.Float32bits(got[j]) != math.Float32bits(want) {
				t.Fatalf("hd=%d key %d: %g, Go %g", hd, j, got[j], want)
			}
		}
	}
}

// TestAccTileF16Go checks accTileF16Go against accRowF16Go key by key, bit for bit, for
// head sizes with and without a remainder of its four-element passes, tiles up to
// faTile keys, and V values and weights of spread magnitudes (subnormal products and
// overflows among them).
func TestAccTileF16Go(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for trial := range 400 {
		hd := []int{1, 3, 4, 5, 8, 13, 16, 64, 67}[trial%9]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(100)
		v := make([]uint16, nkeys*cols)
		for i := range v {
			v[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-25)))
		}
		h := kvHead{off: r.IntN(kvHeads) * hd, cols: cols, n: nkeys}
		t0 := r.IntN(nkeys)
		s := make([]float32, min(faTile, nkeys-t0))
		for j := range s {
			s[j] = float32(math.Ldexp(r.Float64(), -r.IntN(4)*40))
		}
		got, want := make([]float32, hd), make([]float32, hd)
		for d := range got {
			got[d] = float32(math.Ldexp(r.NormFloat64(), r.IntN(260)-140))
			want[d] = got[d]
		}
		accTileF16Go(got, v, t0, h, s)
		for j, p := range s {
			row := (t0+j)*cols + h.off
			accRowF16Go(want, v[row:row+hd], p)
		}
		for d := range got {
			if math.Float32bits(got[d]) != math.Float32bits(want[d]) {
				t.Fatalf("hd=%d keys %d..%d [%d]: %g, Go %g", hd, t0, t0+len(s), d, got[d], want[d])
			}
		}
	}
}
