package tensor

// The Q4_0 panel kernels on ZMM registers (zmm_q4_0panel_amd64.s): VPDPBUSD over two
// panels at a time, one to each half of a register; the same bits as the AVX2 kernels
// (dotQ4_0RepackGo's).

//go:noescape
func q40PanelX1ZMM(w, x *byte, tab *uint32, nb, np int, dst *float32)

//go:noescape
func q40PanelX1ZMMT0(w, x *byte, tab *uint32, nb, np int, dst *float32)

//go:noescape
func q40PanelsX4ZMM(w, x *byte, xstride int, tab *uint32, nb, np int, dst *float32, dststride int)

//go:noescape
func q40PanelsX8ZMM(w, x *byte, xstride int, tab *uint32, nb, np int, dst *float32, dststride int)

// dotQ4_0PanelTileZMM is dotQ4_0PanelTileAVX2 with the ZMM kernels (and eight activation
// rows a pass): the same bits.
func dotQ4_0PanelTileZMM(n int, w []byte, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotQ4_0PanelTileBy(q40PanelKernelsZMM(q40PrefetchNTA), n, w, mw, x, xStride, mx, dst, dstStride)
}

// q40PanelKernelsZMM returns the ZMM panel kernels, the one-row decode kernel
// prefetching with PREFETCHNTA if nta, else with PREFETCHT0.
func q40PanelKernelsZMM(nta bool) q40PanelKernels {
	if nta {
		return q40PanelKernels{q40PanelsX8ZMM, q40PanelsX4ZMM, q40PanelX1ZMM}
	}
	return q40PanelKernels{q40PanelsX8ZMM, q40PanelsX4ZMM, q40PanelX1ZMMT0}
}
