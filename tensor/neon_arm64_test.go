package tensor

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestNEONLevel: the level follows the features, and the build's cap holds.
func TestNEONLevel(t *testing.T) {
	want := LevelPortable
	switch {
	case hasDotProd:
		want = LevelNEONDot
	case hasNEON:
		want = LevelNEON
	}
	if l := Level(); l != want {
		t.Fatalf("Level() = %v, features say %v", l, want)
	}
	if hasNEON != (levelCap != LevelPortable) {
		t.Fatalf("hasNEON = %v with the cap at %v", hasNEON, levelCap)
	}
	if hasDotProd && levelCap == LevelNEON {
		t.Fatal("SDOT used with the level capped at neon")
	}
	t.Logf("level %v (CPU dot product: %v)", Level(), cpuHasDotProd())
}

// neonSDOTModes returns the values of hasDotProd to test the kernels with: the
// machine's, and plain NEON where that is SDOT.
func neonSDOTModes() []bool {
	if hasDotProd {
		return []bool{true, false}
	}
	return []bool{false}
}

// withSDOT runs f with hasDotProd set to sdot (the kernels' choice), then restores it.
func withSDOT(sdot bool, f func()) {
	saved := hasDotProd
	hasDotProd = sdot
	defer func() { hasDotProd = saved }()
	f()
}

// neonDots pairs each dot product that has a NEON kernel with its Go code.
var neonDots = []struct {
	name       string
	typ        DType
	fast, slow func(n int, w, x []byte) float32
}{
	{"Q8_0", Q8_0, dotQ8_0, dotQ8_0Go},
	{"Q4_0", Q4_0, dotQ4_0, dotQ4_0Go},
	{"Q8_0 x86", Q8_0, dotQ8_0x86, dotQ8_0x86Go},
	{"Q4_0 x86", Q4_0, dotQ4_0x86, dotQ4_0x86Go},
	{"Q5_0 x86", Q5_0, dotQ5_0x86, dotQ5_0x86Go},
	{"Q4_1 x86", Q4_1, dotQ4_1x86, dotQ4_1x86Go},
	{"Q5_1", Q5_1, dotQ5_1, dotQ5_1Go},
	{"Q4_0 repack", Q4_0, dotQ4_0Repack, dotQ4_0RepackGo},
	{"Q4_K", Q4_K, dotQ4K, dotQ4KGo},
	{"Q4_K gemv", Q4_K, dotQ4KRepack, dotQ4KRepackGo},
	{"Q4_K gemm", Q4_K, dotQ4KRepackGemm, dotQ4KRepackGemmGo},
	{"Q5_K", Q5_K, dotQ5K, dotQ5KGo},
	{"Q5_K x86", Q5_K, dotQ5Kx86, dotQ5Kx86Go},
	{"Q6_K", Q6_K, dotQ6K, dotQ6KGo},
	{"Q6_K x86", Q6_K, dotQ6Kx86, dotQ6Kx86Go},
}

// TestNEONDotsMatchGo: with SDOT and without, every NEON dot gives the bits of the Go
// code, on random bytes (every quant, -128 included, and any block sums) and on
// quantized random rows, for lengths around the k-quant chunk.
func TestNEONDotsMatchGo(t *testing.T) {
	if !hasNEON {
		t.Skip("NEON kernels off (infer_portable)")
	}
	r := rand.New(rand.NewPCG(61, 62))
	for _, sdot := range neonSDOTModes() {
		for _, d := range neonDots {
			var blocks []int
			if d.typ.BlockSize() == QK {
				blocks = []int{1, 2, 7, 8, 9, 64, 130}
			} else {
				blocks = []int{1, 2, kChunk - 1, kChunk, kChunk + 1, 43}
			}
			for _, nb := range blocks {
				n := nb * d.typ.BlockSize()
				t.Run(fmt.Sprintf("sdot=%v/%s/%d", sdot, d.name, n), func(t *testing.T) {
					for trial := range 12 {
						var w, x []byte
						if trial%3 < 2 {
							w = randomRow(r, d.typ, n, trial%3 == 1)
							x = randomRow(r, d.typ.VecDotType(), n, trial%3 == 1)
						} else {
							w = make([]byte, d.typ.RowBytes(n))
							x = make([]byte, d.typ.VecDotType().RowBytes(n))
							quantizeOrFatal(t, d.typ, w, randActivations(r, n))
							if err := QuantizeActivations(d.typ.VecDotType(), x, randActivations(r, n)); err != nil {
								t.Fatal(err)
							}
						}
						var got float32
						withSDOT(sdot, func() { got = d.fast(n, w, x) })
						want := d.slow(n, w, x)
						if math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("trial %d: NEON %.9g (%#08x), Go %.9g (%#08x)", trial, got, math.Float32bits(got), want, math.Float32bits(want))
						}
					}
				})
			}
		}
	}
}

// TestNEONTilesMatchDots: the arm64 tiles give, output for output, the bits of their
// dots.
func TestNEONTilesMatchDots(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	tiles := []struct {
		typ  DType
		tile func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int)
		dot  func(n int, w, x []byte) float32
	}{
		{Q4_0, dotQ4_0RepackTile, dotQ4_0RepackGo},
		{Q4_0, dotQ4_0x86Tile, dotQ4_0x86Go},
		{Q8_0, dotQ8_0x86Tile, dotQ8_0x86Go},
		{Q5_0, dotQ5_0x86Tile, dotQ5_0x86Go},
		{Q4_K, dotQ4KRepackTile, nil},
		{Q5_K, dotQ5Kx86Tile, dotQ5Kx86Go},
		{Q6_K, dotQ6Kx86Tile, dotQ6Kx86Go},
	}
	for _, c := range tiles {
		n := 3 * c.typ.BlockSize()
		const mw, mx = 3, 6
		wStride, xStride, dstStride := c.typ.RowBytes(n)+3, c.typ.VecDotType().RowBytes(n)+5, mw+1
		w, x := make([]byte, mw*wStride), make([]byte, mx*xStride)
		for o := range mw {
			copy(w[o*wStride:], randomRow(r, c.typ, n, false))
		}
		for i := range mx {
			copy(x[i*xStride:], randomRow(r, c.typ.VecDotType(), n, false))
		}
		dst := make([]float32, mx*dstStride)
		c.tile(n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		for i := range mx {
			for o := range mw {
				dot := c.dot
				if c.typ == Q4_K { // the gemm for the first rows in groups of four, the gemv after
					dot = dotQ4KRepackGemmGo
					if i >= mx-mx%X86RepackGemmRows {
						dot = dotQ4KRepackGo
					}
				}
				got, want := dst[i*dstStride+o], dot(n, w[o*wStride:], x[i*xStride:])
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%v [%d,%d]: tile %.9g, Go %.9g", c.typ, i, o, got, want)
				}
			}
		}
	}
}

// TestNEONQuantizersMatchGo: the NEON activation quantizers give the bytes of the Go
// code block by block, and take every block the Go code computes plainly (they decline
// only Inf, NaN, overflowing scales and, for Q8_K, ties in magnitude and zero blocks).
func TestNEONQuantizersMatchGo(t *testing.T) {
	if !hasNEON {
		t.Skip("NEON kernels off (infer_portable)")
	}
	r := rand.New(rand.NewPCG(65, 66))
	var taken, declined int
	for trial := range 300 {
		x := randActivations(r, 8*QK)
		switch trial % 10 {
		case 8:
			x[r.IntN(len(x))] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 9:
			x[r.IntN(len(x))] = float32(math.NaN())
		}
		for b := range len(x) / QK {
			xb := x[b*QK : (b+1)*QK]
			got, want := make([]byte, q8_0Bytes), make([]byte, q8_0Bytes)
			quantizeQ8_0x86Go(want, xb)
			ok := quantizeQ8_0x86NEON(&got[0], &xb[0], 1)
			amax := absMaxX86((*[QK]float32)(xb))
			plain := amax == 0 || 127/amax < float32(math.Inf(1))
			for _, v := range xb {
				plain = plain && abs32(v) < float32(math.Inf(1)) // not Inf, not NaN
			}
			if ok != plain {
				t.Fatalf("Q8_0 trial %d block %d: kernel took it %v, amax %g", trial, b, ok, amax)
			}
			if !ok {
				declined++
				continue
			}
			taken++
			if !bytes.Equal(got, want) {
				t.Fatalf("Q8_0 trial %d block %d of %v:\nNEON % x\nGo   % x", trial, b, xb, got, want)
			}
		}
		got, want := make([]byte, Q8_0.RowBytes(len(x))), make([]byte, Q8_0.RowBytes(len(x)))
		quantizeQ8_0x86(got, x)
		quantizeQ8_0x86Go(want, x)
		if !bytes.Equal(got, want) {
			t.Fatalf("Q8_0 trial %d: the row differs from the Go code's", trial)
		}
	}
	t.Logf("Q8_0: %d blocks by the kernel, %d declined", taken, declined)

	taken, declined = 0, 0
	for trial := range 400 {
		x := randActivations(r, QKK)
		switch trial % 8 {
		case 5: // a tie in magnitude
			x[r.IntN(QKK)], x[r.IntN(QKK)] = 1e3, -1e3
		case 6:
			x[r.IntN(QKK)] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 7:
			x[r.IntN(QKK)] = float32(math.NaN())
		}
		got, want := make([]byte, q8KBytes), make([]byte, q8KBytes)
		quantizeBlockQ8K(want, x)
		if !quantizeQ8KNEON(&got[0], &x[0]) {
			declined++
			continue
		}
		taken++
		if !bytes.Equal(got, want) {
			t.Fatalf("Q8_K trial %d:\nNEON % x\nGo   % x", trial, got, want)
		}
	}
	if taken < declined {
		t.Fatalf("Q8_K: the kernel took %d blocks, declined %d", taken, declined)
	}
	t.Logf("Q8_K: %d blocks by the kernel, %d declined", taken, declined)
}
