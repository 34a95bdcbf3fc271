package tensor

// The AVX2 (no AVX-512) Q4_0 kernels of avx2_q4_0_amd64.s: the repacked order of
// dotQ4_0RepackGo, eight weight rows at a time.

//go:noescape
func q40RepackR8X4(w *byte, wstride int, x *byte, xstride int, tab *uint32, nb int, dst *float32, dststride int)

//go:noescape
func dotQ4_0RepackAVX2(w, x *byte, nb int) float32

//go:noescape
func q8XRowAVX2(x *byte, nb int, tab *uint32)

//go:noescape
func q40RepackR8X1(w *byte, wstride int, x *byte, tab *uint32, nb int, dst *[8]float32)

// q8XTable fills tab with the per-block values of mx Q8_0 activation rows the 8-row
// kernels read: per group of four rows g and block b, at tab[(g·nb+b)·8:], 8·Σx of
// rows 4g..4g+3, then their dx as float32 bits (rows past mx get zeros).
func q8XTable(tab []uint32, nb int, x []byte, xStride, mx int) {
	clear(tab)
	for i := range mx {
		g, j := i/4, i%4
		_, _ = x[i*xStride+nb*q8_0Bytes-1], tab[(g*nb+nb-1)*8+4+j]
		q8XRowAVX2(&x[i*xStride], nb, &tab[g*nb*8+j])
	}
}

// dotQ4_0RepackTileAVX2 is the tile form of dotQ4_0RepackGo with the 8-row kernels.
func dotQ4_0RepackTileAVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if tileChecks(w, wStride, mw, nb*q4_0Bytes, x, xStride, mx, nb*q8_0Bytes, dst, dstStride) {
		return
	}
	s := tileScratchPool.Get().(*tileScratch)
	defer tileScratchPool.Put(s)
	s.tab = growU32(s.tab, (mx+3)/4*nb*8)
	q8XTable(s.tab, nb, x, xStride, mx)
	tab := s.tab
	tileR8(r8Kernels{
		x4: func(wp *byte, ws, i int, d *float32, ds int) {
			q40RepackR8X4(wp, ws, &x[i*xStride], xStride, &tab[i/4*nb*8], nb, d, ds)
		},
		x1: func(wp *byte, ws, i int, out *[8]float32) {
			q40RepackR8X1(wp, ws, &x[i*xStride], &tab[i/4*nb*8+i%4], nb, out)
		},
	}, nb*q4_0Bytes, w, wStride, mw, mx, dst, dstStride, s)
}

//go:noescape
func q40PanelX1(w, x *byte, tab *uint32, nb, np int, dst *float32)

//go:noescape
func q40PanelX1T0(w, x *byte, tab *uint32, nb, np int, dst *float32)

//go:noescape
func q40PanelsX4(w, x *byte, xstride int, tab *uint32, nb, np int, dst *float32, dststride int)

// q40PanelTile is Q4_0PanelTileFunc on amd64: at the AVX2 level the AVX2 kernels, at
// the AVX-512 level (AVX512-VNNI) the VPDPBUSD ones on ZMM registers (1.3-1.6x the
// YMM VPDPBUSD kernels they replaced for a prompt on Zen 4, 1.1-1.3x for a decode from
// the cache; 1.1-1.4x on a Xeon), with the same bits; nil without FMA.
func q40PanelTile() PanelTileFunc {
	switch {
	case hasFMA && hasVNNI:
		return dotQ4_0PanelTileZMM
	case hasFMA:
		return dotQ4_0PanelTileAVX2
	}
	return nil
}

// q40PanelKernels are the kernels of dotQ4_0PanelTileBy: x8 (if not nil) for eight
// activation rows over np panels, x4 for four, x1 for one.
type q40PanelKernels struct {
	x8, x4 func(w, x *byte, xstride int, tab *uint32, nb, np int, dst *float32, dststride int)
	x1     func(w, x *byte, tab *uint32, nb, np int, dst *float32)
}

// dotQ4_0PanelTileAVX2 is dotQ4_0RepackTileAVX2 over weights in the panel layout, with
// q40PanelsX4 and q40PanelX1 (dotQ4_0PanelTileBy).
func dotQ4_0PanelTileAVX2(n int, w []byte, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotQ4_0PanelTileBy(q40PanelKernelsAVX2(q40PrefetchNTA), n, w, mw, x, xStride, mx, dst, dstStride)
}

// q40PanelKernelsAVX2 returns the AVX2 panel kernels, the one-row decode kernel
// prefetching with PREFETCHNTA if nta (q40PanelX1), else with PREFETCHT0 (q40PanelX1T0).
func q40PanelKernelsAVX2(nta bool) q40PanelKernels {
	if nta {
		return q40PanelKernels{nil, q40PanelsX4, q40PanelX1}
	}
	return q40PanelKernels{nil, q40PanelsX4, q40PanelX1T0}
}

// dotQ4_0PanelTileBy computes a panel tile (PanelTileFunc) with k: the activation rows
// eight at a time (k.x8, where there is one), then four (k.x4), the rest one at a time
// (k.x1). The panels go in chunks of about tileChunkBytes, each against every
// activation row, so that a chunk is read from memory once and from the cache for the
// other rows.
func dotQ4_0PanelTileBy(k q40PanelKernels, n int, w []byte, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	np := mw / X86RepackRows
	pb := nb * X86RepackRows * q4_0Bytes
	if np <= 0 || mx <= 0 || nb <= 0 {
		return
	}
	if mw%X86RepackRows != 0 {
		panic("tensor: Q4_0 panel tile of a partial panel")
	}
	_, _ = w[np*pb-1], x[(mx-1)*xStride+nb*q8_0Bytes-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	s := tileScratchPool.Get().(*tileScratch)
	defer tileScratchPool.Put(s)
	s.tab = growU32(s.tab, (mx+3)/4*nb*8)
	q8XTable(s.tab, nb, x, xStride, mx)
	tab := s.tab
	chunk := np
	if mx > 4 {
		chunk = max(1, tileChunkBytes/pb)
	}
	for p0 := 0; p0 < np; p0 += chunk {
		c := min(chunk, np-p0)
		wp, o := &w[p0*pb], p0*X86RepackRows
		i := 0
		for ; k.x8 != nil && i+8 <= mx; i += 8 {
			k.x8(wp, &x[i*xStride], xStride, &tab[i/4*nb*8], nb, c, &dst[i*dstStride+o], 4*dstStride)
		}
		for ; i+4 <= mx; i += 4 {
			k.x4(wp, &x[i*xStride], xStride, &tab[i/4*nb*8], nb, c, &dst[i*dstStride+o], 4*dstStride)
		}
		for ; i < mx; i++ {
			k.x1(wp, &x[i*xStride], &tab[i/4*nb*8+i%4], nb, c, &dst[i*dstStride+o])
		}
	}
}
