package tensor

// Q2_K: 256 values as 16 sub-blocks of 16 with 2-bit levels; each sub-block has a
// 4-bit scale and a 4-bit min, themselves scaled by the block's f16 d and dmin:
// x ≈ d·sc·q − dmin·m.
//
//	block_q2_K (84 bytes): scales [16]byte @0 (sc | m<<4) | qs [64]byte @16 | d f16 @80 | dmin f16 @82
//
// qs holds four 2-bit levels per byte: byte l of half h (32 bytes each) carries
// elements 128h+l, +32, +64, +96 in bits 0-1, 2-3, 4-5, 6-7.

const (
	q2KBytes = QKK/16 + QKK/4 + 4
	q2KQs    = QKK / 16
	q2KD     = q2KQs + QKK/4
)

// dequantizeQ2K is dequantize_row_q2_K.
func dequantizeQ2K(dst []float32, src []byte) {
	for i := 0; i < len(dst)/QKK; i++ {
		b := (*[q2KBytes]byte)(src[i*q2KBytes:])
		y := (*[QKK]float32)(dst[i*QKK:])
		d, dmin := halfAt(b[q2KD:]), halfAt(b[q2KD+2:])
		for is := range QKK / 16 {
			sc := b[is]
			dl, ml := d*float32(sc&0xF), float32(dmin*float32(sc>>4)) // rounded: not fused below (arm64)
			// sub-block is covers elements 16is..16is+15: half is/8, bit pair (is/2)%4,
			// bytes 16(is%2)..+15 of that half.
			q := b[q2KQs+32*(is/8)+16*(is%2):][:16]
			shift := 2 * uint(is/2%4)
			for l, v := range q {
				y[16*is+l] = float32(dl*float32((v>>shift)&3)) - ml
			}
		}
	}
}

// quantizeQ2K is quantize_row_q2_K_ref.
func quantizeQ2K(dst []byte, src []float32) {
	for i := 0; i < len(src)/QKK; i++ {
		quantizeBlockQ2K((*[q2KBytes]byte)(dst[i*q2KBytes:]), (*[QKK]float32)(src[i*QKK:]))
	}
}

func quantizeBlockQ2K(y *[q2KBytes]byte, x *[QKK]float32) {
	const q4scale = 15
	var (
		L       [QKK]uint8
		laux    [16]uint8
		weights [16]float32
		mins    [QKK / 16]float32
		scales  [QKK / 16]float32
	)
	p := qkx2Params{nmax: 3, rmin: -0.5, rdelta: 0.1, nstep: 15, useMAD: true}
	var maxScale, maxMin float32
	for j := range QKK / 16 {
		xs := x[16*j : 16*j+16]
		for l, v := range xs {
			weights[l] = abs32(v)
		}
		scales[j], mins[j] = makeQkx2Quants(p, xs, weights[:], L[16*j:16*j+16], laux[:])
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	sc := y[:QKK/16]
	clear(sc)
	if maxScale > 0 {
		iscale := q4scale / maxScale
		for j := range sc {
			sc[j] = uint8(kNearestInt(float32(iscale * scales[j])))
		}
		putHalf(y[q2KD:], maxScale/q4scale)
	} else {
		putHalf(y[q2KD:], 0)
	}
	if maxMin > 0 {
		iscale := q4scale / maxMin
		for j := range sc {
			sc[j] |= uint8(kNearestInt(float32(iscale*mins[j])) << 4)
		}
		putHalf(y[q2KD+2:], maxMin/q4scale)
	} else {
		putHalf(y[q2KD+2:], 0)
	}
	d, dmin := halfAt(y[q2KD:]), halfAt(y[q2KD+2:])
	for j := range QKK / 16 {
		dj := d * float32(sc[j]&0xF)
		if dj == 0 {
			continue
		}
		dm := float32(dmin * float32(sc[j]>>4)) // rounded: not fused below (arm64)
		for ii := range 16 {
			L[16*j+ii] = uint8(kClamp(kNearestInt((x[16*j+ii]+dm)/dj), 0, 3))
		}
	}
	packQ2(y[q2KQs:q2KD], &L)
}

// packQ2 stores 256 2-bit levels as Q2_K and Q3_K lay out their low bits.
func packQ2(qs []byte, L *[QKK]uint8) {
	for j := 0; j < QKK; j += 128 {
		for l := range 32 {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// dotQ2KGo is ggml_vec_dot_q2_K_q8_K: per block, integer sums of q8·q per sub-block
// weighted by the 4-bit scales, and Σ bsums·mins; then
// sumf += (d8·d)·isum − (d8·dmin)·summs.
func dotQ2KGo(n int, w, x []byte) float32 {
	var sumf float32
	for i := 0; i < n/QKK; i++ {
		b := (*[q2KBytes]byte)(w[i*q2KBytes:])
		a := (*[q8KBytes]byte)(x[i*q8KBytes:])
		d8 := q8KScale(a)
		summs := int32(0)
		for j := range 16 {
			summs += q8KBsum(a, j) * int32(b[j]>>4)
		}
		isum := int32(0)
		for h := range 2 {
			q := b[q2KQs+32*h : q2KQs+32*h+32]
			v0, v1, v2, v3 := le64(q[0:]), le64(q[8:]), le64(q[16:]), le64(q[24:])
			for k := range 4 {
				q8 := a[q8KQs+128*h+32*k : q8KQs+128*h+32*k+32]
				a0, a1, a2, a3 := biased64(q8[0:]), biased64(q8[8:]), biased64(q8[16:]), biased64(q8[24:])
				is := 8*h + 2*k
				isum += int32(b[is]&0xF)*crumbDot16(v0, v1, a0, a1, uint(2*k)) +
					int32(b[is+1]&0xF)*crumbDot16(v2, v3, a2, a3, uint(2*k))
			}
		}
		dall := d8 * halfAt(b[q2KD:])
		dmin := d8 * halfAt(b[q2KD+2:])
		sumf += float32(dall*float32(isum)) - float32(dmin*float32(summs))
	}
	return sumf
}
