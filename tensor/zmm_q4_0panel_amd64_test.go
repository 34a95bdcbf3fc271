package tensor

import "testing"

// TestQ4_0PanelKernels checks each amd64 panel tile the CPU allows (the AVX2 kernels,
// the VPDPBUSD ones on ZMM, each with its decode kernel's PREFETCHNTA and PREFETCHT0
// forms) against the Go definition of the repacked order, dotQ4_0RepackGo one output
// after another, bit for bit.
func TestQ4_0PanelKernels(t *testing.T) {
	ref := func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
		dotTileBy(dotQ4_0RepackGo, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
	by := func(k q40PanelKernels) PanelTileFunc {
		return func(n int, w []byte, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
			dotQ4_0PanelTileBy(k, n, w, mw, x, xStride, mx, dst, dstStride)
		}
	}
	for _, k := range []struct {
		name string
		ok   bool
		f    PanelTileFunc
	}{
		{"avx2", hasFMA, dotQ4_0PanelTileAVX2},
		{"avx2-nta", hasFMA, by(q40PanelKernelsAVX2(true))},
		{"avx2-t0", hasFMA, by(q40PanelKernelsAVX2(false))},
		{"zmm", hasFMA && hasVNNI, dotQ4_0PanelTileZMM},
		{"zmm-nta", hasFMA && hasVNNI, by(q40PanelKernelsZMM(true))},
		{"zmm-t0", hasFMA && hasVNNI, by(q40PanelKernelsZMM(false))},
	} {
		t.Run(k.name, func(t *testing.T) {
			if !k.ok {
				t.Skipf("level %v or the CPU does not allow the %s kernels", Level(), k.name)
			}
			testQ4_0PanelTile(t, k.f, ref)
		})
	}
}

// BenchmarkTilePanelZMM times the AVX2 and the ZMM VPDPBUSD panel tiles in turns
// (cpuTurns: avx2-cpuGB/s, zmm-cpuGB/s and their ratio zmm/avx2) at BenchmarkTilePanel's
// shapes.
func BenchmarkTilePanelZMM(b *testing.B) {
	if !hasFMA || !hasVNNI {
		b.Skip("no AVX512-VNNI here")
	}
	for _, tc := range []struct {
		name        string
		n, rows, mx int
	}{
		{"Decode", 4096, 8192, 1},
		{"DecodeCached", 4096, 256, 1},
		{"DecodeL2", 4096, 128, 1},
		{"Prompt", 4096, 512, 64},
		{"PromptSmall", 256, 256, 64},
		{"PromptL3", 2048, 4096, 64},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w, x := benchRows(b, Q4_0, tc.n, tc.rows, tc.mx)
			packed := make([]byte, len(w))
			PackQ4_0Panels(packed, w, tc.n)
			dst := make([]float32, tc.rows*tc.mx)
			xs := Q8_0.RowBytes(tc.n)
			tile := func(f PanelTileFunc) func() {
				return func() { f(tc.n, packed, tc.rows, x, xs, tc.mx, dst, tc.rows) }
			}
			cpuTurns(b, int64(len(w)*tc.mx), []string{"avx2", "zmm"}, tile(dotQ4_0PanelTileAVX2), tile(dotQ4_0PanelTileZMM))
		})
	}
}
