package tensor

import "testing"

// TestQ4_0PanelKernels checks each amd64 panel tile the CPU allows (the AVX2 kernels,
// the VPDPBUSD ones) against the Go definition of the repacked order, dotQ4_0RepackGo
// one output after another, bit for bit.
func TestQ4_0PanelKernels(t *testing.T) {
	ref := func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
		dotTileBy(dotQ4_0RepackGo, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	}
	for _, k := range []struct {
		name string
		ok   bool
		f    PanelTileFunc
	}{
		{"avx2", hasFMA, dotQ4_0PanelTileAVX2},
		{"vnni", hasFMA && hasVNNI, dotQ4_0PanelTileVNNI},
	} {
		t.Run(k.name, func(t *testing.T) {
			if !k.ok {
				t.Skipf("level %v or the CPU does not allow the %s kernels", Level(), k.name)
			}
			testQ4_0PanelTile(t, k.f, ref)
		})
	}
}
