package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The tests of the tiled attention's transposed keys (attentionTask.kt): the
// transposition, the scores over it, and attendTiled with it, each bit for bit
// against the Go definitions.

// TestTransposeKF16Bits checks transposeKF16AVX512 against fromF16 element by element,
// for head sizes and key counts around its groups of sixteen, F16 values of every kind
// (subnormals, infinities, NaNs, signed zeros): the keys past nkeys up to the next
// multiple of 16 must be zeros, and nothing past them written.
func TestTransposeKF16Bits(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(51, 52))
	const guard = 0x7fc0dead
	for trial := range 300 {
		hd := []int{2, 8, 16, 30, 32, 64, 128}[trial%7]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(70)
		k := make([]uint16, nkeys*cols)
		for i := range k {
			if r.IntN(4) == 0 {
				k[i] = uint16(r.Uint32()) // any bits
			} else {
				k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(40)-24)))
			}
		}
		kts := (nkeys+15)&^15 + 16*r.IntN(2)
		dst := make([]float32, hd*kts)
		for i := range dst {
			dst[i] = math.Float32frombits(guard)
		}
		off := r.IntN(kvHeads) * hd
		transposeKF16AVX512(&k[off], 2*cols, hd, nkeys, &dst[0], kts)
		for d := range hd {
			for j := range kts {
				got := math.Float32bits(dst[d*kts+j])
				var want uint32
				switch {
				case j < nkeys:
					want = math.Float32bits(fromF16(k[j*cols+off+d]))
				case j >= (nkeys+15)&^15:
					want = guard
				}
				if got != want {
					t.Fatalf("hd=%d keys %d kts %d: [%d][%d] = %#x, want %#x", hd, nkeys, kts, d, j, got, want)
				}
			}
		}
	}
}

// transposedKeys returns h's keys transposed to float32 by the Go definition, rows of
// kts, the padding past h.n filled with pad.
func transposedKeys(k []uint16, h kvHead, hd, kts int, pad func() float32) []float32 {
	kt := make([]float32, hd*kts)
	for d := range hd {
		for j := range kts {
			if j < h.n {
				kt[d*kts+j] = fromF16(k[j*h.cols+h.off+d])
			} else {
				kt[d*kts+j] = pad()
			}
		}
	}
	return kt
}

// TestScoresTileF32TBits checks scoresTileF32TAVX512 against tileScoresGo, tile by tile
// as attendTiled calls it, for head sizes of the tiled path, key counts leaving every
// remainder of its groups of 64, 32 and 16 keys, values spread widely enough that the
// FMA chain's order shows, and padding keys of any value; no score past the tile's
// keys may be written.
func TestScoresTileF32TBits(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(53, 54))
	for trial := range 300 {
		hd := []int{16, 32, 64, 128, 2}[trial%5]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(200)
		k := make([]uint16, nkeys*cols)
		spread := r.IntN(12)
		for i := range k {
			k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(spread+1))))
		}
		q := make([]float32, hd)
		for i := range q {
			q[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(spread+1)))
		}
		h := kvHead{off: r.IntN(kvHeads) * hd, cols: cols, n: nkeys}
		kts := (nkeys+15)&^15 + 16*r.IntN(2)
		kt := transposedKeys(k, h, hd, kts, func() float32 { return float32(r.NormFloat64() * 1e30) })
		for t0 := 0; t0 < nkeys; t0 += faTile {
			n := min(faTile, nkeys-t0)
			got, want := make([]float32, faTile), make([]float32, n)
			for j := range got {
				got[j] = -1
			}
			scoresTileF32TAVX512(&kt[t0], kts, &q[0], hd, n, 0.125, &got[0])
			tileScoresGo(want, q, k, t0, h, 0.125)
			for j := range got {
				switch {
				case j >= n && got[j] != -1:
					t.Fatalf("hd=%d keys %d tile %d: score %d written past the tile's %d", hd, nkeys, t0, j, n)
				case j < n && math.Float32bits(got[j]) != math.Float32bits(want[j]):
					t.Fatalf("hd=%d keys %d tile %d [%d]: %g, Go %g", hd, nkeys, t0, j, got[j], want[j])
				}
			}
		}
	}
}

// TestAttendTiledKeysT checks attendTiled with the keys transposed by
// transposeKF16AVX512 (as Attention gives them) against attendTiledRef.
func TestAttendTiledKeysT(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(55, 56))
	for trial := range 200 {
		hd := []int{16, 32, 64, 128}[trial%4]
		kvHeads := 1 + trial%3
		cols := kvHeads * hd
		nkeys := 1 + r.IntN(200)
		k, v := make([]uint16, nkeys*cols), make([]uint16, nkeys*cols)
		spread := r.IntN(8)
		for i := range k {
			k[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(spread+1))))
			v[i] = toF16(float32(math.Ldexp(r.NormFloat64(), r.IntN(10)-5)))
		}
		q := make([]float32, hd)
		for i := range q {
			q[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(spread+1)))
		}
		h := kvHead{off: r.IntN(kvHeads) * hd, cols: cols, n: nkeys}
		h.kts = (nkeys + 15) &^ 15
		h.kt = make([]float32, hd*h.kts)
		transposeKF16AVX512(&k[h.off], 2*cols, hd, nkeys, &h.kt[0], h.kts)
		var sc attentionScratch
		sc.grow(nkeys, hd)
		got, want := make([]float32, hd), make([]float32, hd)
		attendTiled(got, q, k, v, h, 0.125, &sc)
		attendTiledRef(want, q, k, v, h, 0.125)
		for d := range got {
			if math.Float32bits(got[d]) != math.Float32bits(want[d]) && !(got[d] != got[d] && want[d] != want[d]) {
				t.Fatalf("hd=%d keys %d [%d]: %g, Go %g", hd, nkeys, d, got[d], want[d])
			}
		}
	}
}

// TestTileMaxBits checks tileMaxAVX512 against tileMaxGo: wherever it reports its
// maximum exact the bits must be tileMaxGo's, and it must report it exact unless s
// holds a NaN or the maximum is a zero; on lengths to 70 (each remainder of its 32-
// and 16-lane passes), with NaNs, infinities, signed zeros and subnormals among finite
// values, and all-−Inf rows.
func TestTileMaxBits(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(57, 58))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-40}
	for trial := range 3000 {
		n := 1 + r.IntN(70)
		s := make([]float32, n)
		kind := trial % 4
		for i := range s {
			switch {
			case kind == 1 && r.IntN(8) == 0:
				s[i] = special[r.IntN(len(special))]
			case kind == 2:
				s[i] = float32(math.Inf(-1))
			case kind == 3: // non-positive, so that zeros may be the largest
				s[i] = -float32(math.Abs(r.NormFloat64()))
				if r.IntN(4) == 0 {
					s[i] = special[3+r.IntN(2)]
				}
			default:
				s[i] = float32(r.NormFloat64() * 10)
			}
		}
		want := tileMaxGo(s)
		m, ok := tileMaxAVX512(&s[0], n)
		hasNaN := false
		for _, x := range s {
			hasNaN = hasNaN || x != x
		}
		switch {
		case ok && math.Float32bits(m) != math.Float32bits(want):
			t.Fatalf("trial %d (%d): %g (%#x) reported exact, Go %g (%#x); s %v", trial, n, m, math.Float32bits(m), want, math.Float32bits(want), s)
		case !ok && !hasNaN && want != 0:
			t.Fatalf("trial %d (%d): %g not reported exact (Go %g); s %v", trial, n, m, want, s)
		}
		if got := tileMax(s); math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("trial %d: tileMax %g, Go %g", trial, got, want)
		}
	}
}
