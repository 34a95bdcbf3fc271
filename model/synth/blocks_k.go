package synth

import "math/rand/v2"

// The k-quant generators. Each 256-element super-block has one f16 scale d (and dmin)
// and per-sub-block integer scales; see the block layouts in ggml-common.h.

// Q2_K {scales[16]; qs[64]; d; dmin}: x = d·s·q - dmin·m per 16 elements, q in 0..3.
// Each scale byte holds s = m in 8..15 and dmin = 1.5·d, so x = d·s·(q-1.5):
// RMS 1.118·11.6 ≈ 13.
func fillQ2_K(dst []byte, rng *rand.Rand) {
	blocks(dst, 84, func(b []byte) {
		for i := range 16 {
			s := byte(8 + rng.IntN(8))
			b[i] = s | s<<4
		}
		randBytes(b[16:80], rng)
		d := scale(rng, Sigma/13)
		putF16(b[80:], d)
		putF16(b[82:], 1.5*d)
	})
}

// Q3_K {hmask[32]; qs[64]; scales[12]; d}: x = d·(s-32)·q, s a random 6-bit scale,
// q in -4..3: RMS 18.5·2.29 ≈ 42.4.
func fillQ3_K(dst []byte, rng *rand.Rand) {
	blocks(dst, 110, func(b []byte) {
		randBytes(b[:108], rng)
		putF16(b[108:], scale(rng, Sigma/42.4))
	})
}

// packScales6 packs eight 6-bit scales and eight 6-bit mins the way Q4_K and Q5_K
// store them (the inverse of ggml's get_scale_min_k4).
func packScales6(dst []byte, sc, m *[8]byte) {
	for j := range 4 {
		dst[j] = sc[j] | (sc[j+4]>>4)<<6
		dst[j+4] = m[j] | (m[j+4]>>4)<<6
		dst[j+8] = sc[j+4]&0xF | (m[j+4]&0xF)<<4
	}
}

// kScales draws eight sub-block scales in 8..31, used as the mins too.
func kScales(dst []byte, rng *rand.Rand) {
	var sc [8]byte
	for i := range sc {
		sc[i] = byte(8 + rng.IntN(24))
	}
	packScales6(dst, &sc, &sc)
}

// Q4_K {d; dmin; scales[12]; qs[128]}: x = d·s·q - dmin·m per 32 elements, q in 0..15.
// m = s and dmin = 7.5·d give x = d·s·(q-7.5): RMS 4.61·20.6 ≈ 95.
func fillQ4_K(dst []byte, rng *rand.Rand) {
	blocks(dst, 144, func(b []byte) {
		d := scale(rng, Sigma/95)
		putF16(b, d)
		putF16(b[2:], 7.5*d)
		kScales(b[4:16], rng)
		randBytes(b[16:], rng)
	})
}

// Q5_K {d; dmin; scales[12]; qh[32]; qs[128]}: as Q4_K with q in 0..31 and
// dmin = 15.5·d: RMS 9.23·20.6 ≈ 190.
func fillQ5_K(dst []byte, rng *rand.Rand) {
	blocks(dst, 176, func(b []byte) {
		d := scale(rng, Sigma/190)
		putF16(b, d)
		putF16(b[2:], 15.5*d)
		kScales(b[4:16], rng)
		randBytes(b[16:], rng)
	})
}

// Q6_K {ql[128]; qh[64]; scales[16] int8; d}: x = d·s·(q-32), q in 0..63, s of
// magnitude 4..20 with a random sign: RMS 18.5·13.3 ≈ 246.
func fillQ6_K(dst []byte, rng *rand.Rand) {
	blocks(dst, 210, func(b []byte) {
		randBytes(b[:192], rng)
		for i := 192; i < 208; i++ {
			s := int8(4 + rng.IntN(17))
			if rng.Uint32()&1 == 1 {
				s = -s
			}
			b[i] = byte(s)
		}
		putF16(b[208:], scale(rng, Sigma/246))
	})
}
