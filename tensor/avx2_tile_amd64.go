package tensor

import (
	"sync"
	"unsafe"
)

// The driver of the AVX2 kernels that keep one weight row per float32 lane: panels of
// eight weight rows, each against the activation rows four at a time, then one at a
// time. A last panel of fewer than eight rows is copied into a zero-padded scratch.

// tileScratch holds the per-call tables of the AVX2 tile functions.
type tileScratch struct {
	tab  []uint32  // per activation block values (q40XTable, ...)
	pad  []byte    // the last weight panel, padded to eight rows
	w    []byte    // prepared activation rows
	conv []byte    // weight rows converted to another block format
	f32  []float32 // per block float32 values (addSumms)
	// scales is q80TileR4X4VNNI's table of block scales, then its weight scales.
	scales []float32
	// The kernels' outputs: here rather than on the stack, which the kernels, called
	// through function values, would move to the heap on every call.
	out [32]float32
	acc [8][8]float32
	ext [8]float32
}

var tileScratchPool = sync.Pool{New: func() any { return new(tileScratch) }}

func growU32(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	return s[:n]
}

func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func growBytes(s []byte, n int) []byte {
	if cap(s) < n {
		return make([]byte, n)
	}
	return s[:n]
}

// r8Kernels are the kernels tileR8 drives: x4 (if not nil) writes d[i·ds/4 + r] (ds in
// bytes) for activation rows i0+i, i < 4, and weight rows r < 8 of the panel at wp
// (stride ws); x1 writes out[r] for activation row i0.
type r8Kernels struct {
	x4 func(wp *byte, ws, i0 int, d *float32, ds int)
	x1 func(wp *byte, ws, i0 int, out *[8]float32)
}

// tileR8 computes dst[i*dstStride+o], o < mw, i < mx, with k over panels of eight
// weight rows of rb bytes (stride wStride). The caller has checked that w, x and dst
// hold the tile.
func tileR8(k r8Kernels, rb int, w []byte, wStride, mw, mx int, dst []float32, dstStride int, s *tileScratch) {
	out := &s.out
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
		for ; k.x4 != nil && i+4 <= mx; i += 4 {
			if m == 8 { // in place
				k.x4(wp, ws, i, &dst[i*dstStride+o], 4*dstStride)
				continue
			}
			k.x4(wp, ws, i, &out[0], 4*8)
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

// laneKernels are the kernels tileLanes drives, for the x86 lane orders (eight float32
// lanes per output, reduced by hsum8 at the end): x4 leaves in acc[4r+i] the lanes of
// weight row r < 2 of the panel at wp (stride ws) and activation row i0+i, i < 4; x1
// leaves in acc[r] those of weight rows r < 4 and activation row i0. Where ext is set,
// the kernels also leave in e[4r+i] (x4) or e[r] (x1) a float32 the order adds to
// hsum8 (the sum of the mins of Q4_1 and Q5_K).
type laneKernels struct {
	x4  func(wp *byte, ws, i0 int, acc *[8][8]float32, e *[8]float32)
	x1  func(wp *byte, ws, i0 int, acc *[4][8]float32, e *[4]float32)
	ext bool
}

// tileLanes computes dst[i*dstStride+o], o < mw, i < mx, with k over panels of four
// weight rows of rb bytes (stride wStride). The weight rows go in chunks of about
// tileChunkBytes, each against every activation row, so that a chunk stays in the
// cache across the groups of activation rows. The caller has checked that w, x and
// dst hold the tile.
func tileLanes(k laneKernels, rb int, w []byte, wStride, mw, mx int, dst []float32, dstStride int, s *tileScratch) {
	acc, ext := &s.acc, &s.ext
	fin := func(o, i int, a *[8]float32, e float32) {
		v := hsum8(a)
		if k.ext {
			v += e
		}
		dst[i*dstStride+o] = v
	}
	chunk := max(4, tileChunkBytes/max(1, rb)&^3)
	for o0 := 0; o0 < mw; o0 += chunk {
		o1 := min(mw, o0+chunk)
		// The panels of the chunk: full ones in place, a last partial one padded.
		panel := func(o int) (*byte, int, int) {
			m := min(4, o1-o)
			if m == 4 {
				return &w[o*wStride], wStride, 4
			}
			return &s.pad[0], rb, m
		}
		if m := (o1 - o0) % 4; m != 0 {
			s.pad = growBytes(s.pad, 4*rb)
			clear(s.pad)
			for r := range m {
				o := o1 - m + r
				copy(s.pad[r*rb:(r+1)*rb], w[o*wStride:o*wStride+rb])
			}
		}
		i := 0
		for ; i+4 <= mx; i += 4 {
			for o := o0; o < o1; o += 4 {
				wp, ws, m := panel(o)
				for r0 := 0; r0 < m; r0 += 2 {
					k.x4((*byte)(unsafe.Add(unsafe.Pointer(wp), r0*ws)), ws, i, acc, ext)
					for r := r0; r < min(r0+2, m); r++ {
						for j := range 4 {
							fin(o+r, i+j, &acc[4*(r-r0)+j], ext[4*(r-r0)+j])
						}
					}
				}
			}
		}
		for ; i < mx; i++ {
			for o := o0; o < o1; o += 4 {
				wp, ws, m := panel(o)
				k.x1(wp, ws, i, (*[4][8]float32)(acc[:4]), (*[4]float32)(ext[:4]))
				for r := range m {
					fin(o+r, i, &acc[r], ext[r])
				}
			}
		}
	}
}

// tileChunkBytes is the size of the chunks of weight rows tileLanes takes against all
// the activation rows: half of a 512 KiB L2 cache.
const tileChunkBytes = 256 << 10
