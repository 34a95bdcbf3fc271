package cpu

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/infergo/infer/tensor"
)

// tileFunc computes a tile of a matmul: dst[i·dstStride+o] = dot(n, w row o, x row i)
// for o < mw, i < mx, rows wStride and xStride bytes apart (tensor.X86DotTileFunc's form).
type tileFunc = func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int)

// floatTile returns the tile form of mulMatDot's dot for F32 and F16 weights (sgemm:
// tinyBLAS takes the batch), or nil for the other types.
func floatTile(wt tensor.DType, sgemm bool) tileFunc {
	if f := avx512Tile(wt, sgemm); f != nil {
		return f
	}
	if f := avx2Tile(wt, sgemm); f != nil {
		return f
	}
	if f := neonTile(wt, sgemm); f != nil {
		return f
	}
	return goTile(wt, sgemm)
}

// checkTile panics unless the tile's rows (wrb and xrb bytes) and its outputs lie
// inside w, x and dst: the assembly tiles read and write without bounds checks.
func checkTile(wrb, xrb int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if (mw-1)*wStride+wrb > len(w) || (mx-1)*xStride+xrb > len(x) || (mx-1)*dstStride+mw > len(dst) || wStride < wrb || xStride < xrb || dstStride < mw {
		panic(fmt.Sprintf("cpu: matmul tile of %d×%d rows of %d and %d bytes outside its buffers", mw, mx, wrb, xrb))
	}
}

// roundF16Row sets dst[i] = float32(F16(src[i])): the activations of an F16 matmul,
// rounded to F16 (tensor.F32ToF16) and widened back.
func roundF16Row(dst, src []float32) {
	dst = dst[:len(src)]
	i := 0
	if n8 := len(src) / 8; useAVX2 && n8 > 0 && !roundF16RowAVX2(&dst[0], &src[0], n8) {
		i = 8 * n8 // no NaN, whose bits F32ToF16 sets its own way
	}
	for ; i < len(src); i++ {
		dst[i] = fromF16(toF16(src[i]))
	}
}

// roundF16Bytes is roundF16Row in the form of a tensor.ActivationQuantizer, dst holding
// float32s.
func roundF16Bytes(dst []byte, src []float32) { roundF16Row(tensor.Float32s(dst), src) }

// The Go tiles below compute the bits of sgemmF32Go, vecDotF32Go, sgemmF16Go and
// vecDotF16Go for several outputs at once: each lane's fma32 chain is run for four
// weight rows (and, in sgemm, two activation rows) together in registers, in the
// chain's own order, and the lanes are then combined as those functions combine them.

// goTile returns the Go tile form of mulMatDot's dot for F32 and F16 weights.
func goTile(wt tensor.DType, sgemm bool) tileFunc {
	return pickTile(wt, sgemm, sgemmTileF32Go, vecDotTileF32Go, sgemmTileF16Go, vecDotTileF16Go)
}

// sgemmTileF32Go is sgemmF32Go over a tile (n a multiple of 16).
func sgemmTileF32Go(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	sgemmTileGo(f32Row, sgemmF32Go, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// sgemmTileF16Go is sgemmF16Go over a tile (n a multiple of 16), the activations F16
// values widened to float32 (MatMul widens them once a row).
func sgemmTileF16Go(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	sgemmTileGo(f16Row, sgemmF16F32Go, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// sgemmTileGo is the Go sgemm tile over weight rows of float32 or F16 bits: row reads
// a weight row, one is the single-output form for the edges (sgemmF32Go or
// sgemmF16F32Go).
func sgemmTileGo[W float32 | uint16](row func(b []byte, off, n int) []W, one func(a []W, b []float32) float32,
	n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if mw <= 0 || mx <= 0 {
		return
	}
	checkTile(n*int(unsafe.Sizeof(W(0))), 4*n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	var c [4][2][lanes]float32
	wp := wide4Pool.Get().(*[]float64)
	defer wide4Pool.Put(wp)
	if cap(*wp) < 4*n {
		*wp = make([]float64, 4*n)
	}
	wv := (*wp)[:4*n]
	xp := wide4Pool.Get().(*[]float64)
	defer wide4Pool.Put(xp)
	m2 := mx &^ 1
	if cap(*xp) < m2*n {
		*xp = make([]float64, m2*n)
	}
	xv := (*xp)[:m2*n] // activation rows i, i+1 widened and interleaved: xv[i*n+2k+j]
	for i := 0; i < m2; i += 2 {
		x0, x1 := f32Row(x, i*xStride, n), f32Row(x, (i+1)*xStride, n)
		for k := range n {
			q := (*[2]float64)(xv[i*n+2*k:])
			q[0], q[1] = float64(x0[k]), float64(x1[k])
		}
	}
	o := 0
	for ; o+4 <= mw; o += 4 {
		w0, w1, w2, w3 := row(w, o*wStride, n), row(w, (o+1)*wStride, n), row(w, (o+2)*wStride, n), row(w, (o+3)*wStride, n)
		// The four rows widened once, interleaved (wv[4k+r]), for every pair of
		// activation rows: the conversions, not the multiply-adds, bound this loop.
		for k := range n {
			q := (*[4]float64)(wv[4*k:])
			q[0], q[1], q[2], q[3] = float64(widen32(w0[k])), float64(widen32(w1[k])), float64(widen32(w2[k])), float64(widen32(w3[k]))
		}
		i := 0
		for ; i+2 <= mx; i += 2 {
			xi := xv[i*n : (i+2)*n]
			for l := range lanes {
				var a00, a01, a10, a11, a20, a21, a30, a31 float64
				for k := l; k < n; k += lanes {
					p := (*[2]float64)(xi[2*k:])
					xa, xb := p[0], p[1]
					q := (*[4]float64)(wv[4*k:])
					wa, wb, wc, wd := q[0], q[1], q[2], q[3]
					a00 = float64(float32(wa*xa + a00))
					a01 = float64(float32(wa*xb + a01))
					a10 = float64(float32(wb*xa + a10))
					a11 = float64(float32(wb*xb + a11))
					a20 = float64(float32(wc*xa + a20))
					a21 = float64(float32(wc*xb + a21))
					a30 = float64(float32(wd*xa + a30))
					a31 = float64(float32(wd*xb + a31))
				}
				c[0][0][l], c[0][1][l] = float32(a00), float32(a01)
				c[1][0][l], c[1][1][l] = float32(a10), float32(a11)
				c[2][0][l], c[2][1][l] = float32(a20), float32(a21)
				c[3][0][l], c[3][1][l] = float32(a30), float32(a31)
			}
			for r := range 4 {
				dst[i*dstStride+o+r] = reduce16(&c[r][0])
				dst[(i+1)*dstStride+o+r] = reduce16(&c[r][1])
			}
		}
		if i < mx {
			x0 := f32Row(x, i*xStride, n)
			for r, wr := range [4][]W{w0, w1, w2, w3} {
				dst[i*dstStride+o+r] = one(wr, x0)
			}
		}
	}
	for ; o < mw; o++ {
		for i := range mx {
			dst[i*dstStride+o] = one(row(w, o*wStride, n), f32Row(x, i*xStride, n))
		}
	}
}

// wide4Pool holds sgemmTileGo's widened weight rows.
var wide4Pool = sync.Pool{New: func() any { return new([]float64) }}

// widen32 is v as a float32: itself, or the F16 value of its bits. (The size test is a
// constant in each instantiation; a type assertion on any(v) is not folded away in the
// uint16 one.)
func widen32[W float32 | uint16](v W) float32 {
	if unsafe.Sizeof(v) == 2 {
		return fromF16(uint16(v))
	}
	return float32(v)
}

// sgemmF16F32Go is sgemmF16Go of an F16 row and a row of F16 values widened to float32.
func sgemmF16F32Go(a []uint16, b []float32) float32 {
	var c [lanes]float32
	for i := 0; i+lanes <= len(a); i += lanes {
		av, bv := (*[lanes]uint16)(a[i:]), (*[lanes]float32)(b[i:])
		for l := range c {
			c[l] = fma32(fromF16(av[l]), bv[l], c[l])
		}
	}
	return reduce16(&c)
}

// vecDotTileF32Go is vecDotF32Go over a tile.
func vecDotTileF32Go(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	vecDotTileGo(f32Row, tailF32, tail4F32, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// vecDotTileF16Go is vecDotF16Go over a tile, the activations F16 values widened to
// float32 (MatMul widens them once a row).
func vecDotTileF16Go(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	vecDotTileGo(f16Row, tailF16, tail4F16, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// tailF32 is vecDotF32Go's end: the elements after the blocks of 64 (from np on)
// fused-multiply-added to the reduced blocks' sum.
func tailF32(w []float32, x []float32, np int, sum float32) float32 {
	for k := np; k < len(x); k++ {
		sum = fma32(w[k], x[k], sum)
	}
	return sum
}

// tail4F32 is tailF32 of four weight rows at once (s: their reduced blocks' sums; it
// returns the results): the four chains interleaved, where one alone is bound by its
// latency.
func tail4F32(w0, w1, w2, w3 []float32, x []float32, np int, s [4]float32) [4]float32 {
	w0, w1, w2, w3 = w0[:len(x)], w1[:len(x)], w2[:len(x)], w3[:len(x)]
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	for k := np; k < len(x); k++ {
		s0 = fma32(w0[k], x[k], s0)
		s1 = fma32(w1[k], x[k], s1)
		s2 = fma32(w2[k], x[k], s2)
		s3 = fma32(w3[k], x[k], s3)
	}
	return [4]float32{s0, s1, s2, s3}
}

// tail4F16 is tailF16 of four weight rows at once, as tail4F32.
func tail4F16(w0, w1, w2, w3 []uint16, x []float32, np int, s [4]float32) [4]float32 {
	w0, w1, w2, w3 = w0[:len(x)], w1[:len(x)], w2[:len(x)], w3[:len(x)]
	s0, s1, s2, s3 := float64(s[0]), float64(s[1]), float64(s[2]), float64(s[3])
	for k := np; k < len(x); k++ {
		s0 += float64(fromF16(w0[k]) * x[k])
		s1 += float64(fromF16(w1[k]) * x[k])
		s2 += float64(fromF16(w2[k]) * x[k])
		s3 += float64(fromF16(w3[k]) * x[k])
	}
	return [4]float32{float32(s0), float32(s1), float32(s2), float32(s3)}
}

// tailF16 is vecDotF16Go's end: the products after the blocks added to their sum in
// float64.
func tailF16(w []uint16, x []float32, np int, sum float32) float32 {
	s := float64(sum)
	for k := np; k < len(x); k++ {
		s += float64(fromF16(w[k]) * x[k])
	}
	return float32(s)
}

// vecDotTileGo is the Go vec-dot tile over weight rows of float32 or F16 bits (row reads
// one): lane p of the 64 (four accumulators of 16) runs its fma32 chain over the blocks
// of 64 for four weight rows at a time (one at the edge), the lanes are combined
// (reduce64) and tail4 (tail at the edge) adds the rest.
func vecDotTileGo[W float32 | uint16](row func(b []byte, off, n int) []W, tail func(w []W, x []float32, np int, sum float32) float32,
	tail4 func(w0, w1, w2, w3 []W, x []float32, np int, s [4]float32) [4]float32, n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if mw <= 0 || mx <= 0 {
		return
	}
	checkTile(n*int(unsafe.Sizeof(W(0))), 4*n, w, wStride, mw, x, xStride, mx, dst, dstStride)
	np := n - n%(4*lanes)
	var acc [4][4 * lanes]float32
	xp := wide4Pool.Get().(*[]float64)
	defer wide4Pool.Put(xp)
	if cap(*xp) < np {
		*xp = make([]float64, np)
	}
	xb := (*xp)[:np] // the activation row's blocks widened once for every weight row
	for i := range mx {
		x0 := f32Row(x, i*xStride, n)
		for k := range xb {
			xb[k] = float64(x0[k])
		}
		o := 0
		for ; o+4 <= mw; o += 4 {
			w0, w1, w2, w3 := row(w, o*wStride, n), row(w, (o+1)*wStride, n), row(w, (o+2)*wStride, n), row(w, (o+3)*wStride, n)
			b0, b1, b2, b3 := w0[:len(xb)], w1[:len(xb)], w2[:len(xb)], w3[:len(xb)]
			for p := range 4 * lanes {
				var a0, a1, a2, a3 float64
				for k := p; k < len(xb); k += 4 * lanes {
					xv := xb[k]
					a0 = float64(float32(float64(widen32(b0[k]))*xv + a0))
					a1 = float64(float32(float64(widen32(b1[k]))*xv + a1))
					a2 = float64(float32(float64(widen32(b2[k]))*xv + a2))
					a3 = float64(float32(float64(widen32(b3[k]))*xv + a3))
				}
				acc[0][p], acc[1][p], acc[2][p], acc[3][p] = float32(a0), float32(a1), float32(a2), float32(a3)
			}
			sums := tail4(w0, w1, w2, w3, x0, np, [4]float32{reduce64(&acc[0]), reduce64(&acc[1]), reduce64(&acc[2]), reduce64(&acc[3])})
			for r, v := range sums {
				dst[i*dstStride+o+r] = v
			}
		}
		for ; o < mw; o++ {
			wr := row(w, o*wStride, n)
			br := wr[:len(xb)]
			for p := range 4 * lanes {
				var a0 float64
				for k := p; k < len(xb); k += 4 * lanes {
					a0 = float64(float32(float64(widen32(br[k]))*xb[k] + a0))
				}
				acc[0][p] = float32(a0)
			}
			dst[i*dstStride+o] = tail(wr, x0, np, reduce64(&acc[0]))
		}
	}
}

// reduce64 combines vecDotF32's four 16-lane accumulators, held as 64 lanes, as
// (0+2)+(1+3), and reduces the result as reduce16 (written out as it is).
func reduce64(a *[4 * lanes]float32) float32 {
	t0 := (lane64(a, 12) + lane64(a, 4)) + (lane64(a, 8) + lane64(a, 0))
	t1 := (lane64(a, 13) + lane64(a, 5)) + (lane64(a, 9) + lane64(a, 1))
	t2 := (lane64(a, 14) + lane64(a, 6)) + (lane64(a, 10) + lane64(a, 2))
	t3 := (lane64(a, 15) + lane64(a, 7)) + (lane64(a, 11) + lane64(a, 3))
	return (t0 + t2) + (t1 + t3)
}

// lane64 is lane l of reduce64's combined accumulator: (a_l + a_{32+l}) + (a_{16+l} + a_{48+l}).
func lane64(a *[4 * lanes]float32, l int) float32 {
	return (a[l] + a[2*lanes+l]) + (a[lanes+l] + a[3*lanes+l])
}

// f32Row and f16Row view the n elements at byte off of b (a row of a tile).
func f32Row(b []byte, off, n int) []float32 { return tensor.Float32s(b[off:])[:n] }
func f16Row(b []byte, off, n int) []uint16  { return uint16s(b[off:])[:n] }

// f32At points at byte off of b, which checkTile has bounded (the assembly tiles'
// activation row pointers).
func f32At(b []byte, off int) *float32 { return (*float32)(unsafe.Pointer(&b[off])) }
