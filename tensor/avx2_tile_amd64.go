package tensor

import "sync"

// The driver of the AVX2 kernels that keep one weight row per float32 lane: panels of
// eight weight rows, each against the activation rows four at a time, then one at a
// time. A last panel of fewer than eight rows is copied into a zero-padded scratch.

// tileScratch holds the per-call tables of the AVX2 tile functions.
type tileScratch struct {
	tab []uint32 // per activation block values (q40XTable, ...)
	pad []byte   // the last weight panel, padded to eight rows
	w   []byte   // unpacked weight panels
}

var tileScratchPool = sync.Pool{New: func() any { return new(tileScratch) }}

func growU32(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	return s[:n]
}

func growBytes(s []byte, n int) []byte {
	if cap(s) < n {
		return make([]byte, n)
	}
	return s[:n]
}

// r8Kernels are the kernels tileR8 drives: x4 writes out[8i+r] for activation rows
// i0+i, i < 4, and weight rows r < 8 of the panel at wp (stride ws); x1 writes out[r]
// for activation row i0.
type r8Kernels struct {
	x4 func(wp *byte, ws, i0 int, out *[32]float32)
	x1 func(wp *byte, ws, i0 int, out *[8]float32)
}

// tileR8 computes dst[i*dstStride+o], o < mw, i < mx, with k over panels of eight
// weight rows of rb bytes (stride wStride). The caller has checked that w, x and dst
// hold the tile.
func tileR8(k r8Kernels, rb int, w []byte, wStride, mw, mx int, dst []float32, dstStride int, s *tileScratch) {
	var out [32]float32
	for o := 0; o < mw; o += 8 {
		wp, ws, m := &w[o*wStride], wStride, min(8, mw-o)
		if m < 8 {
			s.pad = growBytes(s.pad, 8*rb)
			clear(s.pad)
			for r := range m {
				copy(s.pad[r*rb:(r+1)*rb], w[(o+r)*wStride:])
			}
			wp, ws = &s.pad[0], rb
		}
		i := 0
		for ; i+4 <= mx; i += 4 {
			k.x4(wp, ws, i, &out)
			for j := range 4 {
				copy(dst[(i+j)*dstStride+o:(i+j)*dstStride+o+m], out[8*j:8*j+m])
			}
		}
		for ; i < mx; i++ {
			k.x1(wp, ws, i, (*[8]float32)(out[:8]))
			copy(dst[i*dstStride+o:i*dstStride+o+m], out[:m])
		}
	}
}

// tileChecks panics (with an index error) unless w, x and dst hold a tile of mw weight
// rows of wrb bytes and mx activation rows of xrb bytes; it reports whether the tile
// is empty.
func tileChecks(w []byte, wStride, mw, wrb int, x []byte, xStride, mx, xrb int, dst []float32, dstStride int) bool {
	if mw <= 0 || mx <= 0 || wrb <= 0 {
		return true
	}
	_, _ = w[(mw-1)*wStride+wrb-1], x[(mx-1)*xStride+xrb-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	return false
}
