// The steps of hsum8 (x86order.go: ((a0+a4)+(a2+a6))+((a1+a5)+(a3+a7))) for several
// accumulators at once, the same additions in the same order, for the AVX2 kernels.

// HALVES adds the low and the high 128-bit halves of a and b: t = [lo(a)+hi(a), lo(b)+hi(b)]
// (hsum8's first step, t_k = acc_k + acc_{k+4}, for two accumulators at once). tmp is
// clobbered.
#define HALVES(a, b, t, tmp) \
	VPERM2F128 $0x20, b, a, t; \
	VPERM2F128 $0x31, b, a, tmp; \
	VADDPS     tmp, t, t

// PAIRS takes t of HALVES for accumulators (a, b) in ta and (c, d) in tc and leaves in u,
// per 128-bit half, [t0+t2, t1+t3] of the first accumulator and then of the second
// (hsum8's second step). tmp is clobbered.
#define PAIRS(ta, tc, u, tmp) \
	VSHUFPS $0x44, tc, ta, u; \
	VSHUFPS $0xEE, tc, ta, tmp; \
	VADDPS  tmp, u, u
