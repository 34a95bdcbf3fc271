package tensor

// The Q8_0 lane kernels: the x86 lane order of dotQ8_0x86Go, two weight rows against
// four activation rows, or four against one; the AVX2 ones of avx2_q8_0_amd64.s, and
// with AVX512-VNNI those of vnni_q8_0_amd64.s, which give the same bits.

//go:noescape
func q80XPrep(x *byte, nb int, dst *byte)

//go:noescape
func q81XPrep(x *byte, nb int, dst *byte)

//go:noescape
func q80TileR2X4(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)

//go:noescape
func q80TileR4X1(w *byte, wstride, nquads int, xp *byte, nb int, dst *float32)

//go:noescape
func q80XPrepVNNI(x *byte, nb int, dst *byte)

//go:noescape
func q81XPrepVNNI(x *byte, nb int, dst *byte)

//go:noescape
func q80TileR2X4VNNI(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)

//go:noescape
func q80TileR4X1VNNI(w *byte, wstride, nquads int, xp *byte, nb int, dst *float32)

//go:noescape
func q80TileR4X4VNNI(w *byte, wstride, nquads int, xp *byte, xpstride, nb int, dst *float32, dststride int, tab, dwt *float32, fill bool)

// q80XPrepBytes is the size of a Q8_0 block prepared by q80XPrep (or q80XPrepVNNI).
const q80XPrepBytes = 96

// q80Kernels are the kernels of q8LanesTile: the preparation of a Q8_0 and of a Q8_1
// activation row, and the two-by-four and the four-by-one tiles over prepared rows;
// r4x4, the four-by-four tile (with scratch tab of 32·nb float32, and the weight
// scales dwt of 4·nb·nquads float32 that it fills if fill), is nil in the sets that
// have none (tileQ80 then takes r2x4 for every pair of weight rows); r2x8, r2x4 for
// eight activation rows, is nil in the sets that have none.
type q80Kernels struct {
	prep80, prep81 func(x *byte, nb int, dst *byte)
	r2x4           func(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)
	r4x1           func(w *byte, wstride, nquads int, xp *byte, nb int, dst *float32)
	r4x4           func(w *byte, wstride, nquads int, xp *byte, xpstride, nb int, dst *float32, dststride int, tab, dwt *float32, fill bool)
	r2x8           func(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)
}

// q80LaneKernels returns the level's Q8_0 lane kernels: the ZMM VPDPBUSD ones where the
// CPU runs them at full width (hasWideVNNI), the YMM VPDPBUSD ones with AVX512-VNNI
// otherwise, the AVX2 ones without it; all give the same bits. BenchmarkQ8LanesZMM,
// ZMM over YMM: on an Intel Xeon (the GPU machines' hosts) 1.23-1.34x for Q8_0 prompts,
// 1.12-1.21x for Q4_1, 1.05x for a cached Q8_0 decode; on Zen 4 0.8-0.9x.
func q80LaneKernels() q80Kernels {
	if hasWideVNNI {
		return q80KernelsZMM()
	}
	if hasVNNI {
		return q80KernelsVNNI()
	}
	return q80KernelsAVX2()
}

// q80KernelsAVX2 returns the AVX2 Q8_0 lane kernels (avx2_q8_0_amd64.s).
func q80KernelsAVX2() q80Kernels {
	return q80Kernels{q80XPrep, q81XPrep, q80TileR2X4, q80TileR4X1, nil, nil}
}

// q80KernelsVNNI returns the VPDPBUSD Q8_0 lane kernels on YMM registers
// (vnni_q8_0_amd64.s, vnni_q8_0_r4x4_amd64.s).
func q80KernelsVNNI() q80Kernels {
	return q80Kernels{q80XPrepVNNI, q81XPrepVNNI, q80TileR2X4VNNI, q80TileR4X1VNNI, q80TileR4X4VNNI, nil}
}

// q8LanesTile computes a tile in the x86 lane order of a 32-element block format whose
// levels fit int8: the weight rows, converted by conv to Q8_0 blocks (dw, then the 32
// levels minus their offset) a chunk at a time unless conv is nil (Q8_0 itself), and
// the activation rows (Q8_0, or Q8_1 if q81) go through the Q8_0 lane kernels, whose
// float32 operations are the same. If ms ≥ 0, each output adds to hsum8 the float32
// sum, block after block, of the exact products of the weight block's float16 at
// byte ms and the Q8_1 activation block's s (Q4_1's summs).
func q8LanesTile(conv func(dst, src []byte), wbb int, q81 bool, ms int, n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	q8LanesTileBy(q80LaneKernels(), conv, wbb, q81, ms, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// q8LanesTileBy is q8LanesTile with the kernels k.
func q8LanesTileBy(k q80Kernels, conv func(dst, src []byte), wbb int, q81 bool, ms int, n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	xbb := q8_0Bytes
	if q81 {
		xbb = q8_1Bytes
	}
	if tileChecks(w, wStride, mw, nb*wbb, x, xStride, mx, nb*xbb, dst, dstStride) {
		return
	}
	s := tileScratchPool.Get().(*tileScratch)
	defer tileScratchPool.Put(s)
	ps := nb * q80XPrepBytes
	s.w = growBytes(s.w, mx*ps)
	prep := k.prep80
	if q81 {
		prep = k.prep81
	}
	for i := range mx {
		prep(&x[i*xStride], nb, &s.w[i*ps])
	}
	xp := s.w
	rb := nb * q8_0Bytes
	if conv == nil {
		tileQ80(k, nb, w, wStride, mw, xp, ps, mx, dst, dstStride, s)
		return
	}
	// Convert the weights a chunk of rows at a time, each chunk against every activation row.
	chunk := max(4, tileChunkBytes/rb&^3)
	s.conv = growBytes(s.conv, min(chunk, mw)*rb)
	for o0 := 0; o0 < mw; o0 += chunk {
		m := min(chunk, mw-o0)
		for r := range m {
			wr, cr := w[(o0+r)*wStride:], s.conv[r*rb:]
			for b := range nb {
				conv(cr[b*q8_0Bytes:(b+1)*q8_0Bytes], wr[b*wbb:(b+1)*wbb])
			}
		}
		tileQ80(k, nb, s.conv, rb, m, xp, ps, mx, dst[o0:], dstStride, s)
	}
	if ms >= 0 {
		addSumms(nb, w[ms:], wStride, wbb, mw, x[2:], xStride, mx, dst, dstStride, s)
	}
}

// addSumms adds to dst[i*dstStride+o] the float32 sum over b < nb, in order, of the
// exact products of the float16 values at w[o*wStride+b*wbb:] and x[i*xStride+b*q8_1Bytes:],
// four weight rows at a time so that their sums' additions overlap.
func addSumms(nb int, w []byte, wStride, wbb, mw int, x []byte, xStride, mx int, dst []float32, dstStride int, s *tileScratch) {
	s.f32 = growF32(s.f32, (mw+mx)*nb)
	wm, sx := s.f32[:mw*nb], s.f32[mw*nb:]
	for o := range mw {
		for b := range nb {
			wm[o*nb+b] = halfAt(w[o*wStride+b*wbb:])
		}
	}
	for i := range mx {
		for b := range nb {
			sx[i*nb+b] = halfAt(x[i*xStride+b*q8_1Bytes:])
		}
	}
	for i := range mx {
		xs := sx[i*nb : (i+1)*nb]
		d := dst[i*dstStride : i*dstStride+mw]
		o := 0
		for ; o+4 <= mw; o += 4 {
			w0, w1, w2, w3 := wm[o*nb:(o+1)*nb], wm[(o+1)*nb:(o+2)*nb], wm[(o+2)*nb:(o+3)*nb], wm[(o+3)*nb:(o+4)*nb]
			var s0, s1, s2, s3 float32
			for b, v := range xs {
				s0 += float32(w0[b] * v)
				s1 += float32(w1[b] * v)
				s2 += float32(w2[b] * v)
				s3 += float32(w3[b] * v)
			}
			d[o] += s0
			d[o+1] += s1
			d[o+2] += s2
			d[o+3] += s3
		}
		for ; o < mw; o++ {
			var s0 float32
			for b, v := range xs {
				s0 += float32(wm[o*nb+b] * v)
			}
			d[o] += s0
		}
	}
}

// tileQ80 computes dst[i*dstStride+o] = hsum8 of the Q8_0 lanes of weight row o < mw
// (nb blocks, stride wStride) and prepared activation row i < mx (stride ps in xp):
// the weight rows in chunks of about tileChunkBytes, each chunk against the activation
// rows eight at a time (k.r2x8, where the set has it), then four at a time (k.r2x4,
// over every pair of rows of the chunk in one call), then one at a time (k.r4x1,
// every four rows); a last odd row, or the last rows
// short of four, are copied into a zero-padded scratch panel. The caller has checked
// that w and dst hold the tile.
func tileQ80(k q80Kernels, nb int, w []byte, wStride, mw int, xp []byte, ps, mx int, dst []float32, dstStride int, s *tileScratch) {
	rb := nb * q8_0Bytes
	chunk := max(4, tileChunkBytes/rb&^3)
	// pad copies the rows [o, o1) into a zero-padded panel of rows of rb bytes.
	pad := func(o, o1, rows int) *byte {
		s.pad = growBytes(s.pad, rows*rb)
		clear(s.pad)
		for r := range o1 - o {
			copy(s.pad[r*rb:(r+1)*rb], w[(o+r)*wStride:(o+r)*wStride+rb])
		}
		return &s.pad[0]
	}
	out := &s.out
	for o0 := 0; o0 < mw; o0 += chunk {
		o1 := min(mw, o0+chunk)
		pairs, quads := (o1-o0)/2, (o1-o0)/4
		i := 0
		for ; k.r2x8 != nil && i+8 <= mx; i += 8 {
			if pairs > 0 {
				k.r2x8(&w[o0*wStride], wStride, pairs, &xp[i*ps], ps, nb, &dst[i*dstStride+o0], 4*dstStride)
			}
			if o := o0 + 2*pairs; o < o1 {
				p := pad(o, o1, 2)
				for h := i; h < i+8; h += 4 {
					k.r2x4(p, rb, 1, &xp[h*ps], ps, nb, &out[0], 8)
					for j := range 4 {
						dst[(h+j)*dstStride+o] = out[2*j]
					}
				}
			}
		}
		for ; i+4 <= mx; i += 4 {
			op := o0 // the first row of the pairs left to r2x4
			if k.r4x4 != nil && quads > 0 {
				s.scales = growF32(s.scales, 32*nb+4*nb*quads)
				tab, dwt := s.scales[:32*nb], s.scales[32*nb:]
				k.r4x4(&w[o0*wStride], wStride, quads, &xp[i*ps], ps, nb, &dst[i*dstStride+o0], 4*dstStride, &tab[0], &dwt[0], i == 0)
				op = o0 + 4*quads
			}
			if p := (o0 + 2*pairs - op) / 2; p > 0 {
				k.r2x4(&w[op*wStride], wStride, p, &xp[i*ps], ps, nb, &dst[i*dstStride+op], 4*dstStride)
			}
			if o := o0 + 2*pairs; o < o1 {
				k.r2x4(pad(o, o1, 2), rb, 1, &xp[i*ps], ps, nb, &out[0], 8)
				for j := range 4 {
					dst[(i+j)*dstStride+o] = out[2*j]
				}
			}
		}
		for ; i < mx; i++ {
			if quads > 0 {
				k.r4x1(&w[o0*wStride], wStride, quads, &xp[i*ps], nb, &dst[i*dstStride+o0])
			}
			if o := o0 + 4*quads; o < o1 {
				k.r4x1(pad(o, o1, 4), rb, 1, &xp[i*ps], nb, &out[0])
				copy(dst[i*dstStride+o:i*dstStride+o1], out[:o1-o])
			}
		}
	}
}

// dotQ5_0x86TileAVX2, dotQ4_0x86TileAVX2 and dotQ4_1x86TileAVX2 are the tile forms of
// dotQ5_0x86Go, dotQ4_0x86Go and dotQ4_1x86Go through the Q8_0 lane kernels.
func dotQ5_0x86TileAVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	q8LanesTile(q5_0AsQ8, q5_0Bytes, false, -1, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

func dotQ4_0x86TileAVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	q8LanesTile(q4_0AsQ8, q4_0Bytes, false, -1, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

func dotQ4_1x86TileAVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	q8LanesTile(q4_1AsQ8, q4_1Bytes, true, 2, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// dotQ8_0x86TileAVX2 is the tile form of dotQ8_0x86Go with the lane kernels.
func dotQ8_0x86TileAVX2(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	q8LanesTile(nil, q8_0Bytes, false, -1, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}
