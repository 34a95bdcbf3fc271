package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

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
