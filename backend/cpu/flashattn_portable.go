package cpu

import (
	"math"

	"github.com/infergo/infer/tensor"
)

// The one-chunk flash attention (attendOneChunk) without assembly: the same bits as the
// definitions (vecDotF16Go, scoreF16Go, madRowF16Go, scaleRowF16Go), computed with fewer
// conversions.

// chunkScoresGo is chunkScores without assembly. Heads under 64 elements sum the exact
// products in float64 in order (scoreF16Go), four keys at a time so that their addition
// chains overlap; longer heads take vecDotF16Go's lanes with the query already widened.
func chunkScoresGo(s []float32, k []uint16, qf []float32, h kvHead) {
	hd := len(qf)
	if hd >= 4*lanes {
		for j := range s {
			s[j] = vecDotF16QGo(k[j*h.cols+h.off:j*h.cols+h.off+hd], qf)
		}
		return
	}
	j := 0
	for ; j+4 <= len(s); j += 4 {
		r := j*h.cols + h.off
		k0 := k[r : r+hd]
		k1 := k[r+h.cols : r+h.cols+hd]
		k2 := k[r+2*h.cols : r+2*h.cols+hd]
		k3 := k[r+3*h.cols : r+3*h.cols+hd]
		var d0, d1, d2, d3 float64
		for d, q := range qf {
			d0 += float64(fromF16(k0[d]) * q)
			d1 += float64(fromF16(k1[d]) * q)
			d2 += float64(fromF16(k2[d]) * q)
			d3 += float64(fromF16(k3[d]) * q)
		}
		s[j], s[j+1], s[j+2], s[j+3] = float32(d0), float32(d1), float32(d2), float32(d3)
	}
	for ; j < len(s); j++ {
		s[j] = float32(scoreF16Go(k[j*h.cols+h.off:j*h.cols+h.off+hd], qf))
	}
}

// vecDotF16QGo is vecDotF16Go(a, b) where qf holds b's values widened to float32.
func vecDotF16QGo(a []uint16, qf []float32) float32 {
	var acc [4][lanes]float32
	qf = qf[:len(a)]
	np := len(a) &^ (4*lanes - 1)
	for i := 0; i < np; i += 4 * lanes {
		ab, qb := (*[4 * lanes]uint16)(a[i:]), (*[4 * lanes]float32)(qf[i:])
		for j := range acc {
			for l := range lanes {
				acc[j][l] = fma32(fromF16(ab[j*lanes+l]), qb[j*lanes+l], acc[j][l])
			}
		}
	}
	for l := range lanes {
		acc[0][l] += acc[2][l]
		acc[1][l] += acc[3][l]
		acc[0][l] += acc[1][l]
	}
	sum := float64(reduce16(&acc[0]))
	for i := np; i < len(a); i++ {
		sum += float64(fromF16(a[i]) * qf[i])
	}
	return float32(sum)
}

// accumulateF16Go is accumulateF16 without assembly. The accumulator lives in accF as
// float32 values, each exactly the F16 value madRowF16Go or scaleRowF16Go would store
// (round16), and goes back to F16 bits once at the end.
func accumulateF16Go(acc, v []uint16, h kvHead, e []float32, raised []bool, accF []float32) float32 {
	hd := len(acc)
	af := accF[:hd]
	for d, a := range acc {
		af[d] = fromF16(a)
	}
	var sum float32
	for j, x := range e {
		ms, vs := float32(1), x
		if raised[j] {
			ms, vs = x, 1
		}
		if ms != 1 {
			scaleRow16(af, ms)
		}
		madRow16(af, v[j*h.cols+h.off:j*h.cols+h.off+hd], vs)
		if r := float64(sum)*float64(ms) + float64(vs); !tensor.FmafHard(r) { // tensor.Fmaf, its common case inline
			sum = float32(r)
		} else {
			sum = tensor.FmafTie(sum, ms, vs)
		}
	}
	for d, a := range af {
		acc[d] = toF16(a) // exact: a is an F16 value
	}
	return sum
}

// madRow16 is madRowF16Go on an accumulator of F16 values held as float32.
//
// tensor.Fmaf's float64 sum r rounds to float32 otherwise than the exact sum only where
// r is a float32 midpoint or |r| < 2^-126 (tensor.FmafHard). The second case needs
// nothing here: r is then zero exactly where the exact sum is (the product is exact,
// both are at least 2^-173 apart from zero otherwise) and has its sign, and every
// float32 of magnitude at most 2^-126 rounds to an F16 zero of its own sign. The F16 rounding of a normal F16
// value is done in the float32 bits (round to nearest even at bit 13, the carry moving
// into the exponent); zeros, subnormal halves, overflows, Inf and NaN take round16.
func madRow16(acc []float32, v []uint16, s float32) {
	v = v[:len(acc)]
	for d := madRow16Fast(acc, v, s, 0); d < len(v); d = madRow16Fast(acc, v, s, d+1) {
		a, c := fromF16(v[d]), acc[d]
		f := tensor.Fmaf(a, s, c)
		if u := math.Float32bits(f); u&0x7fffffff-0x38800000 < 0x477ff000-0x38800000 {
			acc[d] = math.Float32frombits(round16Normal(u))
		} else {
			acc[d] = round16(f)
		}
	}
}

// madRow16Fast is madRow16 from element d0 on, up to the first element that is not its
// common case (a float32 midpoint, or a result outside the normal F16 range), whose
// index it returns (len(v) when there is none): a loop without calls, whose values stay
// in registers. round16Normal takes the sign bit along (|f| < 65520: no carry reaches it).
func madRow16Fast(acc []float32, v []uint16, s float32, d0 int) int {
	s64 := float64(s)
	tab := tensor.F16Values()
	acc = acc[:len(v)]
	for d := d0; d < len(v); d++ {
		r := float64(tab[v[d]])*s64 + float64(acc[d])
		if uint32(math.Float64bits(r))&(1<<29-1) == 1<<28 { // a float32 midpoint
			return d
		}
		u := math.Float32bits(float32(r))
		if u&0x7fffffff-0x38800000 >= 0x477ff000-0x38800000 { // not 2^-14 ≤ |f| < 65520
			return d
		}
		acc[d] = math.Float32frombits(round16Normal(u))
	}
	return len(v)
}

// scaleRow16 is scaleRowF16Go on an accumulator of F16 values held as float32.
func scaleRow16(acc []float32, s float32) {
	for d, a := range acc {
		f := a * s
		u := math.Float32bits(f) // round16(f), inline as in madRow16
		if b := u & 0x7fffffff; b-0x38800000 < 0x477ff000-0x38800000 {
			acc[d] = math.Float32frombits(round16Normal(b) | u&0x80000000)
			continue
		}
		acc[d] = round16Call(f)
	}
}

// round16 is fromF16(toF16(f)): f rounded to the nearest F16 value (ties to even), kept
// as float32. Below 65520 in magnitude, adding and then subtracting c = 2^13 times the
// F16 step of |f| (2^(e-10) for |f| in [2^e, 2^(e+1)), e ≥ -14; 2^-24 below 2^-14)
// rounds |f| in one float32 addition, whose step is then the F16 step; the sign is put
// back afterwards, which also keeps the sign of a zero. Infinities, NaNs and the values
// that overflow take the conversions themselves (round16Slow).
func round16(f float32) float32 {
	u := math.Float32bits(f)
	a := u & 0x7fffffff
	if a >= 0x477ff000 { // |f| ≥ 65520: rounds to Inf; Inf, NaN
		return round16Slow(f)
	}
	c := max(a&0x7f800000+13<<23, 0x3f000000)
	cf := math.Float32frombits(c)
	r := math.Float32frombits(a) + cf - cf
	return math.Float32frombits(math.Float32bits(r) | u&0x80000000)
}

//go:noinline
func round16Slow(f float32) float32 { return fromF16(toF16(f)) }

// round16Normal is round16 on the bits b of a float32 in [2^-14, 65520): rounded to
// nearest even at bit 13, where the F16 step of a normal half lies.
func round16Normal(b uint32) uint32 { return (b + 0xfff + b>>13&1) &^ 0x1fff }

// round16Call is round16 kept out of line, for loops whose fast path is inline.
//
//go:noinline
func round16Call(f float32) float32 { return round16(f) }

// tileScoresRest is tileScoresGo, four keys at a time so that their FMA chains overlap.
func tileScoresRest(s, q []float32, k []uint16, t0 int, h kvHead, scale float32) {
	hd := len(q)
	tab := tensor.F16Values()
	j := 0
	for ; j+4 <= len(s); j += 4 {
		r := (t0+j)*h.cols + h.off
		k0 := k[r : r+hd]
		k1 := k[r+h.cols : r+h.cols+hd]
		k2 := k[r+2*h.cols : r+2*h.cols+hd]
		k3 := k[r+3*h.cols : r+3*h.cols+hd]
		var d0, d1, d2, d3 float32
		for d, qd := range q {
			d0 = fma32(qd, tab[k0[d]], d0)
			d1 = fma32(qd, tab[k1[d]], d1)
			d2 = fma32(qd, tab[k2[d]], d2)
			d3 = fma32(qd, tab[k3[d]], d3)
		}
		s[j], s[j+1], s[j+2], s[j+3] = d0*scale, d1*scale, d2*scale, d3*scale
	}
	for ; j < len(s); j++ {
		r := (t0+j)*h.cols + h.off
		var dot float32
		for d, kd := range k[r : r+hd] {
			dot = fma32(q[d], tab[kd], dot)
		}
		s[j] = dot * scale
	}
}
