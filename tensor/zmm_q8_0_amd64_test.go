package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ80TilesZMMRaw checks the ZMM Q8_0 lane tiles against the YMM ones (and
// q80TileR2X8ZMM against q80TileR2X4ZMM twice), bit for bit, on blocks of random bytes
// (quants -128 included on both sides, any finite scale) and odd block and row-group
// counts, past what quantizing produces.
func TestQ80TilesZMMRaw(t *testing.T) {
	if !hasFMA || !hasVNNI {
		t.Skip("no AVX512-VNNI here")
	}
	r := rand.New(rand.NewPCG(7, 8))
	blocks := func(b []byte) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		for k := 0; k+q8_0Bytes <= len(b); k += q8_0Bytes {
			h := F32ToF16(float32(r.NormFloat64() * math.Ldexp(1, r.IntN(30)-15)))
			b[k], b[k+1] = byte(h), byte(h>>8)
		}
	}
	for trial := range 40 {
		nb, groups := 1+r.IntN(11), 1+r.IntN(5)
		rb := nb * q8_0Bytes
		w := make([]byte, 4*groups*rb)
		blocks(w)
		x := make([]byte, 4*rb)
		blocks(x)
		ps := nb * q80XPrepBytes
		xp := make([]byte, 4*ps)
		for i := range 4 {
			q80XPrepVNNI(&x[i*rb], nb, &xp[i*ps])
		}
		ds := 4*groups + 1
		got, want := make([]float32, 4*ds), make([]float32, 4*ds)
		q80TileR2X4VNNI(&w[0], rb, 2*groups, &xp[0], ps, nb, &want[0], 4*ds)
		q80TileR2X4ZMM(&w[0], rb, 2*groups, &xp[0], ps, nb, &got[0], 4*ds)
		for k := range got {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				t.Fatalf("trial %d (%d blocks): r2x4 [%d] = %g, YMM %g", trial, nb, k, got[k], want[k])
			}
		}
		// r2x8 against r2x4 on activation rows 0..3 and then on 4..7 (the rows of xp8).
		xp8 := make([]byte, 8*ps)
		x8 := make([]byte, 8*rb)
		blocks(x8)
		for i := range 8 {
			q80XPrepVNNI(&x8[i*rb], nb, &xp8[i*ps])
		}
		got8, want8 := make([]float32, 8*ds), make([]float32, 8*ds)
		for k := range got8 {
			got8[k], want8[k] = -3, -3 // outside the tile: left alone
		}
		q80TileR2X4ZMM(&w[0], rb, 2*groups, &xp8[0], ps, nb, &want8[0], 4*ds)
		q80TileR2X4ZMM(&w[0], rb, 2*groups, &xp8[4*ps], ps, nb, &want8[4*ds], 4*ds)
		q80TileR2X8ZMM(&w[0], rb, 2*groups, &xp8[0], ps, nb, &got8[0], 4*ds)
		for k := range got8 {
			if math.Float32bits(got8[k]) != math.Float32bits(want8[k]) {
				t.Fatalf("trial %d (%d blocks): r2x8 [%d] = %g, r2x4 %g", trial, nb, k, got8[k], want8[k])
			}
		}
		q80TileR4X1VNNI(&w[0], rb, groups, &xp[ps], nb, &want[0])
		q80TileR4X1ZMM(&w[0], rb, groups, &xp[ps], nb, &got[0])
		for k := range 4 * groups {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				t.Fatalf("trial %d (%d blocks): r4x1 [%d] = %g, YMM %g", trial, nb, k, got[k], want[k])
			}
		}
	}
}
