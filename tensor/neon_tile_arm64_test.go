package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestNEONMultiRowTiles: the multi-row arm64 tiles give, output for output, the bits of
// the Go dots, with SDOT and without, for activation row counts around the groups of
// four and weight rows in strided storage.
func TestNEONMultiRowTiles(t *testing.T) {
	if !hasNEON {
		t.Skip("NEON kernels off (infer_portable)")
	}
	r := rand.New(rand.NewPCG(65, 66))
	tiles := []struct {
		typ  DType
		tile func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int)
		dot  func(n int, w, x []byte) float32
	}{
		{Q4_0, dotQ4_0RepackTile, dotQ4_0RepackGo},
		{Q4_0, dotQ4_0x86Tile, dotQ4_0x86Go},
		{Q8_0, dotQ8_0x86Tile, dotQ8_0x86Go},
		{Q4_K, dotQ4KRepackGemmTile, dotQ4KRepackGemmGo},
		{Q4_K, dotQ4KRepackGemvTile, dotQ4KRepackGo},
		{Q6_K, dotQ6Kx86Tile, dotQ6Kx86Go},
	}
	for _, c := range tiles {
		for _, sdot := range neonSDOTModes() {
			for _, shape := range [][3]int{{1, 3, 1}, {2, 2, 4}, {3, 5, 7}, {kChunk + 3, 2, 9}, {2, 4, 8}, {4, 8, 1}, {2, 9, 2}} {
				nb, mw, mx := shape[0], shape[1], shape[2]
				t.Run(fmt.Sprintf("%v/sdot=%v/%dx%dx%d", c.typ, sdot, nb, mw, mx), func(t *testing.T) {
					n := nb * c.typ.BlockSize()
					wStride, xStride, dstStride := c.typ.RowBytes(n)+3, c.typ.VecDotType().RowBytes(n)+5, mw+2
					w, x := make([]byte, mw*wStride), make([]byte, mx*xStride)
					for o := range mw {
						copy(w[o*wStride:], randomRow(r, c.typ, n, o == 1))
					}
					for i := range mx {
						copy(x[i*xStride:], randomRow(r, c.typ.VecDotType(), n, i == 2))
					}
					dst := make([]float32, mx*dstStride)
					for k := range dst {
						dst[k] = float32(math.NaN())
					}
					withSDOT(sdot, func() { c.tile(n, w, wStride, mw, x, xStride, mx, dst, dstStride) })
					for i := range mx {
						for o := range mw {
							got, want := dst[i*dstStride+o], c.dot(n, w[o*wStride:], x[i*xStride:])
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("[%d,%d]: tile %.9g (%#08x), Go %.9g (%#08x)", i, o, got, math.Float32bits(got), want, math.Float32bits(want))
							}
						}
					}
				})
			}
		}
	}
}

// TestNEONFloatDotsBits: the NEON float dots give the bits of the Go code, for lengths
// on either side of the groups of eight and values over the whole float range.
func TestNEONFloatDotsBits(t *testing.T) {
	if !hasNEON {
		t.Skip("NEON kernels off (infer_portable)")
	}
	r := rand.New(rand.NewPCG(67, 68))
	dots := []struct {
		name       string
		wt, xt     DType
		fast, slow func(n int, w, x []byte) float32
	}{
		{"F32", F32, F32, dotF32, dotF32Go},
		{"BF16", BF16, BF16, dotBF16, dotBF16Go},
		{"BF16F32", BF16, F32, dotBF16F32, dotBF16F32Go},
	}
	for _, d := range dots {
		for n := 1; n <= 70; n++ {
			for trial := range 6 {
				w, x := randomRow(r, d.wt, n, trial%3 == 1), randomRow(r, d.xt, n, trial%3 == 2)
				got, want := d.fast(n, w, x), d.slow(n, w, x)
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("%s n=%d trial %d: NEON %g (%#08x), Go %g (%#08x)", d.name, n, trial, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
		}
	}
}
