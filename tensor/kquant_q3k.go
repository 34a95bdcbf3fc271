package tensor

// Q3_K: 256 values as 16 sub-blocks of 16 with 3-bit signed levels in [-4, 3]; each
// sub-block has a 6-bit signed scale (stored +32), scaled by the block's f16 d:
// x ≈ d·(sc−32)·q.
//
//	block_q3_K (110 bytes): hmask [32]byte @0 | qs [64]byte @32 | scales [12]byte @96 | d f16 @108
//
// The low two bits of level+4 are packed like Q2_K's qs; the high bit of element e is
// bit e/32 of hmask[e%32]. Scale j keeps its low nibble in scales[j] (j < 8) or the
// high nibble of scales[j-8], and its top two bits in bits 2(j/4) of scales[8+j%4].

const (
	q3KBytes  = QKK/8 + QKK/4 + 12 + 2
	q3KQs     = QKK / 8
	q3KScales = q3KQs + QKK/4
	q3KD      = q3KScales + 12
)

// q3KScale returns the 6-bit scale j (0..63, still offset by 32) from the 12 packed bytes.
func q3KScale(s []byte, j int) int32 {
	lo := s[j%8] >> (4 * uint(j/8)) & 0xF
	hi := s[8+j%4] >> (2 * uint(j/4)) & 3
	return int32(lo | hi<<4)
}

// dequantizeQ3K is dequantize_row_q3_K.
func dequantizeQ3K(dst []float32, src []byte) {
	for i := 0; i < len(dst)/QKK; i++ {
		b := (*[q3KBytes]byte)(src[i*q3KBytes:])
		y := (*[QKK]float32)(dst[i*QKK:])
		d := halfAt(b[q3KD:])
		for is := range QKK / 16 {
			dl := d * float32(q3KScale(b[q3KScales:q3KD], is)-32)
			off := 16 * (is % 2)
			q := b[q3KQs+32*(is/8)+off:][:16]
			hm := b[off : off+16]
			shift, hbit := 2*uint(is/2%4), uint(is/2)
			for l := range q {
				lv := int32((q[l]>>shift)&3) - 4 + 4*int32((hm[l]>>hbit)&1)
				y[16*is+l] = dl * float32(lv)
			}
		}
	}
}

// quantizeQ3K is quantize_row_q3_K_ref.
func quantizeQ3K(dst []byte, src []float32) {
	for i := 0; i < len(src)/QKK; i++ {
		quantizeBlockQ3K((*[q3KBytes]byte)(dst[i*q3KBytes:]), (*[QKK]float32)(src[i*QKK:]))
	}
}

func quantizeBlockQ3K(y *[q3KBytes]byte, x *[QKK]float32) {
	var (
		L      [QKK]int8
		scales [QKK / 16]float32
	)
	var maxScale, amax float32
	for j := range QKK / 16 {
		scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
		if s := abs32(scales[j]); s > amax {
			amax, maxScale = s, scales[j]
		}
	}
	s := y[q3KScales:q3KD]
	clear(s)
	if maxScale != 0 {
		iscale := -32 / maxScale
		for j := range QKK / 16 {
			l := int8(kNearestInt(float32(iscale * scales[j])))
			l = max(-32, min(31, l)) + 32
			if j < 8 {
				s[j] = byte(l) & 0xF
			} else {
				s[j-8] |= (byte(l) & 0xF) << 4
			}
			s[j%4+8] |= byte(l>>4) << (2 * uint(j/4))
		}
		putHalf(y[q3KD:], 1/iscale)
	} else {
		putHalf(y[q3KD:], 0)
	}
	d := halfAt(y[q3KD:])
	for j := range QKK / 16 {
		dj := d * float32(q3KScale(s, j)-32)
		if dj == 0 {
			continue
		}
		for ii := range 16 {
			L[16*j+ii] = int8(kClamp(kNearestInt(x[16*j+ii]/dj), -4, 3) + 4)
		}
	}
	hmask := y[:q3KQs]
	clear(hmask)
	var low [QKK]uint8
	for j, l := range L {
		if l > 3 {
			hmask[j%32] |= 1 << uint(j/32)
			l -= 4
		}
		low[j] = uint8(l)
	}
	packQ2(y[q3KQs:q3KScales], &low)
}

// dotQ3KGo is ggml_vec_dot_q3_K_q8_K: per block, isum = Σ (sc−32)·Σ q8·q over the 16
// sub-blocks, then sumf += (d·d8)·isum.
func dotQ3KGo(n int, w, x []byte) float32 {
	var sumf float32
	for i := 0; i < n/QKK; i++ {
		b := (*[q3KBytes]byte)(w[i*q3KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		sc := b[q3KScales:q3KD]
		hm := b[:32]
		h0, h1, h2, h3 := le64(hm[0:]), le64(hm[8:]), le64(hm[16:]), le64(hm[24:])
		isum := int32(0)
		for h := range 2 {
			q := b[q3KQs+32*h : q3KQs+32*h+32]
			v0, v1, v2, v3 := le64(q[0:]), le64(q[8:]), le64(q[16:]), le64(q[24:])
			for k := range 4 {
				q8 := a[q8KQs+128*h+32*k : q8KQs+128*h+32*k+32]
				a0, a1, a2, a3 := biased64(q8[0:]), biased64(q8[8:]), biased64(q8[16:]), biased64(q8[24:])
				shift, hbit := uint(2*k), uint(4*h+k)
				// Σ q8·(u−4) = Σ q8·u − 4·bsum, with u = level+4 in [0, 7].
				j := 8*h + 2*k
				s0 := q3Dot16(v0, v1, h0, h1, a0, a1, shift, hbit) - 4*q8KBsum(a, j)
				s1 := q3Dot16(v2, v3, h2, h3, a2, a3, shift, hbit) - 4*q8KBsum(a, j+1)
				isum += (q3KScale(sc, j)-32)*s0 + (q3KScale(sc, j+1)-32)*s1
			}
		}
		d := halfAt(b[q3KD:]) * q8KScale(a)
		sumf += float32(d * float32(isum))
	}
	return sumf
}
