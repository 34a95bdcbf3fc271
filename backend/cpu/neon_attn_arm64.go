package cpu

// The NEON forms of flashattn.go's F16 attention rows (neon_attn_arm64.s). Each
// reports whether it ran (NEON on, rows of a positive multiple of eight elements); the
// caller's Go code computes the rest. madRowF16NEON and scaleRowF16NEON give the bits
// of the Go code (tensor.Fmaf and the product rounded once, then F32ToF16's round to nearest
// even), accRowF16NEON those of the AVX2 kernel (a true float32 FMA, where fma32 rounds
// through float64: they differ on double-rounding ties only), chunkScoresNEON those of
// vecDotF16 (vecDotF16F32RowsNEON). NaN payloads may differ (FCVTN keeps them).

//go:noescape
func fmaRowF16NEON(acc *float32, v *uint16, p float32, n int)

//go:noescape
func scores8F16NEON(k *uint16, ks int, q *float32, hd int, scale float32, s *float32)

//go:noescape
func madF16NEON(acc, v *uint16, s float32, n int)

//go:noescape
func scaleF16NEON(acc *uint16, s float32, n int)

// accRowF16NEON is accRowF16: acc[d] = fma(p, v[d], acc[d]).
func accRowF16NEON(acc []float32, v []uint16, p float32) bool {
	n := len(acc)
	if !useNEON || n%8 != 0 || n == 0 || len(v) < n {
		return false
	}
	fmaRowF16NEON(&acc[0], &v[0], p, n)
	return true
}

// madRowF16NEON is madRowF16: acc = F16(fma(v, s, acc)).
func madRowF16NEON(acc, v []uint16, s float32) bool {
	n := len(acc)
	if !useNEON || n%8 != 0 || n == 0 || len(v) < n {
		return false
	}
	madF16NEON(&acc[0], &v[0], s, n)
	return true
}

// scaleRowF16NEON is scaleRowF16: acc = F16(acc·s).
func scaleRowF16NEON(acc []uint16, s float32) bool {
	n := len(acc)
	if !useNEON || n%8 != 0 || n == 0 {
		return false
	}
	scaleF16NEON(&acc[0], s, n)
	return true
}

// chunkScoresNEON is chunkScores for a non-empty head and score row: s[j] =
// vecDotF16(key j, the query) with the query's F16 values widened in qf.
func chunkScoresNEON(s []float32, k []uint16, qf []float32, h kvHead) bool {
	hd := len(qf)
	if !useNEON || hd == 0 || len(s) == 0 {
		return false
	}
	_ = k[(len(s)-1)*h.cols+h.off+hd-1]
	vecDotF16F32RowsNEON(&k[h.off], 2*h.cols, &qf[0], hd, len(s), &s[0])
	return true
}

// tileScoresNEON is tileScores: eight keys at a time (scores8F16NEON, the keys in
// lanes, each score one FMA chain as fma32's), the last keys too where the cache has
// eight rows from them, the others one by one in Go.
func tileScoresNEON(s, q []float32, k []uint16, t0 int, h kvHead, scale float32) bool {
	hd := len(q)
	if !useNEON || hd%4 != 0 || hd == 0 || len(s) == 0 {
		return false
	}
	j := 0
	for ; j+8 <= len(s); j += 8 {
		r := (t0+j)*h.cols + h.off
		_ = k[r+7*h.cols+hd-1]
		scores8F16NEON(&k[r], 2*h.cols, &q[0], hd, scale, &s[j])
	}
	if r := (t0+j)*h.cols + h.off; j < len(s) && r+7*h.cols+hd <= len(k) {
		var s8 [8]float32
		scores8F16NEON(&k[r], 2*h.cols, &q[0], hd, scale, &s8[0])
		copy(s[j:], s8[:])
		j = len(s)
	}
	tileScoresGo(s[j:], q, k, t0+j, h, scale)
	return true
}
