package cpu

import "math"

// expf, sinf and cosf are glibc's float functions (sysdeps/ieee754/flt-32, the
// algorithms of ARM's optimized-routines, glibc 2.28 and later) as x86-64 runs them:
// the FMA variants that its ifunc picks, where GCC fuses every a+b·c. They are not
// correctly rounded (about 0.06% of expf and 0.5% of sinf/cosf results differ from
// float32(math.Exp(x))), and llama.cpp calls them for RoPE, the softmax rescaling of
// flash attention and the SiLU tail; a one-ulp difference there moves K and V across
// an F16 rounding boundary. Checked against glibc 2.36 on 3M random inputs each.

// exp2fTab holds asuint64(2^(i/32)) - i<<47 (glibc's __exp2f_data.tab).
var exp2fTab = [32]uint64{
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
}

// expf is glibc's __expf: e^x = 2^(k/32)·2^(r/32) with a cubic in r, in float64.
func expf(x float32) float32 {
	const n = 32
	const invLn2N, shift = 0x1.71547652b82fep+0 * n, 0x1.8p+52
	const c0, c1, c2 = 0x1.c6af84b912394p-5 / n / n / n, 0x1.ebfce50fac4f3p-3 / n / n, 0x1.62e42ff0c52d6p-1 / n
	if top := math.Float32bits(x) >> 20 & 0x7ff; top >= math.Float32bits(88)>>20 {
		switch {
		case math.IsInf(float64(x), -1):
			return 0
		case top >= math.Float32bits(float32(math.Inf(1)))>>20:
			return x + x
		case x > 0x1.62e42ep6:
			return float32(math.Inf(1))
		case x < -0x1.9fe368p6:
			return 0
		}
	}
	xd := float64(x)
	kd := math.FMA(invLn2N, xd, shift)
	ki := math.Float64bits(kd)
	kd -= shift
	r := math.FMA(invLn2N, xd, -kd)
	s := math.Float64frombits(exp2fTab[ki%n] + ki<<(52-5))
	y := math.FMA(math.FMA(c0, r, c1), r*r, math.FMA(c2, r, 1))
	return float32(y * s)
}

// sincosPoly is one row of glibc's __sincosf_table: quadrant signs, 2/π·2^24, π/2,
// and the cosine and sine polynomials (negated cosine in the second row).
type sincosPoly struct {
	sign               [4]float64
	hpiInv, hpi        float64
	c0, c1, c2, c3, c4 float64
	s1, s2, s3         float64
}

var sincosTab = [2]sincosPoly{
	{[4]float64{1, -1, -1, 1}, 0x1.45F306DC9C883p+23, 0x1.921FB54442D18p0, 0x1p0, -0x1.ffffffd0c621cp-2,
		0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16, -0x1.555545995a603p-3,
		0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
	{[4]float64{1, -1, -1, 1}, 0x1.45F306DC9C883p+23, 0x1.921FB54442D18p0, -0x1p0, 0x1.ffffffd0c621cp-2,
		-0x1.55553e1068f19p-5, 0x1.6c087e89a359dp-10, -0x1.99343027bf8c3p-16, -0x1.555545995a603p-3,
		0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
}

// invPio4 is 4/π to 192 bits, 8 new bits per entry (glibc's __inv_pio4).
var invPio4 = [24]uint32{
	0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
	0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
	0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
}

func sinf(y float32) float32 { return sincosf(y, false) }
func cosf(y float32) float32 { return sincosf(y, true) }

// sincosf is glibc's __sinf (cos false) or __cosf (cos true).
func sincosf(y float32, cos bool) float32 {
	const pio4 = 0x1.921FB54442D18p-1
	top := math.Float32bits(y) >> 20 & 0x7ff
	x, p, n := float64(y), &sincosTab[0], 0
	switch {
	case top < math.Float32bits(pio4)>>20:
		if top < math.Float32bits(0x1p-12)>>20 {
			if cos {
				return 1
			}
			return y
		}
		return sinfPoly(x, x*x, p, b2i(cos))
	case top < math.Float32bits(120)>>20:
		r := x * p.hpiInv
		n = int((int32(r) + 0x800000) >> 24)
		x = math.FMA(-float64(n), p.hpi, x)
		s := p.sign[n&3]
		if n&2 != 0 {
			p = &sincosTab[1]
		}
		return sinfPoly(x*s, x*x, p, n^b2i(cos))
	case top < math.Float32bits(float32(math.Inf(1)))>>20:
		xi := math.Float32bits(y)
		sign := int(xi >> 31)
		x, n = reduceLarge(xi)
		s := p.sign[(n+sign)&3]
		if (n+sign)&2 != 0 {
			p = &sincosTab[1]
		}
		return sinfPoly(x*s, x*x, p, n^b2i(cos))
	}
	return float32(math.NaN())
}

// sinfPoly evaluates the sine (n even) or cosine (n odd) polynomial.
func sinfPoly(x, x2 float64, p *sincosPoly, n int) float32 {
	if n&1 == 0 {
		x3 := x * x2
		s1 := math.FMA(x2, p.s3, p.s2)
		s := math.FMA(x3, p.s1, x)
		return float32(math.FMA(x3*x2, s1, s))
	}
	x4 := x2 * x2
	c2 := math.FMA(x2, p.c4, p.c3)
	c1 := math.FMA(x2, p.c1, p.c0)
	c := math.FMA(x4, p.c2, c1)
	return float32(math.FMA(x4*x2, c2, c))
}

// reduceLarge reduces |x| ≥ 120 (its float bits xi) modulo π/2 with 4/π to 192 bits,
// returning the remainder and the quadrant.
func reduceLarge(xi uint32) (float64, int) {
	arr := invPio4[(xi>>26)&15:]
	shift := (xi >> 23) & 7
	xi = (xi&0xffffff | 0x800000) << shift
	res0 := uint64(xi * arr[0])
	res1 := uint64(xi) * uint64(arr[4])
	res2 := uint64(xi) * uint64(arr[8])
	res0 = res2>>32 | res0<<32
	res0 += res1
	n := (res0 + 1<<61) >> 62
	res0 -= n << 62
	return float64(int64(res0)) * 0x1.921FB54442D18p-62, int(n)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
