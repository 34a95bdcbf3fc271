package tensor

// The float32 FMAs of the Go Q4_0 kernels below take an inline form of fmaf (an
// inlinable function of it would exceed the inlining budget): the float64 sum v of the
// exact product f = s·dw·dx and the accumulator. The block scale dw·dx is a product of
// two F16 values, so as in q8_0_generic.go every product and accumulator is a multiple
// of 2^-48 and no result is below 2^-126 in magnitude but zero; the accumulators are
// float32 values held as float64. Below 2^5 in magnitude the sum is then exact in
// float64 (exact48) and float32(v) is the FMA's result, with no midpoint test:
// midpoints are frequent here (about one FMA in twenty on synth-256's decode) and
// their branch unpredictable. Larger sums take r32 and midFix.

// dotQ4_0RepackTileGo is the Go form of X86RepackTileFunc(Q4_0) (gemv and gemm have the
// same order for Q4_0): for o < mw and i < mx, dst[i*dstStride+o] =
// dotQ4_0RepackGo(n, w[o*wStride:], x[i*xStride:]) bit for bit. The exact block sums are
// SWAR products (q8_prep_generic.go) against activation words prepared once per activation row and
// chunk of prepBlocks blocks; each output's float32 accumulator runs block after block
// as in dotQ4_0RepackGo, kept in dst between chunks. Two weight rows go at a time, so
// that each prepared block is loaded once for both and their float chains overlap.
func dotQ4_0RepackTileGo(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QK
	if mw <= 0 || mx <= 0 {
		return
	}
	_ = dst[(mx-1)*dstStride+mw-1]
	if nb <= 0 {
		for i := range mx {
			clear(dst[i*dstStride : i*dstStride+mw])
		}
		return
	}
	_ = w[(mw-1)*wStride+nb*q4_0Bytes-1]
	m4 := mx - mx%4
	if m4 > 0 {
		q4_0Tile4x(nb, w, wStride, mw, x, xStride, m4, dst, dstStride)
	}
	p := getPrep()
	defer q8PrepPool.Put(p)
	for b0 := 0; b0 < nb; b0 += prepBlocks {
		cb := min(prepBlocks, nb-b0)
		for i := m4; i < mx; i++ {
			d := dst[i*dstStride : i*dstStride+mw]
			pp := p[0][:cb]
			prepQ8_0(pp, x[i*xStride+b0*q8_0Bytes:])
			o := 0
			for ; o+2 <= mw; o += 2 {
				var a0, a1 float32
				if b0 > 0 {
					a0, a1 = d[o], d[o+1]
				}
				d[o], d[o+1] = q4_0Rows2(w[o*wStride+b0*q4_0Bytes:], w[(o+1)*wStride+b0*q4_0Bytes:], pp, a0, a1)
			}
			if o < mw {
				var a0 float32
				if b0 > 0 {
					a0 = d[o]
				}
				d[o] = q4_0Row(w[o*wStride+b0*q4_0Bytes:], pp, a0)
			}
		}
	}
}

// q4_0Tile4x is dotQ4_0RepackTileGo for mx a multiple of four: four activation rows
// at a time against each weight row, whose level words are unpacked once for the four.
func q4_0Tile4x(nb int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	p := getPrep()
	defer q8PrepPool.Put(p)
	for b0 := 0; b0 < nb; b0 += prepBlocks {
		cb := min(prepBlocks, nb-b0)
		for i := 0; i+4 <= mx; i += 4 {
			for r := range 4 {
				prepQ8_0(p[r][:cb], x[(i+r)*xStride+b0*q8_0Bytes:])
			}
			for o := range mw {
				var acc [4]float32
				if b0 > 0 {
					for r := range 4 {
						acc[r] = dst[(i+r)*dstStride+o]
					}
				}
				q4_0Row4x(w[o*wStride+b0*q4_0Bytes:], p, cb, &acc)
				for r := range 4 {
					dst[(i+r)*dstStride+o] = acc[r]
				}
			}
		}
	}
}

// q4_0Row continues dotQ4_0RepackGo's accumulator acc over the Q4_0 blocks of w
// against the prepared blocks p: the block sum is Σ u·x − 8·Σx, the SWAR products of the
// 32 levels u in eight words of four, in two groups of four products (swarRound).
func q4_0Row(w []byte, p []q8Prep, acc float32) float32 {
	a := float64(acc)
	for b := range p {
		if len(w) < q4_0Bytes {
			panic("tensor: q4_0Row: short weight row")
		}
		pb, wb := &p[b], (*[q4_0Bytes]byte)(w)
		w = w[q4_0Bytes:]
		l0, l1 := le64(wb[2:10]), le64(wb[10:18])
		t0 := (l0&lanes4Lo)*pb.x[0] + (l0>>8&lanes4Lo)*pb.x[1] + (l1&lanes4Lo)*pb.x[2] + (l1>>8&lanes4Lo)*pb.x[3]
		t1 := (l0>>4&lanes4Lo)*pb.x[4] + (l0>>12&lanes4Lo)*pb.x[5] + (l1>>4&lanes4Lo)*pb.x[6] + (l1>>12&lanes4Lo)*pb.x[7]
		s := swarTop(t0) + swarTop(t1) - 8*pb.sum
		f := float64(s) * float64(halfAt(wb[:])*pb.d) // fmaf, inline
		if v := f + a; exact48(v) {
			a = float64(float32(v))
		} else if u := r32Bits(v); u&r32Low != 0 {
			a = r32(u)
		} else {
			a = float64(float32(midFix(f, a, v)))
		}
	}
	return float32(a)
}

// q4_0Rows2 is q4_0Row for two weight rows at once.
func q4_0Rows2(w0, w1 []byte, p []q8Prep, acc0, acc1 float32) (float32, float32) {
	a0, a1 := float64(acc0), float64(acc1)
	for b := range p {
		if len(w0) < q4_0Bytes || len(w1) < q4_0Bytes {
			panic("tensor: q4_0Rows2: short weight row")
		}
		pb, v0, v1 := &p[b], (*[q4_0Bytes]byte)(w0), (*[q4_0Bytes]byte)(w1)
		w0, w1 = w0[q4_0Bytes:], w1[q4_0Bytes:]
		l0, l1 := le64(v0[2:10]), le64(v0[10:18])
		h0, h1 := le64(v1[2:10]), le64(v1[10:18])
		x0, x1, x2, x3 := pb.x[0], pb.x[1], pb.x[2], pb.x[3]
		t0 := (l0&lanes4Lo)*x0 + (l0>>8&lanes4Lo)*x1 + (l1&lanes4Lo)*x2 + (l1>>8&lanes4Lo)*x3
		u0 := (h0&lanes4Lo)*x0 + (h0>>8&lanes4Lo)*x1 + (h1&lanes4Lo)*x2 + (h1>>8&lanes4Lo)*x3
		x4, x5, x6, x7 := pb.x[4], pb.x[5], pb.x[6], pb.x[7]
		t1 := (l0>>4&lanes4Lo)*x4 + (l0>>12&lanes4Lo)*x5 + (l1>>4&lanes4Lo)*x6 + (l1>>12&lanes4Lo)*x7
		u1 := (h0>>4&lanes4Lo)*x4 + (h0>>12&lanes4Lo)*x5 + (h1>>4&lanes4Lo)*x6 + (h1>>12&lanes4Lo)*x7
		s0 := swarTop(t0) + swarTop(t1) - 8*pb.sum
		s1 := swarTop(u0) + swarTop(u1) - 8*pb.sum
		f0 := float64(s0) * float64(halfAt(v0[:])*pb.d) // fmaf, inline
		if v := f0 + a0; exact48(v) {
			a0 = float64(float32(v))
		} else if u := r32Bits(v); u&r32Low != 0 {
			a0 = r32(u)
		} else {
			a0 = float64(float32(midFix(f0, a0, v)))
		}
		f1 := float64(s1) * float64(halfAt(v1[:])*pb.d) // fmaf, inline
		if v := f1 + a1; exact48(v) {
			a1 = float64(float32(v))
		} else if u := r32Bits(v); u&r32Low != 0 {
			a1 = r32(u)
		} else {
			a1 = float64(float32(midFix(f1, a1, v)))
		}
	}
	return float32(a0), float32(a1)
}

// q4_0Row4x continues the four accumulators acc of one weight row against four
// prepared activation rows over cb blocks.
func q4_0Row4x(w []byte, p *[4][prepBlocks]q8Prep, cb int, acc *[4]float32) {
	a0, a1, a2, a3 := float64(acc[0]), float64(acc[1]), float64(acc[2]), float64(acc[3])
	r0, r1, r2, r3 := p[0][:cb], p[1][:cb], p[2][:cb], p[3][:cb]
	for b := range r0 {
		if len(w) < q4_0Bytes || b >= len(r1) || b >= len(r2) || b >= len(r3) {
			panic("tensor: q4_0Row4x: short row")
		}
		wb := (*[q4_0Bytes]byte)(w)
		w = w[q4_0Bytes:]
		p0, p1, p2, p3 := &r0[b], &r1[b], &r2[b], &r3[b]
		l0, l1 := le64(wb[2:10]), le64(wb[10:18])
		w0, w1, w2, w3 := l0&lanes4Lo, l0>>8&lanes4Lo, l1&lanes4Lo, l1>>8&lanes4Lo
		w4, w5, w6, w7 := l0>>4&lanes4Lo, l0>>12&lanes4Lo, l1>>4&lanes4Lo, l1>>12&lanes4Lo
		dw := halfAt(wb[:])
		s0 := swarTop(w0*p0.x[0]+w1*p0.x[1]+w2*p0.x[2]+w3*p0.x[3]) +
			swarTop(w4*p0.x[4]+w5*p0.x[5]+w6*p0.x[6]+w7*p0.x[7]) - 8*p0.sum
		f0 := float64(s0) * float64(dw*p0.d) // fmaf, inline
		if v := f0 + a0; exact48(v) {
			a0 = float64(float32(v))
		} else if u := r32Bits(v); u&r32Low != 0 {
			a0 = r32(u)
		} else {
			a0 = float64(float32(midFix(f0, a0, v)))
		}
		s1 := swarTop(w0*p1.x[0]+w1*p1.x[1]+w2*p1.x[2]+w3*p1.x[3]) +
			swarTop(w4*p1.x[4]+w5*p1.x[5]+w6*p1.x[6]+w7*p1.x[7]) - 8*p1.sum
		f1 := float64(s1) * float64(dw*p1.d) // fmaf, inline
		if v := f1 + a1; exact48(v) {
			a1 = float64(float32(v))
		} else if u := r32Bits(v); u&r32Low != 0 {
			a1 = r32(u)
		} else {
			a1 = float64(float32(midFix(f1, a1, v)))
		}
		s2 := swarTop(w0*p2.x[0]+w1*p2.x[1]+w2*p2.x[2]+w3*p2.x[3]) +
			swarTop(w4*p2.x[4]+w5*p2.x[5]+w6*p2.x[6]+w7*p2.x[7]) - 8*p2.sum
		f2 := float64(s2) * float64(dw*p2.d) // fmaf, inline
		if v := f2 + a2; exact48(v) {
			a2 = float64(float32(v))
		} else if u := r32Bits(v); u&r32Low != 0 {
			a2 = r32(u)
		} else {
			a2 = float64(float32(midFix(f2, a2, v)))
		}
		s3 := swarTop(w0*p3.x[0]+w1*p3.x[1]+w2*p3.x[2]+w3*p3.x[3]) +
			swarTop(w4*p3.x[4]+w5*p3.x[5]+w6*p3.x[6]+w7*p3.x[7]) - 8*p3.sum
		f3 := float64(s3) * float64(dw*p3.d) // fmaf, inline
		if v := f3 + a3; exact48(v) {
			a3 = float64(float32(v))
		} else if u := r32Bits(v); u&r32Low != 0 {
			a3 = r32(u)
		} else {
			a3 = float64(float32(midFix(f3, a3, v)))
		}
	}
	acc[0], acc[1], acc[2], acc[3] = float32(a0), float32(a1), float32(a2), float32(a3)
}
