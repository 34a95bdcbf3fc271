package tensor

// Q4_K: 256 values as 8 sub-blocks of 32 with 4-bit levels; each sub-block has a
// 6-bit scale and a 6-bit min, scaled by the block's f16 d and dmin:
// x ≈ d·sc·q − dmin·m.
//
//	block_q4_K (144 bytes): d f16 @0 | dmin f16 @2 | scales [12]byte @4 | qs [128]byte @16
//
// Sub-blocks 2c and 2c+1 share the 32 bytes qs[32c:32c+32] (low and high nibbles).
// scales packs the eight (sc, m) pairs as get_scale_min_k4 reads them.

import "math"

const (
	q4KBytes  = 4 + 12 + QKK/2
	q4KScales = 4
	q4KQs     = 16
)

// dequantizeQ4K is dequantize_row_q4_K.
func dequantizeQ4K(dst []float32, src []byte) {
	for i := 0; i < len(dst)/QKK; i++ {
		b := (*[q4KBytes]byte)(src[i*q4KBytes:])
		y := (*[QKK]float32)(dst[i*QKK:])
		d, dmin := halfAt(b[0:]), halfAt(b[2:])
		for c := range 4 {
			sc1, m1 := scaleMinK4(2*c, b[q4KScales:q4KQs])
			sc2, m2 := scaleMinK4(2*c+1, b[q4KScales:q4KQs])
			d1, dm1 := d*float32(sc1), float32(dmin*float32(m1)) // rounded: not fused below (arm64)
			d2, dm2 := d*float32(sc2), float32(dmin*float32(m2))
			q := (*[32]byte)(b[q4KQs+32*c:])
			for l, v := range q {
				y[64*c+l] = float32(d1*float32(v&0xF)) - dm1
				y[64*c+32+l] = float32(d2*float32(v>>4)) - dm2
			}
		}
	}
}

// quantizeQ4K is quantize_row_q4_K_ref.
func quantizeQ4K(dst []byte, src []float32) {
	p := qkx2Params{nmax: 15, rmin: -1, rdelta: 0.1, nstep: 20}
	for i := 0; i < len(src)/QKK; i++ {
		b := (*[q4KBytes]byte)(dst[i*q4KBytes:])
		var L [QKK]uint8
		scaleMinQuantize(p, b[:q4KQs], (*[QKK]float32)(src[i*QKK:]), &L)
		q := b[q4KQs:]
		for c := range 4 {
			for l := range 32 {
				q[32*c+l] = L[64*c+l] | L[64*c+l+32]<<4
			}
		}
	}
}

// scaleMinQuantize is the part quantize_row_q4_K_ref and quantize_row_q5_K_ref share:
// fit scale and min to each 32-element sub-block, quantize them to 6 bits against
// the block's d and dmin (written with the packed scales to head[0:16]), and requantize
// the levels against the rounded scales into L.
func scaleMinQuantize(p qkx2Params, head []byte, x *[QKK]float32, L *[QKK]uint8) {
	var (
		laux           [32]uint8
		weights        [32]float32
		scales, mins   [QKK / 32]float32
		maxScale, maxM float32
	)
	for j := range QKK / 32 {
		xs := x[32*j : 32*j+32]
		sumX2 := float32(0)
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQkx2Quants(p, xs, weights[:], L[32*j:32*j+32], laux[:])
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxM {
			maxM = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxM > 0 {
		invMin = 63 / maxM
	}
	var ls, lm [8]uint8
	for j := range 8 {
		ls[j] = min(63, uint8(kNearestInt(float32(invScale*scales[j]))))
		lm[j] = min(63, uint8(kNearestInt(float32(invMin*mins[j]))))
	}
	putScaleMinK4(head[4:16], &ls, &lm)
	putHalf(head[0:], maxScale/63)
	putHalf(head[2:], maxM/63)
	d, dmin := halfAt(head[0:]), halfAt(head[2:])
	for j := range QKK / 32 {
		sc, m := scaleMinK4(j, head[4:16])
		dj := d * float32(sc)
		if dj == 0 {
			continue
		}
		dm := float32(dmin * float32(m)) // rounded: not fused below (arm64)
		for ii := range 32 {
			L[32*j+ii] = uint8(kClamp(kNearestInt((x[32*j+ii]+dm)/dj), 0, p.nmax))
		}
	}
}

// unpackScaleMinK4 decodes all eight 6-bit scales and mins of a Q4_K/Q5_K block.
func unpackScaleMinK4(q []byte) (sc, m [8]int32) {
	q = q[:12]
	for j := range 4 {
		sc[j] = int32(q[j] & 63)
		m[j] = int32(q[j+4] & 63)
		sc[j+4] = int32(q[j+8]&0xF | (q[j]>>6)<<4)
		m[j+4] = int32(q[j+8]>>4 | (q[j+4]>>6)<<4)
	}
	return sc, m
}

// dotQ4KGo is ggml_vec_dot_q4_K_q8_K: per block, isum = Σ sc·Σ q8·q over the 8
// sub-blocks and summs = Σ bsums·m; the scale part accumulates (d·d8)·isum and the
// min part −(dmin·d8)·summs separately, added at the end.
func dotQ4KGo(n int, w, x []byte) float32 {
	var sumd, summ float32
	for i := 0; i < n/QKK; i++ {
		b := (*[q4KBytes]byte)(w[i*q4KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		sc, m := unpackScaleMinK4(b[q4KScales:q4KQs])
		summs := int32(0)
		for j := range 16 {
			summs += q8KBsum(a, j) * m[j/2]
		}
		isum := int32(0)
		for c := range 4 {
			s0, s1 := dotNibbles((*[32]byte)(b[q4KQs+32*c:]), (*[32]byte)(a[q8KQs+64*c:]), (*[32]byte)(a[q8KQs+64*c+32:]))
			isum += sc[2*c]*s0 + sc[2*c+1]*s1
		}
		d8 := q8KScale(a)
		sumd += float32(float32(halfAt(b[0:])*d8) * float32(isum))
		summ -= float32(float32(halfAt(b[2:])*d8) * float32(summs))
	}
	return summ + sumd
}
