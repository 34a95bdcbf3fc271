package tensor

// Q5_K: Q4_K with a fifth bit per level (levels 0..31): x ≈ d·sc·q − dmin·m.
//
//	block_q5_K (176 bytes): d f16 @0 | dmin f16 @2 | scales [12]byte @4 | qh [32]byte @16 | qs [128]byte @48
//
// qs is laid out as in Q4_K; the high bit of element 64c+l (l < 32) is bit 2c of
// qh[l], that of element 64c+32+l bit 2c+1.

const (
	q5KBytes  = 4 + 12 + QKK/8 + QKK/2
	q5KScales = 4
	q5KQh     = 16
	q5KQs     = 48
)

// dequantizeQ5K is dequantize_row_q5_K.
func dequantizeQ5K(dst []float32, src []byte) {
	for i := 0; i < len(dst)/QKK; i++ {
		b := (*[q5KBytes]byte)(src[i*q5KBytes:])
		y := (*[QKK]float32)(dst[i*QKK:])
		d, dmin := halfAt(b[0:]), halfAt(b[2:])
		qh := (*[32]byte)(b[q5KQh:])
		for c := range 4 {
			sc1, m1 := scaleMinK4(2*c, b[q5KScales:q5KQh])
			sc2, m2 := scaleMinK4(2*c+1, b[q5KScales:q5KQh])
			d1, dm1 := d*float32(sc1), float32(dmin*float32(m1)) // rounded: not fused below (arm64)
			d2, dm2 := d*float32(sc2), float32(dmin*float32(m2))
			q := (*[32]byte)(b[q5KQs+32*c:])
			for l, v := range q {
				h := qh[l] >> uint(2*c)
				y[64*c+l] = float32(d1*float32(v&0xF|(h&1)<<4)) - dm1
				y[64*c+32+l] = float32(d2*float32(v>>4|(h&2)<<3)) - dm2
			}
		}
	}
}

// quantizeQ5K is quantize_row_q5_K_ref.
func quantizeQ5K(dst []byte, src []float32) {
	p := qkx2Params{nmax: 31, rmin: -0.5, rdelta: 0.1, nstep: 15}
	for i := 0; i < len(src)/QKK; i++ {
		b := (*[q5KBytes]byte)(dst[i*q5KBytes:])
		var L [QKK]uint8
		scaleMinQuantize(p, b[:q5KQh], (*[QKK]float32)(src[i*QKK:]), &L)
		qh, ql := b[q5KQh:q5KQs], b[q5KQs:]
		clear(qh)
		for c := range 4 {
			for j := range 32 {
				l1, l2 := L[64*c+j], L[64*c+j+32]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= 1 << uint(2*c)
				}
				if l2 > 15 {
					l2 -= 16
					qh[j] |= 2 << uint(2*c)
				}
				ql[32*c+j] = l1 | l2<<4
			}
		}
	}
}

// dotQ5KGo is ggml_vec_dot_q5_K_q8_K, combined in float as dotQ4K.
func dotQ5KGo(n int, w, x []byte) float32 {
	var sumd, summ float32
	for i := 0; i < n/QKK; i++ {
		b := (*[q5KBytes]byte)(w[i*q5KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		sc, m := unpackScaleMinK4(b[q5KScales:q5KQh])
		summs := int32(0)
		for j := range 16 {
			summs += q8KBsum(a, j) * m[j/2]
		}
		qh := b[q5KQh:q5KQs]
		hw := [4]uint64{le64(qh[0:]), le64(qh[8:]), le64(qh[16:]), le64(qh[24:])}
		isum := int32(0)
		for c := range 4 {
			lo8, hi8 := a[q8KQs+64*c:q8KQs+64*c+32], a[q8KQs+64*c+32:q8KQs+64*c+64]
			s0, s1 := dotNibbles((*[32]byte)(b[q5KQs+32*c:]), (*[32]byte)(lo8), (*[32]byte)(hi8))
			alo := [4]uint64{biased64(lo8[0:]), biased64(lo8[8:]), biased64(lo8[16:]), biased64(lo8[24:])}
			ahi := [4]uint64{biased64(hi8[0:]), biased64(hi8[8:]), biased64(hi8[16:]), biased64(hi8[24:])}
			s0 += 16 * bitDot32(&hw, &alo, uint(2*c))
			s1 += 16 * bitDot32(&hw, &ahi, uint(2*c+1))
			isum += sc[2*c]*s0 + sc[2*c+1]*s1
		}
		d8 := q8KScale(a)
		sumd += float32(float32(halfAt(b[0:])*d8) * float32(isum))
		summ -= float32(float32(halfAt(b[2:])*d8) * float32(summs))
	}
	return summ + sumd
}
