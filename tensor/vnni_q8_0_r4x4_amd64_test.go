package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ80TileR4X4VNNI checks q80TileR4X4VNNI against dotQ8_0x86Go, bit for bit, on
// Q8_0 blocks of random bytes (quants -128 included on both sides, scales of any
// exponent, a zero and a negative zero among them), 1 to 40 blocks and 1 to 5 groups
// of four weight rows, with row strides past the blocks and a scratch table whose
// prior contents must not matter, the weight scales filled by the call or by an
// earlier one (which must leave them widened, in order); every output outside the
// tile must stay untouched.
func TestQ80TileR4X4VNNI(t *testing.T) {
	if !hasFMA || !hasVNNI {
		t.Skip("no AVX512-VNNI here")
	}
	r := rand.New(rand.NewPCG(41, 42))
	blocks := func(b []byte) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		for k := 0; k+q8_0Bytes <= len(b); k += q8_0Bytes {
			var h uint16
			switch r.IntN(16) {
			case 0: // zero
			case 1:
				h = 0x8000 // negative zero
			default:
				h = F32ToF16(float32(r.NormFloat64() * math.Ldexp(1, r.IntN(30)-15)))
			}
			b[k], b[k+1] = byte(h), byte(h>>8)
		}
	}
	for trial := range 60 {
		nb, quads := 1+r.IntN(40), 1+r.IntN(5)
		rb := nb * q8_0Bytes
		ws := rb + r.IntN(3)*q8_0Bytes // weight row stride
		w := make([]byte, 4*quads*ws)
		blocks(w)
		x := make([]byte, 4*rb)
		blocks(x)
		ps := nb*q80XPrepBytes + r.IntN(2)*q80XPrepBytes
		xp := make([]byte, 4*ps)
		for i := range 4 {
			q80XPrepVNNI(&x[i*rb], nb, &xp[i*ps])
		}
		ds := 4*quads + r.IntN(3) // output row stride, in float32
		dst := make([]float32, 4*ds)
		const guard = -7.5
		for k := range dst {
			dst[k] = guard
		}
		tab := make([]float32, 32*nb)
		for k := range tab {
			tab[k] = float32(r.NormFloat64())
		}
		dwt := make([]float32, 4*nb*quads)
		for k := range dwt {
			dwt[k] = float32(r.NormFloat64())
		}
		fill := trial%4 != 3 // else dwt as a call with fill left it
		if !fill {
			q80TileR4X4VNNI(&w[0], ws, quads, &xp[0], ps, nb, &dst[0], 4*ds, &tab[0], &dwt[0], true)
			for k := range dst {
				dst[k] = guard
			}
			for k := range tab {
				tab[k] = float32(r.NormFloat64())
			}
		}
		q80TileR4X4VNNI(&w[0], ws, quads, &xp[0], ps, nb, &dst[0], 4*ds, &tab[0], &dwt[0], fill)
		for k, v := range dwt {
			b, q := k/4%nb, k/(4*nb)
			o := 4*q + k%4
			if want := F16ToF32(uint16(w[o*ws+b*q8_0Bytes]) | uint16(w[o*ws+b*q8_0Bytes+1])<<8); math.Float32bits(v) != math.Float32bits(want) {
				t.Fatalf("trial %d: weight scale %d (row %d, block %d) = %g, want %g", trial, k, o, b, v, want)
			}
		}
		for i := range 4 {
			for o := range ds {
				got := dst[i*ds+o]
				if o >= 4*quads {
					if got != guard {
						t.Fatalf("trial %d: [%d][%d] = %g written past the tile", trial, i, o, got)
					}
					continue
				}
				want := dotQ8_0x86Go(nb*QK, w[o*ws:o*ws+rb], x[i*rb:(i+1)*rb])
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("trial %d (%d blocks, %d quads): [%d][%d] = %.9g (%#x), Go %.9g (%#x)", trial, nb, quads, i, o, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
		}
	}
}
