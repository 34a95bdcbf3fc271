package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randF16Row returns n F16 values: normals over a wide range of exponents, subnormals,
// zeros of both signs, the largest finite values and infinities.
func randF16Row(r *rand.Rand, n int) []uint16 {
	specials := []uint16{0, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00}
	h := make([]uint16, n)
	for i := range h {
		switch r.IntN(10) {
		case 0:
			h[i] = specials[r.IntN(len(specials))]
		case 1:
			h[i] = uint16(r.IntN(0x400)) | uint16(r.IntN(2))<<15 // subnormal
		default:
			h[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(30)-15)))
		}
	}
	return h
}

// TestNEONAttentionRowsBits checks the NEON F16 attention rows against the Go code bit
// for bit: madRowF16, scaleRowF16 (F16 accumulators, results that overflow to Inf and
// fall to subnormals among them) and accRowF16 (float32 accumulator), rows of 8 to 256.
func TestNEONAttentionRowsBits(t *testing.T) {
	if !useNEON {
		t.Skip("NEON kernels off (infer_portable)")
	}
	r := rand.New(rand.NewPCG(71, 72))
	scales := []float32{1, -1, 0.5, 3.75e-3, 1e-6, 7.5, 300, float32(math.Inf(1)), 0}
	for trial := range 400 {
		n := 8 * (1 + trial%32)
		acc, v := randF16Row(r, n), randF16Row(r, n)
		s := float32(math.Ldexp(r.NormFloat64(), r.IntN(24)-12))
		if trial%5 == 0 {
			s = scales[r.IntN(len(scales))]
		}
		got, want := append([]uint16(nil), acc...), append([]uint16(nil), acc...)
		if !madRowF16NEON(got, v, s) {
			t.Fatal("madRowF16NEON declined a row of 8k elements")
		}
		madRowF16Go(want, v, s)
		cmpF16(t, "madRowF16", got, want, acc, v, s)
		got, want = append(got[:0], acc...), append(want[:0], acc...)
		if !scaleRowF16NEON(got, s) {
			t.Fatal("scaleRowF16NEON declined a row of 8k elements")
		}
		scaleRowF16Go(want, s)
		cmpF16(t, "scaleRowF16", got, want, acc, acc, s)
		fa := make([]float32, n)
		for i := range fa {
			fa[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(30)-15))
		}
		fg, fw := append([]float32(nil), fa...), append([]float32(nil), fa...)
		if !accRowF16NEON(fg, v, s) {
			t.Fatal("accRowF16NEON declined a row of 8k elements")
		}
		accRowF16Go(fw, v, s)
		for i := range fg {
			if math.Float32bits(fg[i]) != math.Float32bits(fw[i]) {
				t.Fatalf("accRowF16 n=%d [%d]: %g + %g·%g: NEON %g, Go %g", n, i, fa[i], fromF16(v[i]), s, fg[i], fw[i])
			}
		}
	}
	for _, n := range []int{0, 4, 12} { // declined: the Go code takes them
		a := make([]uint16, n)
		if madRowF16NEON(a, a, 1) || scaleRowF16NEON(a, 1) || accRowF16NEON(make([]float32, n), a, 1) {
			t.Fatalf("n=%d: a NEON row ran on a length that is not a positive multiple of 8", n)
		}
	}
}

func cmpF16(t *testing.T, name string, got, want, acc, v []uint16, s float32) {
	t.Helper()
	for i := range got {
		if got[i] != want[i] && !(got[i]&0x7fff > 0x7c00 && want[i]&0x7fff > 0x7c00) {
			t.Fatalf("%s n=%d [%d]: acc %#04x v %#04x s %g: NEON %#04x, Go %#04x", name, len(got), i, acc[i], v[i], s, got[i], want[i])
		}
	}
}

// TestNEONTileScoresBits checks tileScores (scores8F16NEON) against tileScoresGo for
// heads of a multiple of four elements that are not of eight too, and key counts on
// either side of the groups of eight.
func TestNEONTileScoresBits(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	for trial := range 120 {
		hd := []int{4, 12, 20, 8, 36}[trial%5]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(40)
		k := make([]uint16, (nkeys+r.IntN(9))*cols)
		copy(k, randF16Row(r, len(k)))
		q := make([]float32, hd)
		for i := range q {
			q[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(30)-15))
		}
		h := kvHead{off: r.IntN(kvHeads) * hd, cols: cols, n: nkeys}
		t0 := r.IntN(nkeys)
		n := nkeys - t0
		got, want := make([]float32, n), make([]float32, n)
		tileScores(got, q, k, t0, h, 0.125)
		tileScoresGo(want, q, k, t0, h, 0.125)
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) && !(got[j] != got[j] && want[j] != want[j]) {
				t.Fatalf("hd=%d key %d: %g, Go %g", hd, t0+j, got[j], want[j])
			}
		}
	}
}
