package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ4_0RepackTileGoExtremes: the SWAR block sums of dotQ4_0RepackTileGo stay exact
// at the ends of their range (every level 0 or 15 against every quant −128 or 127, and
// mixed), for one to five activation rows (the four-row path and the single rows).
func TestQ4_0RepackTileGoExtremes(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	const nb = 70 // more than prepBlocks: two chunks
	n := nb * QK
	for trial := range 24 {
		mw, mx := 1+trial%3, 1+trial%5
		w := make([]byte, mw*nb*q4_0Bytes)
		x := make([]byte, mx*nb*q8_0Bytes)
		lv := [...]byte{0x00, 0xFF, 0x0F, 0xF0}[trial%4]
		q := [...]byte{0x80, 0x7F, 0x80, 0x7F}[(trial/4)%4]
		for b := range mw * nb {
			wb := w[b*q4_0Bytes : (b+1)*q4_0Bytes]
			putHalf(wb, float32(r.NormFloat64()))
			for k := 2; k < q4_0Bytes; k++ {
				wb[k] = lv
				if trial >= 16 {
					wb[k] = byte(r.Uint32())
				}
			}
		}
		for b := range mx * nb {
			xb := x[b*q8_0Bytes : (b+1)*q8_0Bytes]
			putHalf(xb, float32(r.NormFloat64()))
			for k := 2; k < q8_0Bytes; k++ {
				xb[k] = q
				if trial >= 20 && r.IntN(2) == 0 {
					xb[k] ^= 0xFF
				}
			}
		}
		dst := make([]float32, mx*mw)
		dotQ4_0RepackTileGo(n, w, nb*q4_0Bytes, mw, x, nb*q8_0Bytes, mx, dst, mw)
		for i := range mx {
			for o := range mw {
				want := dotQ4_0RepackGo(n, w[o*nb*q4_0Bytes:], x[i*nb*q8_0Bytes:])
				if got := dst[i*mw+o]; math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("trial %d [%d][%d]: %.9g, want %.9g", trial, i, o, got, want)
				}
			}
		}
	}
}
