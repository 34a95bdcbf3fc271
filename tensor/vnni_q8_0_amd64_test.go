package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ8LanesKernels checks q8LanesTileBy with each set of Q8_0 lane kernels the CPU
// allows (AVX2, VPDPBUSD on YMM and on ZMM) for every format that goes through them (Q8_0 itself; Q5_0,
// Q4_0 and Q4_1 converted) against the Go definitions of the x86 order one output
// after another, bit for bit, on random tiles: odd block counts, weight rows that are
// not a multiple of two or four, activation rows past groups of four, weights of
// every byte (-128 included), and tiles over several chunks of tileChunkBytes.
func TestQ8LanesKernels(t *testing.T) {
	formats := []struct {
		typ  DType
		conv func(dst, src []byte)
		ms   int
		ref  func(n int, w, x []byte) float32
	}{
		{Q8_0, nil, -1, dotQ8_0x86Go},
		{Q5_0, q5_0AsQ8, -1, dotQ5_0x86Go},
		{Q4_0, q4_0AsQ8, -1, dotQ4_0x86Go},
		{Q4_1, q4_1AsQ8, 2, dotQ4_1x86Go},
	}
	for _, k := range []struct {
		name string
		ok   bool
		k    q80Kernels
	}{
		{"avx2", hasFMA, q80KernelsAVX2()},
		{"vnni", hasFMA && hasVNNI, q80KernelsVNNI()},
		{"zmm", hasFMA && hasVNNI, q80KernelsZMM()},
	} {
		for _, f := range formats {
			t.Run(fmt.Sprintf("%s/%v", k.name, f.typ), func(t *testing.T) {
				if !k.ok {
					t.Skipf("level %v or the CPU does not allow the %s kernels", Level(), k.name)
				}
				testQ8Lanes(t, k.k, f.typ, f.conv, f.ms, f.ref)
			})
		}
	}
}

func testQ8Lanes(t *testing.T, k q80Kernels, typ DType, conv func(dst, src []byte), ms int, ref func(n int, w, x []byte) float32) {
	r := rand.New(rand.NewPCG(11, uint64(typ)))
	xt := typ.VecDotType()
	for trial := range 60 {
		nb, mw, mx := 1+r.IntN(9), 1+r.IntN(13), 1+r.IntN(20)
		if trial%15 == 14 { // several chunks of weight rows
			nb, mw, mx = 128, tileChunkBytes/Q8_0.RowBytes(128*QK)+7, 5+4*(trial/15%2) // 5 or 9
		}
		n := nb * QK
		ws, xs, ds := typ.RowBytes(n)+r.IntN(2)*typ.BlockBytes(), xt.RowBytes(n)+r.IntN(3), mw+r.IntN(3)
		w := make([]byte, (mw-1)*ws+typ.RowBytes(n))
		randomWeights(r, typ, w)
		x := make([]byte, (mx-1)*xs+xt.RowBytes(n))
		for i := range mx {
			if err := QuantizeActivations(xt, x[i*xs:i*xs+xt.RowBytes(n)], randActivations(r, n)); err != nil {
				t.Fatal(err)
			}
		}
		dst := make([]float32, (mx-1)*ds+mw)
		q8LanesTileBy(k, conv, typ.BlockBytes(), xt == Q8_1, ms, n, w, ws, mw, x, xs, mx, dst, ds)
		for i := range mx {
			for o := range mw {
				if want := ref(n, w[o*ws:], x[i*xs:]); math.Float32bits(dst[i*ds+o]) != math.Float32bits(want) {
					t.Fatalf("trial %d (%d blocks, %d×%d): [%d][%d] = %.9g, Go %.9g", trial, nb, mx, mw, i, o, dst[i*ds+o], want)
				}
			}
		}
	}
}

// BenchmarkQ8LanesKernels times q8LanesTileBy with the AVX2, the VPDPBUSD (YMM) and the
// ZMM kernels side by side, for Q8_0 and Q4_1 at BenchmarkTilePrompt's,
// BenchmarkTilePromptSmall's and BenchmarkTileDecodeCached's shapes, on one thread
// (weight bytes times rows).
func BenchmarkQ8LanesKernels(b *testing.B) {
	kernels := []struct {
		name string
		ok   bool
		k    q80Kernels
	}{
		{"avx2", hasFMA, q80KernelsAVX2()},
		{"vnni", hasFMA && hasVNNI, q80KernelsVNNI()},
		{"zmm", hasFMA && hasVNNI, q80KernelsZMM()},
	}
	for _, sh := range []struct {
		name        string
		n, rows, mx int
	}{{"Prompt", 4096, 512, 64}, {"PromptSmall", 256, 256, 64}, {"DecodeCached", 4096, 256, 1}} {
		for _, f := range []struct {
			typ  DType
			conv func(dst, src []byte)
			ms   int
		}{{Q8_0, nil, -1}, {Q4_1, q4_1AsQ8, 2}} {
			w, x := benchRows(b, f.typ, sh.n, sh.rows, sh.mx)
			dst := make([]float32, sh.rows*sh.mx)
			xs := f.typ.VecDotType().RowBytes(sh.n)
			for _, k := range kernels {
				b.Run(fmt.Sprintf("%s/%v/%s", sh.name, f.typ, k.name), func(b *testing.B) {
					if !k.ok {
						b.Skip("not allowed here")
					}
					cpuLoop(b, int64(len(w)*sh.mx), func() {
						q8LanesTileBy(k.k, f.conv, f.typ.BlockBytes(), f.ms >= 0, f.ms, sh.n, w, f.typ.RowBytes(sh.n), sh.rows, x, xs, sh.mx, dst, sh.rows)
					})
				})
			}
		}
	}
}

// BenchmarkQ8LanesZMM times q8LanesTileBy with the YMM and the ZMM VPDPBUSD kernels in
// turns (cpuTurns: ymm-cpuGB/s, zmm-cpuGB/s and their ratio zmm/ymm) at
// BenchmarkQ8LanesKernels's shapes, for Q8_0 and Q4_1.
func BenchmarkQ8LanesZMM(b *testing.B) {
	if !hasFMA || !hasVNNI {
		b.Skip("no AVX512-VNNI here")
	}
	ymm := q80KernelsVNNI()
	for _, sh := range []struct {
		name        string
		n, rows, mx int
	}{{"Prompt", 4096, 512, 64}, {"PromptSmall", 256, 256, 64}, {"DecodeCached", 4096, 256, 1}} {
		for _, f := range []struct {
			typ  DType
			conv func(dst, src []byte)
			ms   int
		}{{Q8_0, nil, -1}, {Q4_1, q4_1AsQ8, 2}} {
			w, x := benchRows(b, f.typ, sh.n, sh.rows, sh.mx)
			dst := make([]float32, sh.rows*sh.mx)
			xs := f.typ.VecDotType().RowBytes(sh.n)
			tile := func(k q80Kernels) func() {
				return func() {
					q8LanesTileBy(k, f.conv, f.typ.BlockBytes(), f.ms >= 0, f.ms, sh.n, w, f.typ.RowBytes(sh.n), sh.rows, x, xs, sh.mx, dst, sh.rows)
				}
			}
			b.Run(fmt.Sprintf("%s/%v", sh.name, f.typ), func(b *testing.B) {
				cpuTurns(b, int64(len(w)*sh.mx), []string{"ymm", "zmm"}, tile(ymm), tile(q80KernelsZMM()))
			})
		}
	}
}
