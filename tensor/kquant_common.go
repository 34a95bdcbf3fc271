package tensor

// Helpers shared by the k-quant reference quantizers, ported from llama.cpp's
// ggml-quants.c (nearest_int, make_qx_quants, make_q3_quants, make_qkx2_quants,
// get_scale_min_k4).
//
// The quantizers must produce the same bytes as the C code, so every expression
// keeps C's float32 evaluation order. Products that feed an addition are wrapped in
// an explicit float32 conversion: the Go spec lets the compiler fuse x*y+z into one
// FMA (it does with GOAMD64=v3), and an explicit conversion forbids that, as the C
// code (compiled without FMA contraction in ggml-base) rounds every product.
//
// The dot products (dotQ2KGo ... dotQ6KGo, whose AVX2 kernels give the same bits)
// compute the same exact integer sums per sub-block as ggml_vec_dot_q*_K_q8_K_generic
// and combine them per block with the float32 scales in the same way, except that the
// generic code's eight int32 lanes are added before the float conversion; results can
// differ from it (and from llama.cpp's SIMD paths) in the last bits of the float32
// accumulation only.

import "math"

// groupMaxEps is GROUP_MAX_EPS: below this absolute maximum a group counts as all zero.
const groupMaxEps = 1e-15

// kNearestInt is llama.cpp's nearest_int: round to nearest, ties to even, by adding
// 1.5·2^23 and reading the mantissa bits. Like the C code it is only meaningful for
// |f| < 2^22; outside that it returns the same garbage the C code does.
func kNearestInt(f float32) int32 {
	v := float32(f) + 12582912
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// kClamp limits v to [lo, hi] (MAX(lo, MIN(hi, v))).
func kClamp(v, lo, hi int32) int32 {
	return max(lo, min(hi, v))
}

// makeQxQuants is make_qx_quants(n, nmax, x, L, rmse_type=1, qw=NULL): a symmetric
// scale for x with levels in [-nmax, nmax-1] (stored in L offset by nmax), refined
// by trying 18 nearby scales and keeping the one with the best x²-weighted fit.
func makeQxQuants(nmax int32, x []float32, L []int8) float32 {
	var mx, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, mx = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	fmax := float32(nmax)
	iscale := -fmax / mx
	sumlx, suml2 := qxSums(nmax, x, L, iscale, true)
	scale := float32(0)
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := int32(-9); is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fmax + float32(0.1*float32(is))) / mx
		sumlx, suml2 = qxSums(nmax, x, L, iscale, false)
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			qxLevels(nmax, x, L, iscale)
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// qxSums returns make_qx_quants' Σw·x·l and Σw·l² (w = x²) for the levels of iscale,
// storing the levels in L when store is set.
func qxSums(nmax int32, x []float32, L []int8, iscale float32, store bool) (sumlx, suml2 float32) {
	for i, v := range x {
		l := kClamp(kNearestInt(float32(iscale*v)), -nmax, nmax-1)
		if store {
			L[i] = int8(l + nmax)
		}
		w := v * v
		fl := float32(l)
		sumlx += float32(float32(w*v) * fl)
		suml2 += float32(float32(w*fl) * fl)
	}
	return sumlx, suml2
}

// qxLevels stores make_qx_quants' levels of iscale, offset by nmax, in L.
func qxLevels(nmax int32, x []float32, L []int8, iscale float32) {
	for i, v := range x {
		L[i] = int8(nmax + kClamp(kNearestInt(float32(iscale*v)), -nmax, nmax-1))
	}
}

// makeQ3Quants is make_q3_quants(n, nmax, x, L, do_rmse=true): a symmetric scale with
// levels in [-nmax, nmax-1], improved by up to five passes that move single levels
// while the x²-weighted fit gets better. L receives the levels offset by nmax.
func makeQ3Quants(nmax int32, x []float32, L []int8) float32 {
	var mx, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, mx = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	iscale := -float32(nmax) / mx
	var sumlx, suml2 float32
	for i, v := range x {
		l := kClamp(kNearestInt(float32(iscale*v)), -nmax, nmax-1)
		L[i] = int8(l)
		w := v * v
		fl := float32(l)
		sumlx += float32(float32(w*v) * fl)
		suml2 += float32(float32(w*fl) * fl)
	}
	for range 5 {
		changed := false
		for i, v := range x {
			w := v * v
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if !(slx > 0) {
				continue
			}
			sl2 := suml2 - float32(float32(w*li)*li)
			newL := kClamp(kNearestInt(float32(v*sl2)/slx), -nmax, nmax-1)
			if newL == int32(L[i]) {
				continue
			}
			fl := float32(newL)
			slx += float32(float32(w*v) * fl)
			sl2 += float32(float32(w*fl) * fl)
			if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
				L[i], sumlx, suml2 = int8(newL), slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// qkx2Params are make_qkx2_quants' search settings.
type qkx2Params struct {
	nmax         int32
	rmin, rdelta float32
	nstep        int
	useMAD       bool // weigh |error| instead of error²
}

// makeQkx2Quants is make_qkx2_quants: an asymmetric fit x ≈ scale·L + min with levels
// L in [0, nmax] and min ≤ 0, searching nstep+1 scales and keeping the weighted
// best. It returns scale and -min; laux is scratch of len(x).
func makeQkx2Quants(p qkx2Params, x, weights []float32, L, laux []uint8) (scale, negMin float32) {
	n := len(x)
	mn, mx := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		if x[i] < mn { // not the min/max builtins: they differ from C on ±0 and NaN
			mn = x[i]
		}
		if x[i] > mx {
			mx = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if mn > 0 {
		mn = 0
	}
	if mx == mn {
		clear(L[:n])
		return 0, -mn
	}
	fmax := float32(p.nmax)
	iscale := fmax / (mx - mn)
	scale = 1 / iscale
	bestErr := float32(0)
	for i, v := range x {
		l := kClamp(kNearestInt(float32(iscale*float32(v-mn))), 0, p.nmax)
		L[i] = uint8(l)
		bestErr += float32(weights[i] * qkx2Diff(float32(scale*float32(l))+mn-v, p.useMAD))
	}
	if p.nstep < 1 {
		return scale, -mn
	}
	for is := 0; is <= p.nstep; is++ {
		iscale = (p.rmin + float32(p.rdelta*float32(is)) + fmax) / (mx - mn)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := kClamp(kNearestInt(float32(iscale*float32(v-mn))), 0, p.nmax)
			laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(float32(w*fl) * fl)
			sumXL += float32(float32(w*fl) * v)
		}
		d := float32(sumW*sumL2) - float32(sumL*sumL)
		if !(d > 0) {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / d
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / d
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		curErr := float32(0)
		for i, v := range x {
			diff := float32(thisScale*float32(laux[i])) + thisMin - v
			curErr += float32(weights[i] * qkx2Diff(diff, p.useMAD))
		}
		if curErr < bestErr {
			copy(L[:n], laux[:n])
			bestErr, scale, mn = curErr, thisScale, thisMin
		}
	}
	return scale, -mn
}

// qkx2Diff is the error measure of make_qkx2_quants: |d| or d².
func qkx2Diff(d float32, mad bool) float32 {
	if mad {
		return abs32(d)
	}
	return d * d
}

// scaleMinK4 is get_scale_min_k4: the 6-bit scale and min of sub-block j from the
// 12 packed bytes q of a Q4_K or Q5_K block.
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xF | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// putScaleMinK4 packs the 6-bit scales and mins of the eight sub-blocks into q[0:12]
// the way quantize_row_q4_K_ref and quantize_row_q5_K_ref do.
func putScaleMinK4(q []byte, ls, lm *[8]uint8) {
	for j := range 8 {
		if j < 4 {
			q[j] = ls[j]
			q[j+4] = lm[j]
			continue
		}
		q[j+4] = ls[j]&0xF | (lm[j]&0xF)<<4
		q[j-4] |= (ls[j] >> 4) << 6
		q[j] |= (lm[j] >> 4) << 6
	}
}
