package tensor

import "sync"

// llama.cpp's generic (non-SIMD) float order: what ggml-cpu computes when it is built
// without SIMD (ggml_vec_dot_*_generic of ggml-cpu/quants.c, and the scalar branch of
// ggml_vec_dot_f32/f16 in vec.cpp), no repacking and no llamafile sgemm. It is far
// cheaper in Go than the x86 order (X86DotFunc): per block one exact integer sum and
// a few float32 operations, in place of eight emulated fused multiply-adds.
//
//   - Q8_0: sumf += sumi*(dw*dx), float32, block by block;
//   - Q4_0: sumf += sumi*dw*dx (left to right: (sumi*dw)*dx), float32;
//   - Q4_K: per block eight integer lanes aux32[l] (element e of the block in lane e%8,
//     each product times its sub-block's scale), then sums[l] += d*aux32[l] with
//     d = dw*d8, and sumf -= dmin*sumi (sumi = Σ bsums·mins, dmin = dminw*d8); at the
//     end sumf += sums[0], …, sums[7];
//   - Q6_K: the same eight lanes and sums (no min part);
//   - F32 and F16: each product rounded to float32, the sum in float64 (ggml_float),
//     element after element, rounded to float32 once.
//
// The CPU backend takes these at the portable level where they kept its conformance
// tests' tolerances (backend/cpu's genericOrder: F32 and F16 weights when decoding);
// the Q8_0, Q4_0, Q4_K and Q6_K ones are the generic order's definition for those types,
// checked against transcriptions of the C code. Every float32 operation is written
// with an explicit conversion so that no compiler fuses a multiplication and an
// addition (arm64's would).

// GenericDotFunc returns the dot product of a weight row of type t with activations of
// type t.VecDotType() in llama.cpp's generic (non-SIMD) float order, or nil where it has
// none here: there is one for F32, F16, Q8_0, Q4_0, Q4_K and Q6_K.
func GenericDotFunc(t DType) func(n int, w, x []byte) float32 {
	switch t {
	case F32:
		return dotF32Generic
	case F16:
		return dotF16Generic
	case Q8_0:
		return dotQ8_0Go
	case Q4_0:
		return dotQ4_0Go
	case Q4_K:
		return dotQ4KGeneric
	case Q6_K:
		return dotQ6KGeneric
	}
	return nil
}

// GenericDotTileFunc returns, for the types of GenericDotFunc (nil for the others), the
// function computing a tile of a matrix product with GenericDotFunc(t)'s bits: for
// o < mw and i < mx,
//
//	dst[i*dstStride+o] = GenericDotFunc(t)(n, w[o*wStride:], x[i*xStride:])
//
// except that for F16 weights the activation rows are the F16 values widened to float32
// (4 bytes an element; the widening is exact, so the products are the same).
func GenericDotTileFunc(t DType) func(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	switch t {
	case F32:
		return genTileF32
	case F16:
		return genTileF16
	case Q8_0:
		return genTileQ8_0
	case Q4_0:
		return genTileQ4_0
	case Q4_K:
		return genTileQ4K
	case Q6_K:
		return genTileQ6K
	}
	return nil
}

// dotF32Generic is ggml_vec_dot_f32 without SIMD: sumf += (ggml_float)(x[i]*y[i]).
func dotF32Generic(n int, w, x []byte) float32 {
	a, b := Float32s(w)[:n], Float32s(x)[:n]
	var s float64
	for i := range a {
		s += float64(float32(a[i] * b[i]))
	}
	return float32(s)
}

// dotF16Generic is ggml_vec_dot_f16 without SIMD: the F16 values widened, each product
// rounded to float32, the sum in float64.
func dotF16Generic(n int, w, x []byte) float32 {
	a, b := uint16s(w, n), uint16s(x, n)
	t := f16Table
	var s float64
	for i := range a {
		s += float64(float32(t[a[i]] * t[b[i]]))
	}
	return float32(s)
}

// genTileF32 is GenericDotTileFunc(F32): four weight rows against two activation rows
// at a time, each output's float64 chain in its own register.
func genTileF32(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if n <= 0 || mw <= 0 || mx <= 0 {
		dotTileBy(dotF32Generic, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	_, _ = w[(mw-1)*wStride+4*n-1], x[(mx-1)*xStride+4*n-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	row := func(b []byte, off int) []float32 { return Float32s(b[off : off+4*n])[:n] }
	o := 0
	for ; o+4 <= mw; o += 4 {
		w0, w1, w2, w3 := row(w, o*wStride), row(w, (o+1)*wStride), row(w, (o+2)*wStride), row(w, (o+3)*wStride)
		i := 0
		for ; i+2 <= mx; i += 2 {
			x0, x1 := row(x, i*xStride), row(x, (i+1)*xStride)
			var a0, a1, a2, a3, c0, c1, c2, c3 float64
			for k := range x0 {
				u, v := x0[k], x1[k]
				p, q, r, s := w0[k], w1[k], w2[k], w3[k]
				a0 += float64(float32(p * u))
				a1 += float64(float32(q * u))
				a2 += float64(float32(r * u))
				a3 += float64(float32(s * u))
				c0 += float64(float32(p * v))
				c1 += float64(float32(q * v))
				c2 += float64(float32(r * v))
				c3 += float64(float32(s * v))
			}
			d0, d1 := dst[i*dstStride+o:i*dstStride+o+4], dst[(i+1)*dstStride+o:(i+1)*dstStride+o+4]
			d0[0], d0[1], d0[2], d0[3] = float32(a0), float32(a1), float32(a2), float32(a3)
			d1[0], d1[1], d1[2], d1[3] = float32(c0), float32(c1), float32(c2), float32(c3)
		}
		for ; i < mx; i++ {
			x0 := row(x, i*xStride)
			var a0, a1, a2, a3 float64
			for k := range x0 {
				u := x0[k]
				a0 += float64(float32(w0[k] * u))
				a1 += float64(float32(w1[k] * u))
				a2 += float64(float32(w2[k] * u))
				a3 += float64(float32(w3[k] * u))
			}
			d0 := dst[i*dstStride+o : i*dstStride+o+4]
			d0[0], d0[1], d0[2], d0[3] = float32(a0), float32(a1), float32(a2), float32(a3)
		}
	}
	for ; o < mw; o++ {
		for i := range mx {
			dst[i*dstStride+o] = dotF32Generic(n, w[o*wStride:], x[i*xStride:])
		}
	}
}

// genTileF16 is GenericDotTileFunc(F16): genTileF32 over F16 weights (widened by table)
// and activations already widened to float32.
func genTileF16(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	if n <= 0 || mw <= 0 || mx <= 0 {
		return
	}
	_, _ = w[(mw-1)*wStride+2*n-1], x[(mx-1)*xStride+4*n-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	t := f16Table
	xrow := func(off int) []float32 { return Float32s(x[off : off+4*n])[:n] }
	wrow := func(off int) []uint16 { return uint16s(w[off:off+2*n], n) }
	o := 0
	for ; o+4 <= mw; o += 4 {
		w0, w1, w2, w3 := wrow(o*wStride), wrow((o+1)*wStride), wrow((o+2)*wStride), wrow((o+3)*wStride)
		i := 0
		for ; i+2 <= mx; i += 2 {
			x0, x1 := xrow(i*xStride), xrow((i+1)*xStride)
			x1 = x1[:len(x0)]
			w0, w1, w2, w3 = w0[:len(x0)], w1[:len(x0)], w2[:len(x0)], w3[:len(x0)]
			var a0, a1, a2, a3, c0, c1, c2, c3 float64
			for k := range x0 {
				u, v := x0[k], x1[k]
				p, q, r, s := t[w0[k]], t[w1[k]], t[w2[k]], t[w3[k]]
				a0 += float64(float32(p * u))
				a1 += float64(float32(q * u))
				a2 += float64(float32(r * u))
				a3 += float64(float32(s * u))
				c0 += float64(float32(p * v))
				c1 += float64(float32(q * v))
				c2 += float64(float32(r * v))
				c3 += float64(float32(s * v))
			}
			d0, d1 := dst[i*dstStride+o:i*dstStride+o+4], dst[(i+1)*dstStride+o:(i+1)*dstStride+o+4]
			d0[0], d0[1], d0[2], d0[3] = float32(a0), float32(a1), float32(a2), float32(a3)
			d1[0], d1[1], d1[2], d1[3] = float32(c0), float32(c1), float32(c2), float32(c3)
		}
		for ; i < mx; i++ {
			x0 := xrow(i * xStride)
			w0, w1, w2, w3 = w0[:len(x0)], w1[:len(x0)], w2[:len(x0)], w3[:len(x0)]
			var a0, a1, a2, a3 float64
			for k := range x0 {
				u := x0[k]
				a0 += float64(float32(t[w0[k]] * u))
				a1 += float64(float32(t[w1[k]] * u))
				a2 += float64(float32(t[w2[k]] * u))
				a3 += float64(float32(t[w3[k]] * u))
			}
			d0 := dst[i*dstStride+o : i*dstStride+o+4]
			d0[0], d0[1], d0[2], d0[3] = float32(a0), float32(a1), float32(a2), float32(a3)
		}
	}
	for ; o < mw; o++ {
		wo := wrow(o * wStride)
		for i := range mx {
			x0 := xrow(i * xStride)
			wo = wo[:len(x0)]
			var s float64
			for k := range x0 {
				s += float64(float32(t[wo[k]] * x0[k]))
			}
			dst[i*dstStride+o] = float32(s)
		}
	}
}

// genQ8Combine adds block sum s of scales dw, dx to sumf: Q8_0's sumi*(dw*dx), or with
// q4 Q4_0's (sumi*dw)*dx.
func genQ8Combine(q4 bool, sumf float32, s int32, dw, dx float32) float32 {
	if q4 {
		return sumf + float32(float32(float32(s)*dw)*dx)
	}
	return sumf + float32(float32(s)*float32(dw*dx))
}

// genTileQ8_0 is GenericDotTileFunc(Q8_0).
func genTileQ8_0(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	genTileQ8Form(false, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// genTileQ4_0 is GenericDotTileFunc(Q4_0): the weight rows are rewritten as Q8_0 blocks
// of their levels u−8 with dw (q4_0AsQ8), a group of rows at a time, for
// genTileQ8Form's integer sums; the block's float32 step is Q4_0's.
func genTileQ4_0(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if nb <= 0 || mw <= 0 || mx <= 0 {
		dotTileBy(dotQ4_0Go, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
		return
	}
	_ = w[(mw-1)*wStride+nb*q4_0Bytes-1]
	rb := nb * q8_0Bytes
	g := max(4, min(mw, 32<<10/rb)) // rows a group: 32 KiB of converted weights
	buf := q8AsPool.Get().(*[]byte)
	defer q8AsPool.Put(buf)
	if cap(*buf) < g*rb {
		*buf = make([]byte, g*rb)
	}
	c := (*buf)[:g*rb]
	for o0 := 0; o0 < mw; o0 += g {
		gr := min(g, mw-o0)
		for o := range gr {
			wo := w[(o0+o)*wStride:]
			for b := range nb {
				q4_0AsQ8(c[o*rb+b*q8_0Bytes:], wo[b*q4_0Bytes:])
			}
		}
		genTileQ8Form(true, n, c, rb, gr, x, xStride, mx, dst[o0:], dstStride)
	}
}

// genTileQ8Form is the tile of Q8_0-form weight rows (Q8_0 blocks; for q4 Q4_0's
// levels) against Q8_0 activation rows in the generic order. Four activation rows or
// more: packed in pairs to int64s (q8x86Pack: x_i + x_{i+1}·2^32), so that one 64-bit
// multiplication by a weight quant gives two rows' products, two weight rows a pass;
// fewer (decoding): four weight rows a pass against one activation row.
func genTileQ8Form(q4 bool, n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if nb <= 0 || mw <= 0 || mx <= 0 {
		for i := range mx {
			for o := range mw {
				dst[i*dstStride+o] = 0
			}
		}
		return
	}
	rb := nb * q8_0Bytes
	_, _ = w[(mw-1)*wStride+rb-1], x[(mx-1)*xStride+rb-1]
	_ = dst[(mx-1)*dstStride+mw-1]
	i := 0
	if mx >= 4 {
		t := q8x86PairPool.Get().(*q8x86Pairs)
		for ; i+4 <= mx; i += 4 {
			q8x86Pack(t, nb, x[i*xStride:], xStride)
			o := 0
			for ; o+2 <= mw; o += 2 {
				var a, b [4]float32
				genRows4W2(q4, t, nb, w[o*wStride:o*wStride+rb], w[(o+1)*wStride:(o+1)*wStride+rb], &a, &b)
				for r := range 4 {
					dst[(i+r)*dstStride+o], dst[(i+r)*dstStride+o+1] = a[r], b[r]
				}
			}
			if o < mw {
				var a [4]float32
				wo := w[o*wStride : o*wStride+rb]
				genRows4W2(q4, t, nb, wo, wo, &a, &a)
				for r := range 4 {
					dst[(i+r)*dstStride+o] = a[r]
				}
			}
		}
		q8x86PairPool.Put(t)
	}
	for ; i < mx; i++ {
		xi := x[i*xStride : i*xStride+rb]
		o := 0
		for ; o+4 <= mw; o += 4 {
			d := dst[i*dstStride+o : i*dstStride+o+4]
			d[0], d[1], d[2], d[3] = genW4(q4, nb, w[o*wStride:o*wStride+rb], w[(o+1)*wStride:(o+1)*wStride+rb],
				w[(o+2)*wStride:(o+2)*wStride+rb], w[(o+3)*wStride:(o+3)*wStride+rb], xi)
		}
		for ; o < mw; o++ {
			wo := w[o*wStride : o*wStride+rb]
			dst[i*dstStride+o], _, _, _ = genW4(q4, nb, wo, wo, wo, wo, xi)
		}
	}
}

// genW4 returns the generic-order dots of four Q8_0-form weight rows with activation
// row x: per block four exact int32 sums, each activation quant loaded once for the
// four rows. The block is written out: each block's address in one register and the
// loads at fixed offsets from it (MOVBQSX has no base+index+offset form in Go's SSA).
func genW4(q4 bool, nb int, w0, w1, w2, w3, x []byte) (float32, float32, float32, float32) {
	var f0, f1, f2, f3 float32
	var u, v int32
	for range nb {
		b0, b1, b2, b3 := (*[q8_0Bytes]byte)(w0), (*[q8_0Bytes]byte)(w1), (*[q8_0Bytes]byte)(w2), (*[q8_0Bytes]byte)(w3)
		xb := (*[q8_0Bytes]byte)(x)
		w0, w1, w2, w3, x = w0[q8_0Bytes:], w1[q8_0Bytes:], w2[q8_0Bytes:], w3[q8_0Bytes:], x[q8_0Bytes:]
		var s0, s1, s2, s3 int32
		u, v = int32(int8(xb[2])), int32(int8(xb[3]))
		s0 += int32(int8(b0[2]))*u + int32(int8(b0[3]))*v
		s1 += int32(int8(b1[2]))*u + int32(int8(b1[3]))*v
		s2 += int32(int8(b2[2]))*u + int32(int8(b2[3]))*v
		s3 += int32(int8(b3[2]))*u + int32(int8(b3[3]))*v
		u, v = int32(int8(xb[4])), int32(int8(xb[5]))
		s0 += int32(int8(b0[4]))*u + int32(int8(b0[5]))*v
		s1 += int32(int8(b1[4]))*u + int32(int8(b1[5]))*v
		s2 += int32(int8(b2[4]))*u + int32(int8(b2[5]))*v
		s3 += int32(int8(b3[4]))*u + int32(int8(b3[5]))*v
		u, v = int32(int8(xb[6])), int32(int8(xb[7]))
		s0 += int32(int8(b0[6]))*u + int32(int8(b0[7]))*v
		s1 += int32(int8(b1[6]))*u + int32(int8(b1[7]))*v
		s2 += int32(int8(b2[6]))*u + int32(int8(b2[7]))*v
		s3 += int32(int8(b3[6]))*u + int32(int8(b3[7]))*v
		u, v = int32(int8(xb[8])), int32(int8(xb[9]))
		s0 += int32(int8(b0[8]))*u + int32(int8(b0[9]))*v
		s1 += int32(int8(b1[8]))*u + int32(int8(b1[9]))*v
		s2 += int32(int8(b2[8]))*u + int32(int8(b2[9]))*v
		s3 += int32(int8(b3[8]))*u + int32(int8(b3[9]))*v
		u, v = int32(int8(xb[10])), int32(int8(xb[11]))
		s0 += int32(int8(b0[10]))*u + int32(int8(b0[11]))*v
		s1 += int32(int8(b1[10]))*u + int32(int8(b1[11]))*v
		s2 += int32(int8(b2[10]))*u + int32(int8(b2[11]))*v
		s3 += int32(int8(b3[10]))*u + int32(int8(b3[11]))*v
		u, v = int32(int8(xb[12])), int32(int8(xb[13]))
		s0 += int32(int8(b0[12]))*u + int32(int8(b0[13]))*v
		s1 += int32(int8(b1[12]))*u + int32(int8(b1[13]))*v
		s2 += int32(int8(b2[12]))*u + int32(int8(b2[13]))*v
		s3 += int32(int8(b3[12]))*u + int32(int8(b3[13]))*v
		u, v = int32(int8(xb[14])), int32(int8(xb[15]))
		s0 += int32(int8(b0[14]))*u + int32(int8(b0[15]))*v
		s1 += int32(int8(b1[14]))*u + int32(int8(b1[15]))*v
		s2 += int32(int8(b2[14]))*u + int32(int8(b2[15]))*v
		s3 += int32(int8(b3[14]))*u + int32(int8(b3[15]))*v
		u, v = int32(int8(xb[16])), int32(int8(xb[17]))
		s0 += int32(int8(b0[16]))*u + int32(int8(b0[17]))*v
		s1 += int32(int8(b1[16]))*u + int32(int8(b1[17]))*v
		s2 += int32(int8(b2[16]))*u + int32(int8(b2[17]))*v
		s3 += int32(int8(b3[16]))*u + int32(int8(b3[17]))*v
		u, v = int32(int8(xb[18])), int32(int8(xb[19]))
		s0 += int32(int8(b0[18]))*u + int32(int8(b0[19]))*v
		s1 += int32(int8(b1[18]))*u + int32(int8(b1[19]))*v
		s2 += int32(int8(b2[18]))*u + int32(int8(b2[19]))*v
		s3 += int32(int8(b3[18]))*u + int32(int8(b3[19]))*v
		u, v = int32(int8(xb[20])), int32(int8(xb[21]))
		s0 += int32(int8(b0[20]))*u + int32(int8(b0[21]))*v
		s1 += int32(int8(b1[20]))*u + int32(int8(b1[21]))*v
		s2 += int32(int8(b2[20]))*u + int32(int8(b2[21]))*v
		s3 += int32(int8(b3[20]))*u + int32(int8(b3[21]))*v
		u, v = int32(int8(xb[22])), int32(int8(xb[23]))
		s0 += int32(int8(b0[22]))*u + int32(int8(b0[23]))*v
		s1 += int32(int8(b1[22]))*u + int32(int8(b1[23]))*v
		s2 += int32(int8(b2[22]))*u + int32(int8(b2[23]))*v
		s3 += int32(int8(b3[22]))*u + int32(int8(b3[23]))*v
		u, v = int32(int8(xb[24])), int32(int8(xb[25]))
		s0 += int32(int8(b0[24]))*u + int32(int8(b0[25]))*v
		s1 += int32(int8(b1[24]))*u + int32(int8(b1[25]))*v
		s2 += int32(int8(b2[24]))*u + int32(int8(b2[25]))*v
		s3 += int32(int8(b3[24]))*u + int32(int8(b3[25]))*v
		u, v = int32(int8(xb[26])), int32(int8(xb[27]))
		s0 += int32(int8(b0[26]))*u + int32(int8(b0[27]))*v
		s1 += int32(int8(b1[26]))*u + int32(int8(b1[27]))*v
		s2 += int32(int8(b2[26]))*u + int32(int8(b2[27]))*v
		s3 += int32(int8(b3[26]))*u + int32(int8(b3[27]))*v
		u, v = int32(int8(xb[28])), int32(int8(xb[29]))
		s0 += int32(int8(b0[28]))*u + int32(int8(b0[29]))*v
		s1 += int32(int8(b1[28]))*u + int32(int8(b1[29]))*v
		s2 += int32(int8(b2[28]))*u + int32(int8(b2[29]))*v
		s3 += int32(int8(b3[28]))*u + int32(int8(b3[29]))*v
		u, v = int32(int8(xb[30])), int32(int8(xb[31]))
		s0 += int32(int8(b0[30]))*u + int32(int8(b0[31]))*v
		s1 += int32(int8(b1[30]))*u + int32(int8(b1[31]))*v
		s2 += int32(int8(b2[30]))*u + int32(int8(b2[31]))*v
		s3 += int32(int8(b3[30]))*u + int32(int8(b3[31]))*v
		u, v = int32(int8(xb[32])), int32(int8(xb[33]))
		s0 += int32(int8(b0[32]))*u + int32(int8(b0[33]))*v
		s1 += int32(int8(b1[32]))*u + int32(int8(b1[33]))*v
		s2 += int32(int8(b2[32]))*u + int32(int8(b2[33]))*v
		s3 += int32(int8(b3[32]))*u + int32(int8(b3[33]))*v
		dx := halfAt(xb[:])
		f0 = genQ8Combine(q4, f0, s0, halfAt(b0[:]), dx)
		f1 = genQ8Combine(q4, f1, s1, halfAt(b1[:]), dx)
		f2 = genQ8Combine(q4, f2, s2, halfAt(b2[:]), dx)
		f3 = genQ8Combine(q4, f3, s3, halfAt(b3[:]), dx)
	}
	return f0, f1, f2, f3
}

// genRows4W2 sets a[r] and b[r] to the generic-order dots of Q8_0-form weight rows wa
// and wb with the four activation rows packed in t, written out as genW4.
func genRows4W2(q4 bool, t *q8x86Pairs, nb int, wa, wb []byte, a, b *[4]float32) {
	ne := nb * QK
	p01, p23, d := t.p01[:ne], t.p23[:ne], t.d[:4*nb]
	var fa, fb [4]float32
	var u, v int64
	for range nb {
		ba, bb := (*[q8_0Bytes]byte)(wa), (*[q8_0Bytes]byte)(wb)
		q01, q23, db := (*[QK]int64)(p01), (*[QK]int64)(p23), (*[4]float32)(d)
		wa, wb, p01, p23, d = wa[q8_0Bytes:], wb[q8_0Bytes:], p01[QK:], p23[QK:], d[4:]
		var a01, a23, b01, b23 int64
		u, v = int64(int8(ba[2])), int64(int8(bb[2]))
		a01, a23, b01, b23 = a01+u*q01[0], a23+u*q23[0], b01+v*q01[0], b23+v*q23[0]
		u, v = int64(int8(ba[3])), int64(int8(bb[3]))
		a01, a23, b01, b23 = a01+u*q01[1], a23+u*q23[1], b01+v*q01[1], b23+v*q23[1]
		u, v = int64(int8(ba[4])), int64(int8(bb[4]))
		a01, a23, b01, b23 = a01+u*q01[2], a23+u*q23[2], b01+v*q01[2], b23+v*q23[2]
		u, v = int64(int8(ba[5])), int64(int8(bb[5]))
		a01, a23, b01, b23 = a01+u*q01[3], a23+u*q23[3], b01+v*q01[3], b23+v*q23[3]
		u, v = int64(int8(ba[6])), int64(int8(bb[6]))
		a01, a23, b01, b23 = a01+u*q01[4], a23+u*q23[4], b01+v*q01[4], b23+v*q23[4]
		u, v = int64(int8(ba[7])), int64(int8(bb[7]))
		a01, a23, b01, b23 = a01+u*q01[5], a23+u*q23[5], b01+v*q01[5], b23+v*q23[5]
		u, v = int64(int8(ba[8])), int64(int8(bb[8]))
		a01, a23, b01, b23 = a01+u*q01[6], a23+u*q23[6], b01+v*q01[6], b23+v*q23[6]
		u, v = int64(int8(ba[9])), int64(int8(bb[9]))
		a01, a23, b01, b23 = a01+u*q01[7], a23+u*q23[7], b01+v*q01[7], b23+v*q23[7]
		u, v = int64(int8(ba[10])), int64(int8(bb[10]))
		a01, a23, b01, b23 = a01+u*q01[8], a23+u*q23[8], b01+v*q01[8], b23+v*q23[8]
		u, v = int64(int8(ba[11])), int64(int8(bb[11]))
		a01, a23, b01, b23 = a01+u*q01[9], a23+u*q23[9], b01+v*q01[9], b23+v*q23[9]
		u, v = int64(int8(ba[12])), int64(int8(bb[12]))
		a01, a23, b01, b23 = a01+u*q01[10], a23+u*q23[10], b01+v*q01[10], b23+v*q23[10]
		u, v = int64(int8(ba[13])), int64(int8(bb[13]))
		a01, a23, b01, b23 = a01+u*q01[11], a23+u*q23[11], b01+v*q01[11], b23+v*q23[11]
		u, v = int64(int8(ba[14])), int64(int8(bb[14]))
		a01, a23, b01, b23 = a01+u*q01[12], a23+u*q23[12], b01+v*q01[12], b23+v*q23[12]
		u, v = int64(int8(ba[15])), int64(int8(bb[15]))
		a01, a23, b01, b23 = a01+u*q01[13], a23+u*q23[13], b01+v*q01[13], b23+v*q23[13]
		u, v = int64(int8(ba[16])), int64(int8(bb[16]))
		a01, a23, b01, b23 = a01+u*q01[14], a23+u*q23[14], b01+v*q01[14], b23+v*q23[14]
		u, v = int64(int8(ba[17])), int64(int8(bb[17]))
		a01, a23, b01, b23 = a01+u*q01[15], a23+u*q23[15], b01+v*q01[15], b23+v*q23[15]
		u, v = int64(int8(ba[18])), int64(int8(bb[18]))
		a01, a23, b01, b23 = a01+u*q01[16], a23+u*q23[16], b01+v*q01[16], b23+v*q23[16]
		u, v = int64(int8(ba[19])), int64(int8(bb[19]))
		a01, a23, b01, b23 = a01+u*q01[17], a23+u*q23[17], b01+v*q01[17], b23+v*q23[17]
		u, v = int64(int8(ba[20])), int64(int8(bb[20]))
		a01, a23, b01, b23 = a01+u*q01[18], a23+u*q23[18], b01+v*q01[18], b23+v*q23[18]
		u, v = int64(int8(ba[21])), int64(int8(bb[21]))
		a01, a23, b01, b23 = a01+u*q01[19], a23+u*q23[19], b01+v*q01[19], b23+v*q23[19]
		u, v = int64(int8(ba[22])), int64(int8(bb[22]))
		a01, a23, b01, b23 = a01+u*q01[20], a23+u*q23[20], b01+v*q01[20], b23+v*q23[20]
		u, v = int64(int8(ba[23])), int64(int8(bb[23]))
		a01, a23, b01, b23 = a01+u*q01[21], a23+u*q23[21], b01+v*q01[21], b23+v*q23[21]
		u, v = int64(int8(ba[24])), int64(int8(bb[24]))
		a01, a23, b01, b23 = a01+u*q01[22], a23+u*q23[22], b01+v*q01[22], b23+v*q23[22]
		u, v = int64(int8(ba[25])), int64(int8(bb[25]))
		a01, a23, b01, b23 = a01+u*q01[23], a23+u*q23[23], b01+v*q01[23], b23+v*q23[23]
		u, v = int64(int8(ba[26])), int64(int8(bb[26]))
		a01, a23, b01, b23 = a01+u*q01[24], a23+u*q23[24], b01+v*q01[24], b23+v*q23[24]
		u, v = int64(int8(ba[27])), int64(int8(bb[27]))
		a01, a23, b01, b23 = a01+u*q01[25], a23+u*q23[25], b01+v*q01[25], b23+v*q23[25]
		u, v = int64(int8(ba[28])), int64(int8(bb[28]))
		a01, a23, b01, b23 = a01+u*q01[26], a23+u*q23[26], b01+v*q01[26], b23+v*q23[26]
		u, v = int64(int8(ba[29])), int64(int8(bb[29]))
		a01, a23, b01, b23 = a01+u*q01[27], a23+u*q23[27], b01+v*q01[27], b23+v*q23[27]
		u, v = int64(int8(ba[30])), int64(int8(bb[30]))
		a01, a23, b01, b23 = a01+u*q01[28], a23+u*q23[28], b01+v*q01[28], b23+v*q23[28]
		u, v = int64(int8(ba[31])), int64(int8(bb[31]))
		a01, a23, b01, b23 = a01+u*q01[29], a23+u*q23[29], b01+v*q01[29], b23+v*q23[29]
		u, v = int64(int8(ba[32])), int64(int8(bb[32]))
		a01, a23, b01, b23 = a01+u*q01[30], a23+u*q23[30], b01+v*q01[30], b23+v*q23[30]
		u, v = int64(int8(ba[33])), int64(int8(bb[33]))
		a01, a23, b01, b23 = a01+u*q01[31], a23+u*q23[31], b01+v*q01[31], b23+v*q23[31]
		s0, s1 := split2(a01)
		s2, s3 := split2(a23)
		dw := halfAt(ba[:])
		fa[0] = genQ8Combine(q4, fa[0], s0, dw, db[0])
		fa[1] = genQ8Combine(q4, fa[1], s1, dw, db[1])
		fa[2] = genQ8Combine(q4, fa[2], s2, dw, db[2])
		fa[3] = genQ8Combine(q4, fa[3], s3, dw, db[3])
		s0, s1 = split2(b01)
		s2, s3 = split2(b23)
		dw = halfAt(bb[:])
		fb[0] = genQ8Combine(q4, fb[0], s0, dw, db[0])
		fb[1] = genQ8Combine(q4, fb[1], s1, dw, db[1])
		fb[2] = genQ8Combine(q4, fb[2], s2, dw, db[2])
		fb[3] = genQ8Combine(q4, fb[3], s3, dw, db[3])
	}
	*a = fa
	*b = fb
}

// The k-quants: a weight block is decoded once into its levels times their sub-block's
// scale (int32, exact: the lane sums aux32 are sums of these times the activation
// quants, as the generic code's scale*aux16 are), then dotted with each activation row
// of the tile in eight lanes (genLanes).

// kDecoded is a decoded k-quant weight block: its 256 levels times their scales.
type kDecoded [QKK]int32

// genLanes returns the generic code's eight lane sums aux32 of decoded block a against
// the Q8_K quants q.
func genLanes(a *kDecoded, q *[QKK]byte) [8]int32 {
	var l0, l1, l2, l3, l4, l5, l6, l7 int32
	for k := 0; k < QKK; k += 8 {
		a8, q8 := (*[8]int32)(a[k:]), (*[8]byte)(q[k:])
		l0 += a8[0] * int32(int8(q8[0]))
		l1 += a8[1] * int32(int8(q8[1]))
		l2 += a8[2] * int32(int8(q8[2]))
		l3 += a8[3] * int32(int8(q8[3]))
		l4 += a8[4] * int32(int8(q8[4]))
		l5 += a8[5] * int32(int8(q8[5]))
		l6 += a8[6] * int32(int8(q8[6]))
		l7 += a8[7] * int32(int8(q8[7]))
	}
	return [8]int32{l0, l1, l2, l3, l4, l5, l6, l7}
}

// decodeQ4K writes Q4_K block b's levels times their scales into a and returns its
// eight mins.
func decodeQ4K(b *[q4KBytes]byte, a *kDecoded) [8]int32 {
	sc, m := unpackScaleMinK4(b[q4KScales:q4KQs])
	for c := range 4 {
		q := (*[32]byte)(b[q4KQs+32*c:])
		lo, hi := (*[32]int32)(a[64*c:]), (*[32]int32)(a[64*c+32:])
		s0, s1 := sc[2*c], sc[2*c+1]
		for l, v := range q {
			lo[l] = int32(v&0xF) * s0
			hi[l] = int32(v>>4) * s1
		}
	}
	return m
}

// decodeQ6K writes Q6_K block b's levels (−32..31) times their scales into a.
func decodeQ6K(b *[q6KBytes]byte, a *kDecoded) {
	for h := range 2 {
		ql := (*[64]byte)(b[64*h:])
		qh := (*[32]byte)(b[q6KQh+32*h:])
		sc := (*[8]byte)(b[q6KScales+8*h:])
		o := (*[128]int32)(a[128*h:])
		for l := range 32 {
			s := l / 16
			o[l] = (int32(ql[l]&0xF|(qh[l]&3)<<4) - 32) * int32(int8(sc[s]))
			o[l+32] = (int32(ql[l+32]&0xF|(qh[l]>>2&3)<<4) - 32) * int32(int8(sc[s+2]))
			o[l+64] = (int32(ql[l]>>4|(qh[l]>>4&3)<<4) - 32) * int32(int8(sc[s+4]))
			o[l+96] = (int32(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32) * int32(int8(sc[s+6]))
		}
	}
}

// kAcc is one output's float state in the generic k-quant order: the eight lane sums
// and sumf (the min part, Q4_K).
type kAcc struct {
	sums [8]float32
	sumf float32
}

// add adds a block's lanes with scale d = dw·d8.
func (k *kAcc) add(d float32, l *[8]int32) {
	for i := range k.sums {
		k.sums[i] += float32(d * float32(l[i]))
	}
}

// result is sumf += sums[l] for l = 0..7.
func (k *kAcc) result() float32 {
	s := k.sumf
	for _, v := range k.sums {
		s += v
	}
	return s
}

// kScratch is the k-quant tiles' scratch: a decoded block and one kAcc an activation row.
type kScratch struct {
	a   kDecoded
	acc []kAcc
}

var kScratchPool = sync.Pool{New: func() any { return new(kScratch) }}

func getKScratch(mx int) *kScratch {
	s := kScratchPool.Get().(*kScratch)
	if cap(s.acc) < mx {
		s.acc = make([]kAcc, mx)
	}
	s.acc = s.acc[:mx]
	return s
}

// dotQ4KGeneric is ggml_vec_dot_q4_K_q8_K_generic.
func dotQ4KGeneric(n int, w, x []byte) float32 {
	var dst [1]float32
	genTileQ4K(n, w, 0, 1, x, 0, 1, dst[:], 0)
	return dst[0]
}

// dotQ6KGeneric is ggml_vec_dot_q6_K_q8_K_generic.
func dotQ6KGeneric(n int, w, x []byte) float32 {
	var dst [1]float32
	genTileQ6K(n, w, 0, 1, x, 0, 1, dst[:], 0)
	return dst[0]
}

// genTileQ4K is GenericDotTileFunc(Q4_K): each weight block decoded once for all the
// activation rows.
func genTileQ4K(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if mw <= 0 || mx <= 0 {
		return
	}
	s := getKScratch(mx)
	defer kScratchPool.Put(s)
	for o := range mw {
		clear(s.acc)
		wo := w[o*wStride:]
		for ib := range nb {
			b := (*[q4KBytes]byte)(wo[ib*q4KBytes:])
			m := decodeQ4K(b, &s.a)
			dw, dmw := halfAt(b[0:]), halfAt(b[2:])
			for i := range mx {
				a := (*[q8KBytes]byte)(x[i*xStride+ib*q8KBytes:])
				var sumi int32
				for j := range 16 {
					sumi += q8KBsum(a, j) * m[j/2]
				}
				l := genLanes(&s.a, (*[QKK]byte)(a[q8KQs:]))
				d8 := q8KScale(a)
				k := &s.acc[i]
				k.add(float32(dw*d8), &l)
				k.sumf -= float32(float32(dmw*d8) * float32(sumi))
			}
		}
		for i := range mx {
			dst[i*dstStride+o] = s.acc[i].result()
		}
	}
}

// genTileQ6K is GenericDotTileFunc(Q6_K), as genTileQ4K.
func genTileQ6K(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if mw <= 0 || mx <= 0 {
		return
	}
	s := getKScratch(mx)
	defer kScratchPool.Put(s)
	for o := range mw {
		clear(s.acc)
		wo := w[o*wStride:]
		for ib := range nb {
			b := (*[q6KBytes]byte)(wo[ib*q6KBytes:])
			decodeQ6K(b, &s.a)
			dw := halfAt(b[q6KD:])
			for i := range mx {
				a := (*[q8KBytes]byte)(x[i*xStride+ib*q8KBytes:])
				l := genLanes(&s.a, (*[QKK]byte)(a[q8KQs:]))
				s.acc[i].add(float32(dw*q8KScale(a)), &l)
			}
		}
		for i := range mx {
			dst[i*dstStride+o] = s.acc[i].result()
		}
	}
}
