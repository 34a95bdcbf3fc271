package tensor

// Q6_K: 256 values as 16 sub-blocks of 16 with 6-bit signed levels in [-32, 31];
// each sub-block has an int8 scale, scaled by the block's f16 d: x ≈ d·sc·q.
//
//	block_q6_K (210 bytes): ql [128]byte @0 | qh [64]byte @128 | scales [16]int8 @192 | d f16 @208
//
// For half h (128 elements) and l < 32, level+32 of element 128h+32k+l has its low
// nibble in ql[64h+l+32(k%2)] (low nibble for k < 2, high for k ≥ 2) and its top two
// bits in bits 2k..2k+1 of qh[32h+l].

const (
	q6KBytes  = QKK/2 + QKK/4 + QKK/16 + 2
	q6KQh     = QKK / 2
	q6KScales = q6KQh + QKK/4
	q6KD      = q6KScales + QKK/16
)

// dequantizeQ6K is dequantize_row_q6_K.
func dequantizeQ6K(dst []float32, src []byte) {
	for i := 0; i < len(dst)/QKK; i++ {
		b := (*[q6KBytes]byte)(src[i*q6KBytes:])
		y := (*[QKK]float32)(dst[i*QKK:])
		d := halfAt(b[q6KD:])
		for h := range 2 {
			ql := (*[64]byte)(b[64*h:])
			qh := (*[32]byte)(b[q6KQh+32*h:])
			sc := (*[8]byte)(b[q6KScales+8*h:])
			for l := range 32 {
				is := l / 16
				q1 := int32(ql[l]&0xF|(qh[l]&3)<<4) - 32
				q2 := int32(ql[l+32]&0xF|(qh[l]>>2&3)<<4) - 32
				q3 := int32(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				q4 := int32(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
				o := 128*h + l
				y[o] = d * float32(int8(sc[is])) * float32(q1)
				y[o+32] = d * float32(int8(sc[is+2])) * float32(q2)
				y[o+64] = d * float32(int8(sc[is+4])) * float32(q3)
				y[o+96] = d * float32(int8(sc[is+6])) * float32(q4)
			}
		}
	}
}

// quantizeQ6K is quantize_row_q6_K_ref.
func quantizeQ6K(dst []byte, src []float32) {
	for i := 0; i < len(src)/QKK; i++ {
		quantizeBlockQ6K((*[q6KBytes]byte)(dst[i*q6KBytes:]), (*[QKK]float32)(src[i*QKK:]))
	}
}

func quantizeBlockQ6K(y *[q6KBytes]byte, x *[QKK]float32) {
	var (
		L      [QKK]int8
		scales [QKK / 16]float32
	)
	var maxScale, maxAbs float32
	for ib := range QKK / 16 {
		scales[ib] = makeQxQuants(32, x[16*ib:16*ib+16], L[16*ib:16*ib+16])
		if a := abs32(scales[ib]); a > maxAbs {
			maxAbs, maxScale = a, scales[ib]
		}
	}
	if maxAbs < groupMaxEps {
		clear(y[:])
		return
	}
	iscale := -128 / maxScale
	putHalf(y[q6KD:], 1/iscale)
	sc := y[q6KScales:q6KD]
	for ib := range sc {
		sc[ib] = byte(int8(min(127, kNearestInt(float32(iscale*scales[ib])))))
	}
	d := halfAt(y[q6KD:])
	for j := range QKK / 16 {
		dj := d * float32(int8(sc[j]))
		if dj == 0 {
			continue
		}
		for ii := range 16 {
			L[16*j+ii] = int8(kClamp(kNearestInt(x[16*j+ii]/dj), -32, 31) + 32)
		}
	}
	for h := range 2 {
		ql := y[64*h : 64*h+64]
		qh := y[q6KQh+32*h : q6KQh+32*h+32]
		lv := L[128*h : 128*h+128]
		for l := range 32 {
			q1, q2, q3, q4 := uint8(lv[l]), uint8(lv[l+32]), uint8(lv[l+64]), uint8(lv[l+96])
			ql[l] = q1&0xF | (q3&0xF)<<4
			ql[l+32] = q2&0xF | (q4&0xF)<<4
			qh[l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
		}
	}
}

// dotQ6KGo is ggml_vec_dot_q6_K_q8_K: per block, isum = Σ sc·Σ q8·q over the 16
// sub-blocks, then sumf += (d·d8)·isum.
func dotQ6KGo(n int, w, x []byte) float32 {
	var sumf float32
	for i := 0; i < n/QKK; i++ {
		b := (*[q6KBytes]byte)(w[i*q6KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		isum := int32(0)
		for h := range 2 {
			ql := (*[64]byte)(b[64*h:])
			qh := (*[32]byte)(b[q6KQh+32*h:])
			sc := (*[8]byte)(b[q6KScales+8*h:])
			q8 := a[q8KQs+128*h : q8KQs+128*h+128]
			// Σ q8·(u−32) = Σ q8·u − 32·bsum, with u = level+32 in [0, 63]: the low
			// nibbles by scalar products, the top two bits by SWAR. Sub-block j of the
			// half (16 elements) is 2k + l/16 for bit field k and element l of 32.
			for is := range 2 {
				o := 16 * is
				n0, n2 := dotNibbles16((*[16]byte)(ql[o:]), (*[16]byte)(q8[o:]), (*[16]byte)(q8[64+o:]))
				n1, n3 := dotNibbles16((*[16]byte)(ql[32+o:]), (*[16]byte)(q8[32+o:]), (*[16]byte)(q8[96+o:]))
				g0, g1 := le64(qh[o:]), le64(qh[o+8:])
				n := [4]int32{n0, n1, n2, n3}
				for k := range 4 {
					top := crumbDot16(g0, g1, biased64(q8[32*k+o:]), biased64(q8[32*k+o+8:]), uint(2*k))
					j := 2*k + is
					isum += int32(int8(sc[j])) * (n[k] + 16*top - 32*q8KBsum(a, 8*h+j))
				}
			}
		}
		sumf += float32(float32(halfAt(b[q6KD:])*q8KScale(a)) * float32(isum))
	}
	return sumf
}
