// matvec.cu: dst (n, rows) = x (n, cols) · wᵀ for small n (decode), w (rows, cols) of any
// weight format, each weight byte read once for up to NC activation rows. Quantized
// weights multiply activations quantized to int8 blocks of 32 (quantize_q8, Q8_0's
// rounding) with dp4a, as llama.cpp's MMVQ does; F32, F16 and BF16 weights multiply the
// F32 activations.
//
// A block of MV_WARPS warps computes R weight rows: warp w takes the 256-element chunks
// (mv_q8) or 1024-element steps (mv_stream, the formats' 16-byte-load kernel) w,
// w+MV_WARPS, ... of those rows, and the warps' sums meet in shared memory. Launch:
// block MV_WARPS·32 threads, grid (ceil(rows/R), ceil(n/NC)).
#include "types.cuh"
#include "pdl.cuh"

// Under PDL (sm_90 code, see pdl.cuh) every kernel here waits for the kernel ahead before it
// touches memory other than its weights (pdl_start, or pdl_trigger and mv_any's wait): the
// marker tells package cuda the loaded code has the waits, so that it may launch the kernels
// with the attribute.
PDL_MARKER(pdl_matvec)

#define MV_WARPS 4
// Weight rows per block of the quantized kernels for 1 and 2 activation rows (1 for 4,
// 8, and for the float formats); the Go side (matmul.go, mvRows) must agree.
#define MV_ROWS_1 4
#define MV_ROWS_2 2

// MV_STREAM_UNROLL is how many steps of a row mv_stream's warps overlap (it holds their
// weights in registers at once); MV_MIN_BLOCKS the blocks of the 1- and 2-row
// quantized kernels an SM must hold at once (__launch_bounds__: at most 64 registers a
// thread for 8), so that the 1024 blocks of a 4096-row matrix run in one wave on 132 SMs.
// Of (1, 1), (1, 8), (2, 1), (2, 8) on an H200, (2, 8) was fastest over the benchmarked
// shapes (BenchmarkMatVec) and for Q4_0, Q4_1, Q2_K, Q4_K, Q5_K; Q6_K and Q3_K were
// faster with 1 block (they spill under 64 registers), Q5_0 and Q5_1 with (1, 8). Q6_K and
// Q3_K now ask for 4 (128 registers, no spills): 5-10% faster than with 1 (134 and 160
// registers, 3 blocks an SM) in BenchmarkMatVec, 2026-12-02.
#ifndef MV_STREAM_UNROLL
#define MV_STREAM_UNROLL 2
#endif
#ifndef MV_MIN_BLOCKS
#define MV_MIN_BLOCKS 8
#endif
static constexpr int kStreamUnroll = MV_STREAM_UNROLL;

// The quantized mat-vecs request their first weights before waiting for the kernel ahead
// (mv_stream; entries call pdl_trigger, mv_any waits). Under PDL a block may start while the
// kernels ahead of it still run, so before the wait it reads nothing but weights, which no
// kernel writes (they are uploaded by copies, which PDL does not overlap). On an H200 the
// first step's loads in flight during the kernel ahead took 7B Q4_0 tg128 from 525 to 548
// t/s (to 568 with the attention and SwiGLU kernels triggering their dependents at once),
// 2026-12-02.

// block_reduce adds the MV_WARPS warps' acc[R·NC] and writes the sums to dst (n, rows):
// dst[c·rows + row0 + r] for r < nr, c < nc; add, unless null, gets the sums added too
// (the residual epilogue: add += dst). With BIAS, add is instead a bias (or null), one
// float a row (qwen2's q, k and v biases), added to each sum before it is written: the same float
// addition as the Add kernel it replaces. The kernels without BIAS are those of before.
template <int R, int NC, bool BIAS = false>
static __device__ __forceinline__ void block_reduce(float (&acc)[R][NC], float *dst, float *add, int rows, int row0,
                                                    int nr, int nc) {
	__shared__ float red[MV_WARPS][R * NC];
	const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
#pragma unroll
	for (int r = 0; r < R; r++)
#pragma unroll
		for (int c = 0; c < NC; c++) {
			const float s = warp_sum(acc[r][c]);
			if (lane == 0) red[warp][r * NC + c] = s;
		}
	__syncthreads();
	const int t = threadIdx.x, r = t / NC, c = t % NC;
	if (t < R * NC && r < nr && c < nc) {
		float s = 0.0f;
#pragma unroll
		for (int w = 0; w < MV_WARPS; w++) s += red[w][t];
		if constexpr (BIAS) {
			if (add) s += add[row0 + r];
			dst[(size_t)c * rows + row0 + r] = s;
		} else {
			dst[(size_t)c * rows + row0 + r] = s;
			if (add) add[(size_t)c * rows + row0 + r] += s;
		}
	}
}

// quantize_q8 quantizes x to int8 in blocks of 32 the way llama.cpp's
// quantize_row_q8_0 does (d = amax/127, q = round(x/d), d stored as f16): xq (n·cols)
// int8 and xd (n·cols/32) the scales as floats. One warp per block.
extern "C" __global__ void quantize_q8(signed char *xq, float *xd, const float *x, i64 nblocks) {
	pdl_start();
	const int lane = threadIdx.x % WARP;
	const i64 stride = (i64)gridDim.x * blockDim.x / WARP;
	for (i64 b = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / WARP; b < nblocks; b += stride) {
		const float v = x[b * WARP + lane];
		const float d = warp_max(fabsf(v)) / 127.0f;
		const float id = d != 0.0f ? 1.0f / d : 0.0f;
		xq[b * WARP + lane] = (signed char)roundf(v * id);
		if (lane == 0) xd[b] = __half2float(__float2half_rn(d));
	}
}

// mv_q8 handles the block formats against activations quantized by quantize_q8. In
// each 256-element chunk (8 blocks of 32, or one k-quant super-block) lane l takes 8
// weights and the matching 8 int8 activations (two 4-byte loads) and forms their dot
// product with dp4a (T::vdot): a warp reads each chunk's weight bytes contiguously.
// Activations loaded once serve the block's R rows. blk is the block's index among the
// ceil(rows/R) blocks of this matrix; add is the residual epilogue's target, or null
// (with BIAS, the bias: block_reduce).
template <class T, int NC, int R, bool BIAS = false>
static __device__ void mv_q8(float *__restrict__ dst, float *add, const u8 *__restrict__ w,
                             const signed char *__restrict__ xq, const float *__restrict__ xd, int rows, int cols,
                             int n, int blk) {
	const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
	const int row0 = blk * R, nr = min(R, rows - row0);
	const int c0 = blockIdx.y * NC, nc = min(NC, n - c0);
	xq += (size_t)c0 * cols;
	xd += (size_t)c0 * (cols / 32);
	dst += (size_t)c0 * rows;
	const size_t rowBytes = (size_t)(cols / T::QK) * T::BYTES;
	const u8 *wr = w + (size_t)row0 * rowBytes;
	const int chunkBytes = 256 / T::QK * T::BYTES;
	int i0, i1;
	T::offsets(lane, i0, i1);
	float acc[R][NC];
#pragma unroll
	for (int r = 0; r < R; r++)
#pragma unroll
		for (int c = 0; c < NC; c++) acc[r][c] = 0.0f;
	const int last = cols - 32 * (lane / 4); // chunk offsets below this hold lane's block
#pragma unroll 2
	for (int e0 = 256 * warp; e0 < last; e0 += 256 * MV_WARPS) {
		int xa[NC], xb[NC];
		float dx[NC], dy[NC];
#pragma unroll
		for (int c = 0; c < NC; c++) {
			const int cc = min(c, nc - 1); // past the last row: reload it, discard below
			const signed char *xc = xq + (size_t)cc * cols + e0;
			xa[c] = *(const int *)(xc + i0);
			xb[c] = *(const int *)(xc + i1);
			dx[c] = xd[(size_t)cc * (cols / 32) + (e0 + i0) / 32];
			if constexpr (TwoScales<T>::value) dy[c] = xd[(size_t)cc * (cols / 32) + (e0 + i1) / 32];
		}
#pragma unroll
		for (int r = 0; r < R; r++) {
			const u8 *ch = wr + min(r, nr - 1) * rowBytes + (size_t)(e0 / 256) * chunkBytes;
#pragma unroll
			for (int c = 0; c < NC; c++) {
				if constexpr (TwoScales<T>::value) acc[r][c] += T::vdot2(ch, lane, xa[c], xb[c], dx[c], dy[c]);
				else acc[r][c] += T::vdot(ch, lane, xa[c], xb[c], dx[c]);
			}
		}
	}
	block_reduce<R, NC, BIAS>(acc, dst, add, rows, row0, nr, nc);
}

// ---- the streaming path: every block format ----
//
// mv_q8 reads a few bytes a lane per load (the 18- and 34-byte blocks allow only 2-byte
// aligned loads), too many loads for too few bytes to stream at HBM bandwidth. mv_stream
// reads the same weights with 16-byte loads: a warp step covers 1024 elements of a row
// (32 blocks of 32, or 4 super-blocks of 256), and lane l takes 32 of them, two runs of 16
// (elements a0.. and a1.. of the step, S::runs), whose weights it reads whole: with aligned
// 16-byte loads where the format allows (Q4_K, Q5_K: 144- and 176-byte super-blocks), else
// through ld_a2 (aligned 16-byte loads and a funnel shift). Activations loaded once serve
// the block's R rows. The weights' layout is the file's; nothing is repacked.

// ld_a2 sets v to the 16·N bytes at p (2-byte aligned) as words, read with aligned 16-byte
// loads: the N units from the one holding p, and one more unless p is aligned. It never
// reads past the 16-byte unit holding the last byte asked for.
template <int N>
static __device__ __forceinline__ void ld_a2(const u8 *p, u32 (&v)[4 * N]) {
	const size_t a = (size_t)p;
	const uint4 *q = (const uint4 *)(a & ~(size_t)15);
	const int o = (int)(a & 15);
	u32 w[4 * N + 4];
#pragma unroll
	for (int i = 0; i <= N; i++) {
		uint4 u = make_uint4(0, 0, 0, 0);
		if (i < N || o != 0) u = __ldg(q + i);
		w[4 * i] = u.x, w[4 * i + 1] = u.y, w[4 * i + 2] = u.z, w[4 * i + 3] = u.w;
	}
	if (o & 8) {
#pragma unroll
		for (int i = 0; i < 4 * N + 2; i++) w[i] = w[i + 2];
	}
	if (o & 4) {
#pragma unroll
		for (int i = 0; i < 4 * N + 1; i++) w[i] = w[i + 1];
	}
	const u32 sh = (u32)(o & 2) * 8; // 0 or 16 bits
#pragma unroll
	for (int i = 0; i < 4 * N; i++) v[i] = __funnelshift_r(w[i], w[i + 1], sh);
}

// dot16 is the dp4a dot product of 16 int8 weights (w) and activations (x); ones16 the sum
// of the activations.
static __device__ __forceinline__ int dot16(const u32 (&w)[4], const uint4 &x, int acc) {
	acc = __dp4a((int)w[0], (int)x.x, acc);
	acc = __dp4a((int)w[1], (int)x.y, acc);
	acc = __dp4a((int)w[2], (int)x.z, acc);
	return __dp4a((int)w[3], (int)x.w, acc);
}
static __device__ __forceinline__ int ones16(const uint4 &x, int acc) {
	acc = __dp4a(0x01010101, (int)x.x, acc);
	acc = __dp4a(0x01010101, (int)x.y, acc);
	acc = __dp4a(0x01010101, (int)x.z, acc);
	return __dp4a(0x01010101, (int)x.w, acc);
}

// Each streaming format S has QK and BYTES (as the block format's), ONE_SCALE (both runs in
// one activation block), a register type W, and
//   runs(l, a0, a1)    lane l's two runs of 16 elements in a step
//   ok(w)              whether the weights at w can take this path
//   load(step, l)      lane l's weights of the step at step (its bytes)
//   dot(wv, xa, xb, dxa, dxb)
//                      their product with the int8 activations of the runs (xa, xb) and
//                      their block scales.

// nibbles splits the 16 quant bytes q of a 32-element block into its elements 0..15 (lo)
// and 16..31 (hi).
static __device__ __forceinline__ void nibbles(const u32 (&q)[4], u32 (&lo)[4], u32 (&hi)[4]) {
#pragma unroll
	for (int i = 0; i < 4; i++) lo[i] = q[i] & 0x0F0F0F0F, hi[i] = (q[i] >> 4) & 0x0F0F0F0F;
}

// add_high sets bit 4 of the bytes of lo and hi from bits 0..15 and 16..31 of qh (Q5_0, Q5_1).
static __device__ __forceinline__ void add_high(u32 qh, u32 (&lo)[4], u32 (&hi)[4]) {
#pragma unroll
	for (int i = 0; i < 4; i++) lo[i] |= spread4(qh >> (4 * i)), hi[i] |= spread4(qh >> (16 + 4 * i));
}

// Q4_0: lane l takes block l of the step, quants at 18l+2 (lo nibbles run a0, hi a1).
struct Q4_0S {
	enum { QK = 32, BYTES = 18, ONE_SCALE = 1 };
	struct W {
		u32 q[4];
		float d;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) { a0 = 32 * l, a1 = a0 + 16; }
	static __device__ __forceinline__ bool ok(const u8 *) { return true; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		W v;
		const u8 *b = s + 18 * l;
		ld_a2<1>(b + 2, v.q);
		v.d = half_at(b);
		return v;
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float) {
		u32 lo[4], hi[4];
		nibbles(v.q, lo, hi);
		const int s = dot16(hi, xb, dot16(lo, xa, 0));
		const int n = ones16(xb, ones16(xa, 0));
		return v.d * dxa * i2f(s - 8 * n);
	}
};

// Q4_1: lane l takes block l of the step, quants at 20l+4.
struct Q4_1S {
	enum { QK = 32, BYTES = 20, ONE_SCALE = 1 };
	struct W {
		u32 q[4];
		float d, m;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) { a0 = 32 * l, a1 = a0 + 16; }
	static __device__ __forceinline__ bool ok(const u8 *) { return true; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		W v;
		const u8 *b = s + 20 * l;
		ld_a2<1>(b + 4, v.q);
		v.d = half_at(b), v.m = half_at(b + 2);
		return v;
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float) {
		u32 lo[4], hi[4];
		nibbles(v.q, lo, hi);
		const int s = dot16(hi, xb, dot16(lo, xa, 0)), n = ones16(xb, ones16(xa, 0));
		return dxa * (v.d * i2f(s) + v.m * i2f(n));
	}
};

// Q5_0: lane l takes block l of the step: fifth bits at 22l+2, quants at 22l+6.
struct Q5_0S {
	enum { QK = 32, BYTES = 22, ONE_SCALE = 1 };
	struct W {
		u32 q[4], qh;
		float d;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) { a0 = 32 * l, a1 = a0 + 16; }
	static __device__ __forceinline__ bool ok(const u8 *) { return true; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		W v;
		const u8 *b = s + 22 * l;
		ld_a2<1>(b + 6, v.q);
		v.qh = u32_at(b + 2);
		v.d = half_at(b);
		return v;
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float) {
		u32 lo[4], hi[4];
		nibbles(v.q, lo, hi);
		add_high(v.qh, lo, hi);
		const int s = dot16(hi, xb, dot16(lo, xa, 0)), n = ones16(xb, ones16(xa, 0));
		return v.d * dxa * i2f(s - 16 * n);
	}
};

// Q5_1: lane l takes block l of the step: fifth bits at 24l+4, quants at 24l+8.
struct Q5_1S {
	enum { QK = 32, BYTES = 24, ONE_SCALE = 1 };
	struct W {
		u32 q[4], qh;
		float d, m;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) { a0 = 32 * l, a1 = a0 + 16; }
	static __device__ __forceinline__ bool ok(const u8 *w) { return ((size_t)w & 3) == 0; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		W v;
		const u8 *b = s + 24 * l;
		ld_a2<1>(b + 8, v.q);
		v.qh = __ldg((const u32 *)(b + 4));
		v.d = half_at(b), v.m = half_at(b + 2);
		return v;
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float) {
		u32 lo[4], hi[4];
		nibbles(v.q, lo, hi);
		add_high(v.qh, lo, hi);
		const int s = dot16(hi, xb, dot16(lo, xa, 0)), n = ones16(xb, ones16(xa, 0));
		return dxa * (v.d * i2f(s) + v.m * i2f(n));
	}
};

// Q8_0: lane l takes block l of the step, quants at 34l+2.
struct Q8_0S {
	enum { QK = 32, BYTES = 34, ONE_SCALE = 1 };
	struct W {
		u32 q[8];
		float d;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) { a0 = 32 * l, a1 = a0 + 16; }
	static __device__ __forceinline__ bool ok(const u8 *) { return true; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		W v;
		const u8 *b = s + 34 * l;
		ld_a2<2>(b + 2, v.q);
		v.d = half_at(b);
		return v;
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float) {
		const u32 q0[4] = {v.q[0], v.q[1], v.q[2], v.q[3]}, q1[4] = {v.q[4], v.q[5], v.q[6], v.q[7]};
		return v.d * dxa * i2f(dot16(q1, xb, dot16(q0, xa, 0)));
	}
};

// k4_scales returns the 6-bit scales (scp) and mins (mp) of sub-blocks 2c and 2c+1 of a
// Q4_K or Q5_K super-block as byte pairs (Q4_KW::vdot2), from its first 16 bytes h.
static __device__ __forceinline__ void k4_scales(const uint4 &h, int c, u32 &scp, u32 &mp) {
	const u32 sh = 16 * (c & 1); // u16 k of the scale bytes is h.y, h.z, h.w's halves
	const u32 sA = h.y >> sh, sB = h.z >> sh, sC = h.w >> sh;
	if (c < 2) {
		scp = sA & 0x3f3f;
		mp = sB & 0x3f3f;
	} else {
		scp = (sC & 0x0f0f) | ((sA & 0xc0c0) >> 2);
		mp = ((sC >> 4) & 0x0f0f) | ((sB & 0xc0c0) >> 2);
	}
}

// k4_dot is the dot of Q4_K and Q5_K: lo, hi the quants of runs a0 (sub-block 2c) and a1
// (sub-block 2c+1), h the super-block's first 16 bytes.
static __device__ __forceinline__ float k4_dot(const uint4 &h, int c, const u32 (&lo)[4], const u32 (&hi)[4],
                                               const uint4 &xa, const uint4 &xb, float dxa, float dxb) {
	u32 scp, mp;
	k4_scales(h, c, scp, mp);
	const int sa = dot16(lo, xa, 0), sb = dot16(hi, xb, 0);
	const int na = ones16(xa, 0), nb = ones16(xb, 0);
	const float d = __half2float(__ushort_as_half((u16)h.x)), dmin = __half2float(__ushort_as_half((u16)(h.x >> 16)));
	// Integer products, then exact conversions without I2F (see i2f).
	return dxa * (d * i2f((int)(scp & 0xFF) * sa) - dmin * i2f((int)(mp & 0xFF) * na)) +
	       dxb * (d * i2f((int)(scp >> 8) * sb) - dmin * i2f((int)(mp >> 8) * nb));
}

// Q4_K: lane l takes the 16 quant bytes qs[16p..] (p = l%8) of super-block l/8: elements
// 16(p%2).. of sub-blocks 2c (lo nibbles) and 2c+1 (hi nibbles), c = p/2. Super-blocks
// are 144 bytes: 16-byte aligned when the weights are, so the quants take one load and
// the header (d, dmin, 12 scale bytes) another, shared by the super-block's 8 lanes.
struct Q4_KS {
	enum { QK = 256, BYTES = 144, ONE_SCALE = 0 };
	struct W {
		uint4 h, q;
		int c;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) {
		const int p = l % 8;
		a0 = 256 * (l / 8) + 64 * (p / 2) + 16 * (p % 2), a1 = a0 + 32;
	}
	static __device__ __forceinline__ bool ok(const u8 *w) { return ((size_t)w & 15) == 0; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		const uint4 *b = (const uint4 *)(s + 144 * (l / 8));
		return W{__ldg(b), __ldg(b + 1 + l % 8), (l % 8) / 2};
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float dxb) {
		const u32 q[4] = {v.q.x, v.q.y, v.q.z, v.q.w};
		u32 lo[4], hi[4];
		nibbles(q, lo, hi);
		return k4_dot(v.h, v.c, lo, hi, xa, xb, dxa, dxb);
	}
};

// Q5_K: as Q4_K, with the fifth bits in qh[32] at 16: those of elements 16(p%2).. are the
// aligned unit qh[16(p%2)..], bits 2c and 2c+1. Super-blocks are 176 bytes, aligned too.
struct Q5_KS {
	enum { QK = 256, BYTES = 176, ONE_SCALE = 0 };
	struct W {
		uint4 h, qh, q;
		int c;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) { Q4_KS::runs(l, a0, a1); }
	static __device__ __forceinline__ bool ok(const u8 *w) { return ((size_t)w & 15) == 0; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		const uint4 *b = (const uint4 *)(s + 176 * (l / 8));
		const int p = l % 8;
		return W{__ldg(b), __ldg(b + 1 + p % 2), __ldg(b + 3 + p), p / 2};
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float dxb) {
		const u32 q[4] = {v.q.x, v.q.y, v.q.z, v.q.w}, qh[4] = {v.qh.x, v.qh.y, v.qh.z, v.qh.w};
		const u32 s0 = 2 * v.c, s1 = s0 + 1;
		u32 lo[4], hi[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			lo[i] = (q[i] & 0x0F0F0F0F) | (((qh[i] >> s0) & 0x01010101) << 4);
			hi[i] = ((q[i] >> 4) & 0x0F0F0F0F) | (((qh[i] >> s1) & 0x01010101) << 4);
		}
		return k4_dot(v.h, v.c, lo, hi, xa, xb, dxa, dxb);
	}
};

// Q2_K: lane l takes the 16 quant bytes qs[16t..] (t = p/2, p = l%8) of super-block
// l/8 and of them the 2-bit fields j and j+1 (j = 2(p%2)): elements 128n + 32j + 16h..
// (run a0) and 128n + 32(j+1) + 16h.. (a1), n = t/2, h = t%2. 84-byte super-blocks.
struct Q2_KS {
	enum { QK = 256, BYTES = 84, ONE_SCALE = 0 };
	struct W {
		u32 q[4];
		int sc0, sc1, j;
		float d, dmin;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) {
		const int p = l % 8, t = p / 2;
		a0 = 256 * (l / 8) + 128 * (t / 2) + 64 * (p % 2) + 16 * (t % 2), a1 = a0 + 32;
	}
	static __device__ __forceinline__ bool ok(const u8 *) { return true; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		const int p = l % 8, t = p / 2, n = t / 2, h = t % 2, j = 2 * (p % 2);
		const u8 *b = s + 84 * (l / 8);
		W v;
		ld_a2<1>(b + 16 + 16 * t, v.q);
		v.sc0 = b[8 * n + 2 * j + h], v.sc1 = b[8 * n + 2 * j + 2 + h], v.j = j;
		v.d = half_at(b + 80), v.dmin = half_at(b + 82);
		return v;
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float dxb) {
		const u32 s0 = 2 * v.j, s1 = s0 + 2;
		u32 w0[4], w1[4];
#pragma unroll
		for (int i = 0; i < 4; i++) w0[i] = (v.q[i] >> s0) & 0x03030303, w1[i] = (v.q[i] >> s1) & 0x03030303;
		const int t0 = dot16(w0, xa, 0), t1 = dot16(w1, xb, 0), n0 = ones16(xa, 0), n1 = ones16(xb, 0);
		return dxa * (v.d * i2f((v.sc0 & 0xF) * t0) - v.dmin * i2f((v.sc0 >> 4) * n0)) +
		       dxb * (v.d * i2f((v.sc1 & 0xF) * t1) - v.dmin * i2f((v.sc1 >> 4) * n1));
	}
};

// q3k_scale is the 6-bit scale (less 32) of sub-block is (0..15) of a Q3_K super-block
// whose 12 packed scale bytes are at s.
static __device__ __forceinline__ int q3k_scale(const u8 *s, int is) {
	const int grp = is / 4, k = is % 4;
	const int low = s[(grp & 1) ? 4 + k : k];
	return ((grp < 2 ? low & 0xF : low >> 4) | (((s[8 + k] >> (2 * grp)) & 3) << 4)) - 32;
}

// Q3_K: lane l takes elements as Q2_K's (its low 2 bits, from qs at 32), with their
// high bits from hmask[16h..] (bits 4n+j and 4n+j+1). 110-byte super-blocks.
struct Q3_KS {
	enum { QK = 256, BYTES = 110, ONE_SCALE = 0 };
	struct W {
		u32 q[4], hm[4];
		int sc0, sc1, j, n;
		float d;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) { Q2_KS::runs(l, a0, a1); }
	static __device__ __forceinline__ bool ok(const u8 *) { return true; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		const int p = l % 8, t = p / 2, n = t / 2, h = t % 2, j = 2 * (p % 2);
		const u8 *b = s + 110 * (l / 8);
		W v;
		ld_a2<1>(b + 32 + 16 * t, v.q);
		ld_a2<1>(b + 16 * h, v.hm);
		v.sc0 = q3k_scale(b + 96, 8 * n + 2 * j + h), v.sc1 = q3k_scale(b + 96, 8 * n + 2 * j + 2 + h);
		v.j = j, v.n = n;
		v.d = half_at(b + 108);
		return v;
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float dxb) {
		const u32 s0 = 2 * v.j, s1 = s0 + 2, h0 = 4 * v.n + v.j, h1 = h0 + 1;
		u32 w0[4], w1[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			w0[i] = ((v.q[i] >> s0) & 0x03030303) | (((v.hm[i] >> h0) & 0x01010101) << 2);
			w1[i] = ((v.q[i] >> s1) & 0x03030303) | (((v.hm[i] >> h1) & 0x01010101) << 2);
		}
		const int t0 = dot16(w0, xa, 0) - 4 * ones16(xa, 0), t1 = dot16(w1, xb, 0) - 4 * ones16(xb, 0);
		return v.d * (dxa * i2f(v.sc0) * i2f(t0) + dxb * i2f(v.sc1) * i2f(t1));
	}
};

// Q6_K: lane l takes the 16 bytes ql[16p..] (p = l%8) of super-block l/8, and the 16
// bytes of qh with their high bits: elements 128n + 32k + 16(p%2).. for k = kb (lo
// nibbles) and kb+2 (hi nibbles), n = p/4, kb = (p/2)%2. Super-blocks are 210 bytes, so
// both go through ld_a2.
struct Q6_KS {
	enum { QK = 256, BYTES = 210, ONE_SCALE = 0 };
	struct W {
		u32 ql[4], qh[4];
		int sc0, sc1, kb;
		float d;
	};
	static __device__ __forceinline__ void runs(int l, int &a0, int &a1) {
		const int p = l % 8;
		a0 = 256 * (l / 8) + 128 * (p / 4) + 32 * ((p / 2) % 2) + 16 * (p % 2), a1 = a0 + 64;
	}
	static __device__ __forceinline__ bool ok(const u8 *) { return true; }
	static __device__ __forceinline__ W load(const u8 *s, int l) {
		const int p = l % 8, n = p / 4, kb = (p / 2) % 2, h = p % 2;
		const u8 *b = s + 210 * (l / 8);
		W v;
		ld_a2<1>(b + 16 * p, v.ql);
		ld_a2<1>(b + 128 + 32 * n + 16 * h, v.qh);
		const u8 *sc = b + 192 + 8 * n + h + 2 * kb;
		v.sc0 = (signed char)sc[0], v.sc1 = (signed char)sc[4], v.kb = kb;
		v.d = half_at(b + 208);
		return v;
	}
	static __device__ __forceinline__ float dot(const W &v, const uint4 &xa, const uint4 &xb, float dxa, float dxb) {
		const u32 s0 = 2 * v.kb, s1 = s0 + 4;
		u32 w0[4], w1[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			w0[i] = (v.ql[i] & 0x0F0F0F0F) | (((v.qh[i] >> s0) & 0x03030303) << 4);
			w1[i] = ((v.ql[i] >> 4) & 0x0F0F0F0F) | (((v.qh[i] >> s1) & 0x03030303) << 4);
		}
		const int t0 = dot16(w0, xa, 0) - 32 * ones16(xa, 0), t1 = dot16(w1, xb, 0) - 32 * ones16(xb, 0);
		return v.d * (dxa * i2f(v.sc0) * i2f(t0) + dxb * i2f(v.sc1) * i2f(t1));
	}
};

// StreamOf<T>::type is T's streaming format when StreamOf<T>::value; the formats without
// one take mv_q8 only.
template <class T>
struct StreamOf {
	enum { value = 0 };
	typedef void type;
};
#define STREAM_OF(T, S) \
	template <> \
	struct StreamOf<T> { \
		enum { value = 1 }; \
		typedef S type; \
	};
STREAM_OF(Q4_0W, Q4_0S)
STREAM_OF(Q4_1W, Q4_1S)
STREAM_OF(Q5_0W, Q5_0S)
STREAM_OF(Q5_1W, Q5_1S)
STREAM_OF(Q8_0W, Q8_0S)
STREAM_OF(Q2_KW, Q2_KS)
STREAM_OF(Q3_KW, Q3_KS)
STREAM_OF(Q4_KW, Q4_KS)
STREAM_OF(Q5_KW, Q5_KS)
STREAM_OF(Q6_KW, Q6_KS)

// mv_stream is mv_q8 for a streaming format S (arguments as mv_q8's): warp w takes the
// steps w, w+MV_WARPS, ... of the block's R rows.
template <class S, int NC, int R, bool BIAS = false>
static __device__ void mv_stream(float *__restrict__ dst, float *add, const u8 *__restrict__ w,
                                 const signed char *__restrict__ xq, const float *__restrict__ xd, int rows, int cols,
                                 int n, int blk) {
	const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
	const int row0 = blk * R, nr = min(R, rows - row0);
	const int c0 = blockIdx.y * NC, nc = min(NC, n - c0);
	xq += (size_t)c0 * cols;
	xd += (size_t)c0 * (cols / 32);
	dst += (size_t)c0 * rows;
	const size_t rowBytes = (size_t)(cols / S::QK) * S::BYTES;
	const u8 *wr = w + (size_t)row0 * rowBytes;
	int a0, a1;
	S::runs(lane, a0, a1);
	float acc[R][NC];
#pragma unroll
	for (int r = 0; r < R; r++)
#pragma unroll
		for (int c = 0; c < NC; c++) acc[r][c] = 0.0f;
	// step adds the products of the step at e0 with the weights wv loaded for it.
	auto step = [&](int e0, const typename S::W (&wv)[R]) {
		uint4 xa[NC], xb[NC];
		float dxa[NC], dxb[NC];
#pragma unroll
		for (int c = 0; c < NC; c++) {
			const int cc = min(c, nc - 1); // past the last row: reload it, discard below
			const signed char *xc = xq + (size_t)cc * cols + e0;
			const float *dc = xd + (size_t)cc * (cols / 32) + e0 / 32;
			xa[c] = __ldg((const uint4 *)(xc + a0));
			xb[c] = __ldg((const uint4 *)(xc + a1));
			dxa[c] = __ldg(dc + a0 / 32);
			dxb[c] = S::ONE_SCALE ? dxa[c] : __ldg(dc + a1 / 32);
		}
#pragma unroll
		for (int r = 0; r < R; r++)
#pragma unroll
			for (int c = 0; c < NC; c++) acc[r][c] += S::dot(wv[r], xa[c], xb[c], dxa[c], dxb[c]);
	};
	// The weights do not depend on the kernel ahead (pdl.cuh): the first step's are
	// requested before the wait, so that they stream while that kernel finishes.
	const int first = 1024 * warp;
	typename S::W w0[R];
	const bool has = first + a0 < cols;
	if (has) {
#pragma unroll
		for (int r = 0; r < R; r++)
			w0[r] = S::load(wr + min(r, nr - 1) * rowBytes + (size_t)(first / S::QK) * S::BYTES, lane);
	}
	pdl_wait();
	if (has) step(first, w0);
#pragma unroll (kStreamUnroll)
	for (int e0 = first + 1024 * MV_WARPS; e0 < cols; e0 += 1024 * MV_WARPS) {
		if (e0 + a0 < cols) {
			typename S::W wv[R];
#pragma unroll
			for (int r = 0; r < R; r++)
				wv[r] = S::load(wr + min(r, nr - 1) * rowBytes + (size_t)(e0 / S::QK) * S::BYTES, lane);
			step(e0, wv);
		}
	}
	block_reduce<R, NC, BIAS>(acc, dst, add, rows, row0, nr, nc);
}

// mv_any is mv_stream for the formats and weights that can take it, else mv_q8.
// The caller has not waited for the kernel ahead (pdl_wait): mv_stream waits after
// requesting its first weights, mv_q8 first thing.
template <class T, int NC, int R, bool BIAS = false>
static __device__ __forceinline__ void mv_any(float *__restrict__ dst, float *add, const u8 *__restrict__ w,
                                              const signed char *__restrict__ xq, const float *__restrict__ xd,
                                              int rows, int cols, int n, int blk) {
	typedef typename StreamOf<T>::type S;
	if constexpr (StreamOf<T>::value) {
		if (S::ok(w)) {
			mv_stream<S, NC, R, BIAS>(dst, add, w, xq, xd, rows, cols, n, blk);
			return;
		}
	}
	pdl_wait();
	mv_q8<T, NC, R, BIAS>(dst, add, w, xq, xd, rows, cols, n, blk);
}

// load8 reads 8 consecutive weights at element e (a multiple of 8) with 16-byte loads.
static __device__ __forceinline__ void load8(const float *p, int e, float4 &a, float4 &b) {
	a = *(const float4 *)(p + e);
	b = *(const float4 *)(p + e + 4);
}
static __device__ __forceinline__ void load8(const __half *p, int e, float4 &a, float4 &b) {
	const uint4 u = *(const uint4 *)(p + e);
	const float2 f0 = __half22float2(*(const __half2 *)&u.x), f1 = __half22float2(*(const __half2 *)&u.y);
	const float2 f2 = __half22float2(*(const __half2 *)&u.z), f3 = __half22float2(*(const __half2 *)&u.w);
	a = make_float4(f0.x, f0.y, f1.x, f1.y);
	b = make_float4(f2.x, f2.y, f3.x, f3.y);
}

static __device__ __forceinline__ float load1(const float *p, int e) { return p[e]; }
static __device__ __forceinline__ float load1(const __half *p, int e) { return __half2float(p[e]); }
static __device__ __forceinline__ float load1(const u8 *p, int e) { return BF16W::elem(p, e); }

// mv_float handles F32, F16 and BF16 weights of any width, one row per block: lane l of
// warp w takes elements 8l..8l+7 of chunks w, w+MV_WARPS, ... when VEC and cols % 8 == 0,
// else single elements (still coalesced). blk is the block's row; add as in mv_q8.
template <typename W, int NC, bool VEC, bool BIAS = false>
static __device__ void mv_float(float *__restrict__ dst, float *add, const W *__restrict__ w,
                                const float *__restrict__ x, int rows, int cols, int n, int blk) {
	const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
	const int row0 = blk;
	const int c0 = blockIdx.y * NC, nc = min(NC, n - c0);
	x += (size_t)c0 * cols;
	dst += (size_t)c0 * rows;
	const W *wr = w + (size_t)row0 * cols * (sizeof(W) == 1 ? 2 : 1); // bf16 rows are bytes
	float acc[1][NC];
#pragma unroll
	for (int c = 0; c < NC; c++) acc[0][c] = 0.0f;
	if constexpr (VEC) {
		if (cols % 8 == 0) {
#pragma unroll 4
			for (int e = 256 * warp + 8 * lane; e < cols; e += 256 * MV_WARPS) {
				float4 a, b;
				load8(wr, e, a, b);
#pragma unroll
				for (int c = 0; c < NC; c++) {
					if (c >= nc) break;
					const float4 u = *(const float4 *)(x + (size_t)c * cols + e);
					const float4 v = *(const float4 *)(x + (size_t)c * cols + e + 4);
					acc[0][c] += a.x * u.x + a.y * u.y + a.z * u.z + a.w * u.w;
					acc[0][c] += b.x * v.x + b.y * v.y + b.z * v.z + b.w * v.w;
				}
			}
			block_reduce<1, NC, BIAS>(acc, dst, add, rows, row0, 1, nc);
			return;
		}
	}
	for (int e = 32 * warp + lane; e < cols; e += 32 * MV_WARPS) {
		const float a = load1(wr, e);
#pragma unroll
		for (int c = 0; c < NC; c++) {
			if (c >= nc) break;
			acc[0][c] += a * x[(size_t)c * cols + e];
		}
	}
	block_reduce<1, NC, BIAS>(acc, dst, add, rows, row0, 1, nc);
}

// ---- fused batch-1 mat-vecs: mv_fused_<type>, mv_fusedb_<type> ----
//
// One launch computes up to three mat-vecs of one activation row (q, k and v; gate and
// up): blocks [0, end0) take matrix 0, [end0, end1) matrix 1, the rest matrix 2, each
// block as in the single kernels. add, unless null, gets matrix 0's result added (the
// residual epilogue; the Go side uses it with one matrix only). mv_fusedb_<type> takes
// instead of add a bias for each matrix (MV_FUSEDB_ARGS: b0, b1, b2, one float a row, as
// qwen2's q, k and v have), added to its outputs.
#define MV_FUSED_ARGS \
	const u8 *w0, const u8 *w1, const u8 *w2, float *d0, float *d1, float *d2, float *add, int rows0, int rows1, \
		int rows2, int end0, int end1, int cols

#define MV_FUSEDB_ARGS \
	const u8 *w0, const u8 *w1, const u8 *w2, float *d0, float *d1, float *d2, const float *b0, const float *b1, \
		const float *b2, int rows0, int rows1, int rows2, int end0, int end1, int cols

// MvSeg is one block's matrix: weights, output, bias (mv_fusedb; else null), rows, and the
// block's index within it.
struct MvSeg {
	const u8 *w;
	float *dst;
	const float *bias;
	int rows, blk;
};

static __device__ __forceinline__ MvSeg mv_seg(const u8 *w0, const u8 *w1, const u8 *w2, float *d0, float *d1,
                                               float *d2, const float *b0, const float *b1, const float *b2,
                                               int rows0, int rows1, int rows2, int end0, int end1) {
	const int b = blockIdx.x;
	if (b < end0) return MvSeg{w0, d0, b0, rows0, b};
	if (b < end1) return MvSeg{w1, d1, b1, rows1, b - end0};
	return MvSeg{w2, d2, b2, rows2, b - end1};
}

// Quantized weights, fused: mv_fused_<type>(MV_FUSED_ARGS, xq, xd) and
// mv_fusedb_<type>(MV_FUSEDB_ARGS, xq, xd), MV_ROWS_1 rows a block.
#define MV_FUSED_Q8_ENTRY(name) \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP, MV_MINB_##name) \
	    mv_fused_##name(MV_FUSED_ARGS, const signed char *xq, const float *xd) { \
		pdl_trigger(); \
		const MvSeg s = mv_seg(w0, w1, w2, d0, d1, d2, nullptr, nullptr, nullptr, rows0, rows1, rows2, end0, end1); \
		mv_any<T_##name, 1, MV_ROWS_1>(s.dst, add, s.w, xq, xd, s.rows, cols, 1, s.blk); \
	} \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP, MV_MINB_##name) \
	    mv_fusedb_##name(MV_FUSEDB_ARGS, const signed char *xq, const float *xd) { \
		pdl_trigger(); \
		const MvSeg s = mv_seg(w0, w1, w2, d0, d1, d2, b0, b1, b2, rows0, rows1, rows2, end0, end1); \
		mv_any<T_##name, 1, MV_ROWS_1, true>(s.dst, (float *)s.bias, s.w, xq, xd, s.rows, cols, 1, s.blk); \
	}

// ---- entry points: mv_<type>_<NC> ----

// Quantized weights: mv_<type>_<NC>(dst, w, xq, xd, rows, cols, n), MV_ROWS_<NC> rows a block.
#define MV_Q8_ARGS float *dst, const u8 *w, const signed char *xq, const float *xd, int rows, int cols, int n
#define MV_Q8_ENTRY(name, NC, R, MINB) \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP, MINB) mv_##name##_##NC(MV_Q8_ARGS) { \
		pdl_trigger(); \
		mv_any<T_##name, NC, R>(dst, nullptr, w, xq, xd, rows, cols, n, blockIdx.x); \
	}
#define MV_QUANT(name, T) \
	typedef T T_##name; \
	MV_Q8_ENTRY(name, 1, MV_ROWS_1, MV_MINB_##name) MV_Q8_ENTRY(name, 2, MV_ROWS_2, MV_MINB_##name) \
	MV_Q8_ENTRY(name, 4, 1, 1) MV_Q8_ENTRY(name, 8, 1, 1) MV_FUSED_Q8_ENTRY(name)
// MV_MINB_<type>: the minimum blocks a SM of mv_<type>_1, _2, mv_fused_<type> and mv_fusedb_<type>.
// (The K-quant ones may be set on the command line: -DMV_MINB_q6_k=4, for benchmarks.)
#define MV_MINB_q4_0 MV_MIN_BLOCKS
#define MV_MINB_q4_1 MV_MIN_BLOCKS
#define MV_MINB_q5_0 1
#define MV_MINB_q5_1 1
#define MV_MINB_q8_0 MV_MIN_BLOCKS
#define MV_MINB_q2_k MV_MIN_BLOCKS
#ifndef MV_MINB_q3_k
#define MV_MINB_q3_k 4
#endif
#ifndef MV_MINB_q4_k
#define MV_MINB_q4_k MV_MIN_BLOCKS
#endif
#ifndef MV_MINB_q5_k
#define MV_MINB_q5_k MV_MIN_BLOCKS
#endif
#ifndef MV_MINB_q6_k
#define MV_MINB_q6_k 4
#endif
FOR_EACH_QUANT(MV_QUANT)

// Float weights: mv_<type>_<NC>(dst, w, x, rows, cols, n), one row a block.
#define MV_ARGS float *dst, const u8 *w, const float *x, int rows, int cols, int n
#define MV_ENTRY(name, NC, call) \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP) mv_##name##_##NC(MV_ARGS) { \
		pdl_start(); \
		call; \
	}
#define MV_NCS(name, call1, call2, call4, call8) \
	MV_ENTRY(name, 1, call1) MV_ENTRY(name, 2, call2) MV_ENTRY(name, 4, call4) MV_ENTRY(name, 8, call8)

#define MV_FLOAT(name, W, VEC) \
	MV_NCS(name, (mv_float<W, 1, VEC>(dst, nullptr, (const W *)w, x, rows, cols, n, blockIdx.x)), \
	       (mv_float<W, 2, VEC>(dst, nullptr, (const W *)w, x, rows, cols, n, blockIdx.x)), \
	       (mv_float<W, 4, VEC>(dst, nullptr, (const W *)w, x, rows, cols, n, blockIdx.x)), \
	       (mv_float<W, 8, VEC>(dst, nullptr, (const W *)w, x, rows, cols, n, blockIdx.x)))
MV_FLOAT(f32, float, true)
MV_FLOAT(f16, __half, true)
MV_FLOAT(bf16, u8, false)

// Float weights, fused: mv_fused_<type>(MV_FUSED_ARGS, x) and mv_fusedb_<type>(MV_FUSEDB_ARGS,
// x), one row a block.
#define MV_FUSED_FLOAT(name, W, VEC) \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP) mv_fused_##name(MV_FUSED_ARGS, const float *x) { \
		pdl_start(); \
		const MvSeg s = mv_seg(w0, w1, w2, d0, d1, d2, nullptr, nullptr, nullptr, rows0, rows1, rows2, end0, end1); \
		mv_float<W, 1, VEC>(s.dst, add, (const W *)s.w, x, s.rows, cols, 1, s.blk); \
	} \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP) mv_fusedb_##name(MV_FUSEDB_ARGS, const float *x) { \
		pdl_start(); \
		const MvSeg s = mv_seg(w0, w1, w2, d0, d1, d2, b0, b1, b2, rows0, rows1, rows2, end0, end1); \
		mv_float<W, 1, VEC, true>(s.dst, (float *)s.bias, (const W *)s.w, x, s.rows, cols, 1, s.blk); \
	}
MV_FUSED_FLOAT(f32, float, true)
MV_FUSED_FLOAT(f16, __half, true)
MV_FUSED_FLOAT(bf16, u8, false)
