package tensor

import "sync"

// The Go (portable) tiles of X86DotTileFunc(Q6_K) and (Q5_K) for four or more
// activation rows: dotQ6Kx86Go's and dotQ5Kx86Go's bits, the activation quants of four rows packed two rows to an int64
// (as q8x86Pack does for Q8_0), so that one 64-bit multiplication by a level gives two
// rows' products. Each lane sum of four products is exact whichever way it is formed,
// its sub-block scale multiplies it in int32 as in dotQ6Kx86Go, and the lanes meet the
// FMAs (fma8) and hsum8 in that function's order.

// q6KPairPool holds dotQ6Kx86TileGo's packed activation pairs.
var q6KPairPool = sync.Pool{New: func() any { return new(q8x86Pairs) }}

// q6KPack packs four Q8_K activation rows (xStride bytes apart) of nb blocks into t:
// the quants as two pairs, d8 of row r, block b at t.d[4b+r].
func q6KPack(t *q8x86Pairs, nb int, x []byte, xStride int) {
	ne := nb * QKK
	if cap(t.p01) < ne {
		t.p01, t.p23 = make([]int64, ne), make([]int64, ne)
	}
	if cap(t.d) < 4*nb {
		t.d = make([]float32, 4*nb)
	}
	p01, p23, d := t.p01[:ne], t.p23[:ne], t.d[:4*nb]
	for b := range nb {
		var a [4]*[q8KBytes]byte
		for r := range a {
			a[r] = (*[q8KBytes]byte)(x[r*xStride+b*q8KBytes:])
			d[4*b+r] = q8KScale(a[r])
		}
		q01, q23 := (*[QKK]int64)(p01[b*QKK:]), (*[QKK]int64)(p23[b*QKK:])
		for k := range QKK {
			q01[k] = int64(int8(a[0][q8KQs+k])) + int64(int8(a[1][q8KQs+k]))<<32
			q23[k] = int64(int8(a[2][q8KQs+k])) + int64(int8(a[3][q8KQs+k]))<<32
		}
	}
}

// dotQ6Kx86TileGo is X86DotTileFunc(Q6_K) in Go: four activation rows at a time
// (q6KRows4), the others one dot after another.
func dotQ6Kx86TileGo(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	rows4 := func(t *q8x86Pairs, nb int, w, _ []byte, _ int, out *[4]float32) { q6KRows4(t, nb, w, out) }
	dotKx86TileRows4(q6KBytes, rows4, dotQ6Kx86Go, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// dotKx86TileRows4 is the Go tile of a K-quant with blocks of blockBytes: four activation
// rows at a time packed in pairs (q6KPack) for rows4, which gets the four rows' weight row
// and the rows themselves; the rows left over go one dot after another.
func dotKx86TileRows4(blockBytes int, rows4 func(t *q8x86Pairs, nb int, w, x []byte, xStride int, out *[4]float32), dot func(n int, w, x []byte) float32,
	n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	nb := n / QKK
	i := 0
	if nb > 0 && mw > 0 && mx >= 4 {
		_, _ = w[(mw-1)*wStride+nb*blockBytes-1], x[(mx-1)*xStride+nb*q8KBytes-1]
		_ = dst[(mx-1)*dstStride+mw-1]
		t := q6KPairPool.Get().(*q8x86Pairs)
		for ; i+4 <= mx; i += 4 {
			q6KPack(t, nb, x[i*xStride:], xStride)
			for o := range mw {
				var out [4]float32
				rows4(t, nb, w[o*wStride:o*wStride+nb*blockBytes], x[i*xStride:], xStride, &out)
				for r, v := range out {
					dst[(i+r)*dstStride+o] = v
				}
			}
		}
		q6KPairPool.Put(t)
	}
	if i < mx {
		dotTileBy(dot, n, w, wStride, mw, x[i*xStride:], xStride, mx-i, dst[i*dstStride:], dstStride)
	}
}

// q6KRows4 sets out[r] = dotQ6Kx86Go of weight row w against activation row r of the
// four packed in t.
func q6KRows4(t *q8x86Pairs, nb int, w []byte, out *[4]float32) {
	var acc [4][lanes8]float32
	var q [QKK]uint8
	ne := nb * QKK
	p01, p23, d := t.p01[:ne], t.p23[:ne], t.d[:4*nb]
	for ib := range nb {
		b := (*[q6KBytes]byte)(w[ib*q6KBytes:])
		q01, q23 := (*[QKK]int64)(p01[ib*QKK:]), (*[QKK]int64)(p23[ib*QKK:])
		q6KLevels(b, &q)
		var s [4][lanes8]int32
		for g := range 8 {
			sc0, sc1 := int32(int8(b[q6KScales+2*g])), int32(int8(b[q6KScales+2*g+1]))
			qg := (*[32]uint8)(q[32*g:])
			x01, x23 := (*[32]int64)(q01[32*g:]), (*[32]int64)(q23[32*g:])
			for l := range lanes8 {
				k := 4 * l
				w0, w1, w2, w3 := int64(qg[k])-32, int64(qg[k+1])-32, int64(qg[k+2])-32, int64(qg[k+3])-32
				s0, s1 := split2(w0*x01[k] + w1*x01[k+1] + w2*x01[k+2] + w3*x01[k+3])
				s2, s3 := split2(w0*x23[k] + w1*x23[k+1] + w2*x23[k+2] + w3*x23[k+3])
				sc := sc0
				if l >= 4 {
					sc = sc1
				}
				s[0][l] += sc * s0
				s[1][l] += sc * s1
				s[2][l] += sc * s2
				s[3][l] += sc * s3
			}
		}
		d6 := halfAt(b[q6KD:])
		for r := range 4 {
			fma8(&acc[r], float32(d[4*ib+r]*d6), &s[r])
		}
	}
	for r := range out {
		out[r] = hsum8(&acc[r])
	}
}

// dotQ5Kx86TileGo is X86DotTileFunc(Q5_K) in Go: four activation rows at a time
// (q5KRows4, over q6KPack's pairs), the others one dot after another.
func dotQ5Kx86TileGo(n int, w []byte, wStride, mw int, x []byte, xStride, mx int, dst []float32, dstStride int) {
	dotKx86TileRows4(q5KBytes, q5KRows4, dotQ5Kx86Go, n, w, wStride, mw, x, xStride, mx, dst, dstStride)
}

// q5KRows4 sets out[r] = dotQ5Kx86Go of weight row w against activation row r of the
// four packed in t (the rows themselves at x, xStride bytes apart, for their bsums).
func q5KRows4(t *q8x86Pairs, nb int, w, x []byte, xStride int, out *[4]float32) {
	var acc [4][lanes8]float32
	var summs [4]float32
	var q [QKK]uint8
	ne := nb * QKK
	p01, p23, d := t.p01[:ne], t.p23[:ne], t.d[:4*nb]
	for ib := range nb {
		b := (*[q5KBytes]byte)(w[ib*q5KBytes:])
		q01, q23 := (*[QKK]int64)(p01[ib*QKK:]), (*[QKK]int64)(p23[ib*QKK:])
		sc, m := unpackScaleMinK4(b[q5KScales:q5KQh])
		dw, dmin := halfAt(b[0:]), halfAt(b[2:])
		for r := range 4 {
			a := (*[q8KBytes]byte)(x[r*xStride+ib*q8KBytes:])
			summs[r] = q5KSumms(a, &m, float32(-d[4*ib+r]*dmin), summs[r])
		}
		q5KLevels(b, &q)
		var s [4][lanes8]int32
		for g := range 8 {
			qg := (*[32]uint8)(q[32*g:])
			x01, x23 := (*[32]int64)(q01[32*g:]), (*[32]int64)(q23[32*g:])
			for l := range lanes8 {
				k := 4 * l
				w0, w1, w2, w3 := int64(qg[k]), int64(qg[k+1]), int64(qg[k+2]), int64(qg[k+3])
				s0, s1 := split2(w0*x01[k] + w1*x01[k+1] + w2*x01[k+2] + w3*x01[k+3])
				s2, s3 := split2(w0*x23[k] + w1*x23[k+1] + w2*x23[k+2] + w3*x23[k+3])
				s[0][l] += sc[g] * s0
				s[1][l] += sc[g] * s1
				s[2][l] += sc[g] * s2
				s[3][l] += sc[g] * s3
			}
		}
		for r := range 4 {
			fma8(&acc[r], float32(d[4*ib+r]*dw), &s[r])
		}
	}
	for r := range out {
		out[r] = hsum8(&acc[r]) + summs[r]
	}
}
