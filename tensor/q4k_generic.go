package tensor

import (
	"math"
	"sync"
)

// q8KPrep is one Q8_K activation block for the SWAR products of the Go Q4_K kernel:
// x[16c+4t+h] are the words of chunk c (64 elements), byte word t of the weight's 32
// bytes, h = 0, 1 the low nibbles' elements (even, odd), h = 2, 3 the high ones'; B the
// sub-block bsum sums, d the block scale.
type q8KPrep struct {
	x [QKK / 4]uint64
	B [8]int32
	d float32
}

// prepBlocksK is the number of Q8_K blocks the Q4_K tile prepares at once (17.6 KB),
// and rowGroupK the weight rows it takes against them, whose min accumulators it keeps
// on the stack.
const (
	prepBlocksK = 32
	rowGroupK   = 64
)

// q8KPrepPool holds the Q4_K tile's prepared blocks (not cleared on every call, as a
// declared array would be).
var q8KPrepPool = sync.Pool{New: func() any { return new([prepBlocksK]q8KPrep) }}

// prepQ8K prepares the first len(p) Q8_K blocks of x.
func prepQ8K(p []q8KPrep, x []byte) {
	_ = x[len(p)*q8KBytes-1]
	for b := range p {
		a := (*[q8KBytes]byte)(x[b*q8KBytes:])
		q := a[q8KQs : q8KQs+QKK]
		pb := &p[b]
		for c := range 4 {
			for t := range 4 {
				e := 64*c + 8*t
				w := (*[4]uint64)(pb.x[16*c+4*t:])
				w[0] = word4(q[e], q[e+2], q[e+4], q[e+6])
				w[1] = word4(q[e+1], q[e+3], q[e+5], q[e+7])
				w[2] = word4(q[e+32], q[e+34], q[e+36], q[e+38])
				w[3] = word4(q[e+33], q[e+35], q[e+37], q[e+39])
			}
		}
		for j := range 8 {
			pb.B[j] = q8KBsum(a, 2*j) + q8KBsum(a, 2*j+1)
		}
		pb.d = q8KScale(a)
	}
}

// q4KSubSums sets s to the eight exact sub-block sums Σ q·q8 of a Q4_K block's levels
// qs against the prepared block x: per chunk of 64 elements, the low nibbles' sum
// (sub-block 2c) and the high nibbles' (2c+1), each in two groups of four products.
func q4KSubSums(qs *[QKK / 2]byte, x *[QKK / 4]uint64, s *[8]int32) {
	for c := range 4 {
		q := (*[32]byte)(qs[32*c:])
		xc := (*[16]uint64)(x[16*c:])
		l0, l1, l2, l3 := le64(q[0:8]), le64(q[8:16]), le64(q[16:24]), le64(q[24:32])
		lo0 := (l0&lanes4Lo)*xc[0] + (l0>>8&lanes4Lo)*xc[1] + (l1&lanes4Lo)*xc[4] + (l1>>8&lanes4Lo)*xc[5]
		lo1 := (l2&lanes4Lo)*xc[8] + (l2>>8&lanes4Lo)*xc[9] + (l3&lanes4Lo)*xc[12] + (l3>>8&lanes4Lo)*xc[13]
		hi0 := (l0>>4&lanes4Lo)*xc[2] + (l0>>12&lanes4Lo)*xc[3] + (l1>>4&lanes4Lo)*xc[6] + (l1>>12&lanes4Lo)*xc[7]
		hi1 := (l2>>4&lanes4Lo)*xc[10] + (l2>>12&lanes4Lo)*xc[11] + (l3>>4&lanes4Lo)*xc[14] + (l3>>12&lanes4Lo)*xc[15]
		s[2*c] = swarTop(lo0) + swarTop(lo1)
		s[2*c+1] = swarTop(hi0) + swarTop(hi1)
	}
}

// q4KSubSums4 is q4KSubSums of one Q4_K block's levels qs against four prepared
// activation blocks x[r] (s[r] their sums): the weight words are unpacked once for the
// four.
func q4KSubSums4(qs *[QKK / 2]byte, x *[4]*[QKK / 4]uint64, s *[4][8]int32) {
	for c := range 4 {
		q := (*[32]byte)(qs[32*c:])
		l0, l1, l2, l3 := le64(q[0:8]), le64(q[8:16]), le64(q[16:24]), le64(q[24:32])
		a0, a1, a4, a5 := l0&lanes4Lo, l0>>8&lanes4Lo, l1&lanes4Lo, l1>>8&lanes4Lo
		a8, a9, a12, a13 := l2&lanes4Lo, l2>>8&lanes4Lo, l3&lanes4Lo, l3>>8&lanes4Lo
		a2, a3, a6, a7 := l0>>4&lanes4Lo, l0>>12&lanes4Lo, l1>>4&lanes4Lo, l1>>12&lanes4Lo
		a10, a11, a14, a15 := l2>>4&lanes4Lo, l2>>12&lanes4Lo, l3>>4&lanes4Lo, l3>>12&lanes4Lo
		for r, xr := range x {
			xc := (*[16]uint64)(xr[16*c:])
			s[r][2*c] = swarTop(a0*xc[0]+a1*xc[1]+a4*xc[4]+a5*xc[5]) + swarTop(a8*xc[8]+a9*xc[9]+a12*xc[12]+a13*xc[13])
			s[r][2*c+1] = swarTop(a2*xc[2]+a3*xc[3]+a6*xc[6]+a7*xc[7]) + swarTop(a10*xc[10]+a11*xc[11]+a14*xc[14]+a15*xc[15])
		}
	}
}

// prepBlocksK4 is the number of Q8_K blocks per activation row q4KGemmTile4Go prepares
// at once: four rows of it fill one q8KPrepPool buffer.
const prepBlocksK4 = prepBlocksK / 4

// dotQ4KRepackGemmTileGo is the Go form of X86RepackGemmTileFunc(Q4_K): every row in
// dotQ4KRepackGemmGo's order, four activation rows at a time (q4KGemmTile4Go), the
// others by q4KTileGo.
func dotQ4KRepackGemmTileGo(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	m4 := mx - mx%4
	if nb := n / QKK; nb > 0 && mw > 0 && m4 > 0 {
		_ = w[(mw-1)*wStride+nb*q4KBytes-1]
		_ = x[(mx-1)*xStride+nb*q8KBytes-1]
		_ = dst[(mx-1)*dstStride+mw-1]
		for i := 0; i < m4; i += 4 {
			q4KGemmTile4Go(nb, w, wStride, mw, x[i*xStride:], xStride, dst[i*dstStride:], dstStride)
		}
	} else {
		m4 = 0
	}
	if m4 < mx {
		q4KTileGo(mx-m4, n, w, wStride, mw, x[m4*xStride:], xStride, mx-m4, dst[m4*dstStride:], dstStride)
	}
}

// q4KGemmTile4Go is dotQ4KRepackGemmTileGo for four activation rows: each weight block's
// levels, scales and mins unpacked once for the four, the accumulators of the mins kept
// in groups of rowGroupK weight rows.
func q4KGemmTile4Go(nb int, w []byte, wStride, mw int, x []byte, xStride int, dst []float32, dstStride int) {
	p := q8KPrepPool.Get().(*[prepBlocksK]q8KPrep)
	defer q8KPrepPool.Put(p)
	var accm [4][rowGroupK]float32
	var s [4][8]int32
	var xs [4]*[QKK / 4]uint64
	for o0 := 0; o0 < mw; o0 += rowGroupK {
		og := min(rowGroupK, mw-o0)
		for b0 := 0; b0 < nb; b0 += prepBlocksK4 {
			cb := min(prepBlocksK4, nb-b0)
			for r := range 4 {
				prepQ8K(p[r*prepBlocksK4:r*prepBlocksK4+cb], x[r*xStride+b0*q8KBytes:])
			}
			for o := range og {
				wo := w[(o0+o)*wStride+b0*q4KBytes:]
				var acc, am [4]float64
				if b0 > 0 {
					for r := range 4 {
						acc[r], am[r] = float64(dst[r*dstStride+o0+o]), float64(accm[r][o])
					}
				}
				for b := range cb {
					blk := (*[q4KBytes]byte)(wo[b*q4KBytes:])
					for r := range xs {
						xs[r] = &p[r*prepBlocksK4+b].x
					}
					q4KSubSums4((*[QKK / 2]byte)(blk[q4KQs:]), &xs, &s)
					sc, m := unpackScaleMinK4(blk[q4KScales:q4KQs])
					for r := range 4 {
						acc[r], am[r] = q4KGemmFloats(blk, &p[r*prepBlocksK4+b], &s[r], &sc, &m, acc[r], am[r])
					}
				}
				for r := range 4 {
					dst[r*dstStride+o0+o], accm[r][o] = float32(acc[r]), float32(am[r])
				}
			}
		}
		for r := range 4 {
			for o := range og {
				dst[r*dstStride+o0+o] -= accm[r][o]
			}
		}
	}
}

// q4KTileGo is the Go form of the Q4_K repacked tiles: for o < mw and i < mx,
// dst[i*dstStride+o] is dotQ4KRepackGemmGo(n, w[o*wStride:], x[i*xStride:]) for
// i < gemm and dotQ4KRepackGo(...) for the other rows, bit for bit: the exact sub-block
// sums from SWAR products against activation blocks prepared once per activation row
// and chunk (q4KSubSums), the float32 accumulators block after block as there.
func q4KTileGo(gemm, n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	if mw <= 0 || mx <= 0 {
		return
	}
	_ = dst[(mx-1)*dstStride+mw-1]
	if nb > 0 {
		_ = w[(mw-1)*wStride+nb*q4KBytes-1]
		_ = x[(mx-1)*xStride+nb*q8KBytes-1]
	}
	p := q8KPrepPool.Get().(*[prepBlocksK]q8KPrep)
	defer q8KPrepPool.Put(p)
	var accm [rowGroupK]float32
	var s [8]int32
	for o0 := 0; o0 < mw; o0 += rowGroupK {
		og := min(rowGroupK, mw-o0)
		for i := range mx {
			d := dst[i*dstStride+o0 : i*dstStride+o0+og]
			clear(d)
			clear(accm[:og])
			for b0 := 0; b0 < nb; b0 += prepBlocksK {
				pp := p[:min(prepBlocksK, nb-b0)]
				prepQ8K(pp, x[i*xStride+b0*q8KBytes:])
				for o := range og {
					wo := w[(o0+o)*wStride+b0*q4KBytes:]
					if i < gemm {
						d[o], accm[o] = q4KGemmRow(wo, pp, float64(d[o]), float64(accm[o]))
						continue
					}
					acc, am := d[o], accm[o]
					for b := range pp {
						pb := &pp[b]
						blk := (*[q4KBytes]byte)(wo[b*q4KBytes:])
						q4KSubSums((*[QKK / 2]byte)(blk[q4KQs:]), &pb.x, &s)
						isum, summs := q4KScaledSums((*[12]byte)(blk[q4KScales:]), &s, &pb.B)
						dw, dm := float32(halfAt(blk[0:])*pb.d), float32(halfAt(blk[2:])*pb.d)
						if v := float64(isum)*float64(dw) + float64(acc); fmafHard(v) {
							acc = fmafTie(float32(isum), dw, acc)
						} else {
							acc = float32(v)
						}
						if v := float64(summs)*float64(dm) + float64(am); fmafHard(v) {
							am = fmafTie(float32(summs), dm, am)
						} else {
							am = float32(v)
						}
					}
					d[o], accm[o] = acc, am
				}
			}
			for o := range og {
				d[o] -= accm[o]
			}
		}
	}
}

// q4KGemmRow continues dotQ4KRepackGemmGo's accumulators acc and accm of weight row w
// over the prepared activation blocks pp.
func q4KGemmRow(w []byte, pp []q8KPrep, acc, accm float64) (float32, float32) {
	var s [8]int32
	for b := range pp {
		pb := &pp[b]
		blk := (*[q4KBytes]byte)(w[b*q4KBytes:])
		q4KSubSums((*[QKK / 2]byte)(blk[q4KQs:]), &pb.x, &s)
		sc, m := unpackScaleMinK4(blk[q4KScales:q4KQs])
		acc, accm = q4KGemmFloats(blk, pb, &s, &sc, &m, acc, accm)
	}
	return float32(acc), float32(accm)
}

// q4KGemmFloats is q4KGemmBlock from the sub-block sums s, the unpacked scales sc and
// mins m and the prepared activation block, on accumulators held as float64 (the FMAs
// written out: fmaKTie's fast case).
func q4KGemmFloats(b *[q4KBytes]byte, pb *q8KPrep, s, sc, m *[8]int32, acc, accm float64) (float64, float64) {
	d := float32(halfAt(b[0:]) * pb.d)
	dm := float32(halfAt(b[2:]) * pb.d)
	dd, ddm := float64(d), float64(dm)
	for c := range 4 {
		x, xm := sc[2*c]*s[2*c]+sc[2*c+1]*s[2*c+1], m[2*c]*pb.B[2*c]+m[2*c+1]*pb.B[2*c+1]
		if u := math.Float64bits(float64(x)*dd + acc); u<<1 < fmaKMax && r32Bits(math.Float64frombits(u))&r32Low != 0 {
			acc = r32(u + 1<<28)
		} else {
			acc = fmaKTie(x, d, acc)
		}
		if u := math.Float64bits(float64(xm)*ddm + accm); u<<1 < fmaKMax && r32Bits(math.Float64frombits(u))&r32Low != 0 {
			accm = r32(u + 1<<28)
		} else {
			accm = fmaKTie(xm, dm, accm)
		}
	}
	return acc, accm
}

// fmaKMax bounds the fast case of the Go Q4_K gemm tile's FMAs (q4KGemmFloats):
// |v| ≤ MaxFloat32 where bits(v)<<1 < fmaKMax, so that no sum rounds to an infinity, and
// infinities and NaNs go to fmaKTie. Results below 2^-126 need no test: the operands
// are float32 values and an integer, multiples of 2^-149, so such a sum has at most 23
// bits, exact in float64 and in float32 alike.
const fmaKMax = (1023+127)<<53 | (1<<52-1)&^r32Low<<1 + 1

// fmaKTie is fmaf(float32(x), d, float32(a)) as a float64, the rare case of the FMAs
// of q4KGemmFloats.
//
//go:noinline
func fmaKTie(x int32, d float32, a float64) float64 {
	return float64(fmafTie(float32(x), d, float32(a)))
}

// q4KScaledSums is Σ_j sc[j]·s[j] and Σ_j m[j]·B[j] over the eight sub-blocks, with the
// 6-bit scales sc and mins m read from a Q4_K block's 12 scale bytes q as
// unpackScaleMinK4 decodes them (the integers are exact, so the order is free).
func q4KScaledSums(q *[12]byte, s, B *[8]int32) (isum, summs int32) {
	for j := range 4 {
		isum += int32(q[j]&63)*s[j] + int32(q[j+8]&0xF|(q[j]>>6)<<4)*s[j+4]
		summs += int32(q[j+4]&63)*B[j] + int32(q[j+8]>>4|(q[j+4]>>6)<<4)*B[j+4]
	}
	return isum, summs
}
