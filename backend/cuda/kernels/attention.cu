// attention.cu: causal multi-head attention over a K/V cache with grouped K/V heads, by
// online softmax: scores are never stored beyond one tile of 32 keys.
//
// One block of ATT_WARPS warps per (query row, head, split). A split is a range of
// `chunk` cache rows; a decode step (few query rows) uses many splits so that the cache
// is read by the whole GPU, and attention_combine merges the splits' partial results
// (flash-decoding). In a tile, lane j scores key j (a 16-byte-load dot product with q
// held in shared memory); then the tile's probabilities are broadcast lane by lane while
// each lane accumulates its head dimensions of p·v. Warps take tiles in turn and are
// merged at the end.
#include "common.cuh"

#define ATT_WARPS 4
#define ATT_MAX_DIM 256 // head dimensions up to this
#define NEG_INF __int_as_float(0xff800000)

static __device__ __forceinline__ float load(const float *p) { return *p; }
static __device__ __forceinline__ float load(const __half *p) { return __half2float(*p); }

// load4 reads 4 consecutive elements (16- or 8-byte aligned) as floats.
static __device__ __forceinline__ float4 load4(const float *p) { return *(const float4 *)p; }
static __device__ __forceinline__ float4 load4(const __half *p) {
	const uint2 u = *(const uint2 *)p;
	const float2 a = __half22float2(*(const __half2 *)&u.x), b = __half22float2(*(const __half2 *)&u.y);
	return make_float4(a.x, a.y, b.x, b.y);
}

// dot returns q·k over hd elements; q is in shared memory.
static __device__ __forceinline__ float dot(const float *q, const float *k, int hd) {
	float s = 0.0f;
	if (hd % 4 == 0) {
#pragma unroll 4
		for (int d = 0; d < hd; d += 4) {
			const float4 a = *(const float4 *)(k + d);
			s += q[d] * a.x + q[d + 1] * a.y + q[d + 2] * a.z + q[d + 3] * a.w;
		}
	} else {
		for (int d = 0; d < hd; d++) s += q[d] * k[d];
	}
	return s;
}

static __device__ __forceinline__ float dot(const float *q, const __half *k, int hd) {
	float s = 0.0f;
	if (hd % 8 == 0) {
#pragma unroll 4
		for (int d = 0; d < hd; d += 8) {
			const uint4 u = *(const uint4 *)(k + d);
			const float2 a = __half22float2(*(const __half2 *)&u.x), b = __half22float2(*(const __half2 *)&u.y);
			const float2 c = __half22float2(*(const __half2 *)&u.z), e = __half22float2(*(const __half2 *)&u.w);
			s += q[d] * a.x + q[d + 1] * a.y + q[d + 2] * b.x + q[d + 3] * b.y;
			s += q[d + 4] * c.x + q[d + 5] * c.y + q[d + 6] * e.x + q[d + 7] * e.y;
		}
	} else {
		for (int d = 0; d < hd; d++) s += q[d] * __half2float(k[d]);
	}
	return s;
}

// dot128 is dot for hd = 128, fully unrolled so that a lane's key loads are all in
// flight at once (the same sums in the same order).
static __device__ __forceinline__ float dot128(const float *q, const float *k) {
	float s = 0.0f;
#pragma unroll
	for (int d = 0; d < 128; d += 4) {
		const float4 a = *(const float4 *)(k + d);
		s += q[d] * a.x + q[d + 1] * a.y + q[d + 2] * a.z + q[d + 3] * a.w;
	}
	return s;
}

static __device__ __forceinline__ float dot128(const float *q, const __half *k) {
	float s = 0.0f;
#pragma unroll
	for (int d = 0; d < 128; d += 8) {
		const uint4 u = *(const uint4 *)(k + d);
		const float2 a = __half22float2(*(const __half2 *)&u.x), b = __half22float2(*(const __half2 *)&u.y);
		const float2 c = __half22float2(*(const __half2 *)&u.z), e = __half22float2(*(const __half2 *)&u.w);
		s += q[d] * a.x + q[d + 1] * a.y + q[d + 2] * b.x + q[d + 3] * b.y;
		s += q[d + 4] * c.x + q[d + 5] * c.y + q[d + 6] * e.x + q[d + 7] * e.y;
	}
	return s;
}

// attend: dst, q (n, heads·hd) F32; k, v (ctx, kvHeads·hd) of KV; row i sees cache rows
// 0..pos[i]. grid (heads, n, splits), block ATT_WARPS·32. With one split the result goes
// to dst; otherwise block (i, h, s) writes {max, sum, unnormalised p·v[hd]} to
// part[((i·heads + h)·splits + s)·(hd+2) ...].
//
// HD128 is the path for hd = 128 (llama's): lane l accumulates dimensions 4l..4l+3 of
// p·v with one vector load per key, and a full tile's 32 keys are unrolled, so that a
// tile costs a few memory round trips rather than one per key (decode attention is
// latency-bound: a handful of warps per SM). The arithmetic and its order are those of
// the general path.
template <typename KV, bool HD128>
static __device__ void attend(float *dst, const float *q, const KV *k, const KV *v, const int *pos, int heads,
                              int kvHeads, int hd, float scale, int chunk, float *part) {
	__shared__ float qs[ATT_MAX_DIM];
	__shared__ float sm[ATT_WARPS], sl[ATT_WARPS];
	__shared__ float sacc[ATT_WARPS][ATT_MAX_DIM];
	const int h = blockIdx.x, i = blockIdx.y, s = blockIdx.z, splits = gridDim.z;
	const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
	const int kvh = h / (heads / kvHeads), kvStride = kvHeads * hd;
	const float *qr = q + (size_t)i * heads * hd + (size_t)h * hd;
	for (int d = threadIdx.x; d < hd; d += blockDim.x) qs[d] = qr[d] * scale;
	__syncthreads();
	const int begin = s * chunk, end = min(begin + chunk, pos[i] + 1);
	const KV *kh = k + (size_t)kvh * hd, *vh = v + (size_t)kvh * hd;

	float acc[ATT_MAX_DIM / WARP];
#pragma unroll
	for (int t = 0; t < ATT_MAX_DIM / WARP; t++) acc[t] = 0.0f;
	float m = NEG_INF, l = 0.0f;
	for (int t0 = begin + warp * WARP; t0 < end; t0 += ATT_WARPS * WARP) {
		const int j = t0 + lane;
		float sc = NEG_INF;
		if (j < end) {
			if constexpr (HD128) sc = dot128(qs, kh + (size_t)j * kvStride);
			else sc = dot(qs, kh + (size_t)j * kvStride, hd);
		}
		const float mn = fmaxf(m, warp_max(sc)); // finite: key t0 is in range
		const float c = expf(m - mn), p = j < end ? expf(sc - mn) : 0.0f;
		l = l * c + warp_sum(p);
#pragma unroll
		for (int t = 0; t < ATT_MAX_DIM / WARP; t++) acc[t] *= c;
		const int cnt = min(WARP, end - t0);
		const KV *vt = vh + (size_t)t0 * kvStride;
		if constexpr (HD128) {
			const KV *vl = vt + 4 * lane;
			if (cnt == WARP) {
#pragma unroll
				for (int jj = 0; jj < WARP; jj++) {
					const float pj = __shfl_sync(FULL_MASK, p, jj);
					const float4 a = load4(vl + (size_t)jj * kvStride);
					acc[0] += pj * a.x;
					acc[1] += pj * a.y;
					acc[2] += pj * a.z;
					acc[3] += pj * a.w;
				}
			} else {
#pragma unroll 8
				for (int jj = 0; jj < cnt; jj++) {
					const float pj = __shfl_sync(FULL_MASK, p, jj);
					const float4 a = load4(vl + (size_t)jj * kvStride);
					acc[0] += pj * a.x;
					acc[1] += pj * a.y;
					acc[2] += pj * a.z;
					acc[3] += pj * a.w;
				}
			}
			m = mn;
			continue;
		}
#pragma unroll 4
		for (int jj = 0; jj < cnt; jj++) {
			const float pj = __shfl_sync(FULL_MASK, p, jj);
#pragma unroll
			for (int t = 0; t < ATT_MAX_DIM / WARP; t++) {
				const int d = lane + WARP * t;
				if (d < hd) acc[t] += pj * load(vt + (size_t)jj * kvStride + d);
			}
		}
		m = mn;
	}

	if (lane == 0) {
		sm[warp] = m;
		sl[warp] = l;
	}
	if constexpr (HD128) {
#pragma unroll
		for (int t = 0; t < 4; t++) sacc[warp][4 * lane + t] = acc[t];
	} else {
#pragma unroll
		for (int t = 0; t < ATT_MAX_DIM / WARP; t++) {
			const int d = lane + WARP * t;
			if (d < hd) sacc[warp][d] = acc[t];
		}
	}
	__syncthreads();
	float mAll = NEG_INF;
	for (int w = 0; w < ATT_WARPS; w++) mAll = fmaxf(mAll, sm[w]);
	float f[ATT_WARPS], lAll = 0.0f;
	for (int w = 0; w < ATT_WARPS; w++) {
		f[w] = sl[w] > 0.0f ? expf(sm[w] - mAll) : 0.0f;
		lAll += sl[w] * f[w];
	}
	if (splits == 1) {
		float *dr = dst + (size_t)i * heads * hd + (size_t)h * hd;
		for (int d = threadIdx.x; d < hd; d += blockDim.x) {
			float o = 0.0f;
			for (int w = 0; w < ATT_WARPS; w++) o += sacc[w][d] * f[w];
			dr[d] = o / lAll;
		}
		return;
	}
	float *pr = part + (((size_t)i * heads + h) * splits + s) * (hd + 2);
	if (threadIdx.x == 0) {
		pr[0] = mAll;
		pr[1] = lAll;
	}
	for (int d = threadIdx.x; d < hd; d += blockDim.x) {
		float o = 0.0f;
		for (int w = 0; w < ATT_WARPS; w++) o += sacc[w][d] * f[w];
		pr[2 + d] = o;
	}
}

// ---- entry points ----

extern "C" __global__ void attention_f32(float *dst, const float *q, const float *k, const float *v, const int *pos,
                                         int heads, int kvHeads, int hd, float scale, int chunk, float *part) {
	if (hd == 128) attend<float, true>(dst, q, k, v, pos, heads, kvHeads, hd, scale, chunk, part);
	else attend<float, false>(dst, q, k, v, pos, heads, kvHeads, hd, scale, chunk, part);
}

extern "C" __global__ void attention_f16(float *dst, const float *q, const __half *k, const __half *v, const int *pos,
                                         int heads, int kvHeads, int hd, float scale, int chunk, float *part) {
	if (hd == 128) attend<__half, true>(dst, q, k, v, pos, heads, kvHeads, hd, scale, chunk, part);
	else attend<__half, false>(dst, q, k, v, pos, heads, kvHeads, hd, scale, chunk, part);
}

// attention_combine merges the splits of attend: dst = Σ_s e^(m_s−M)·acc_s / Σ_s e^(m_s−M)·l_s.
// grid (heads, n).
extern "C" __global__ void attention_combine(float *dst, const float *part, int heads, int hd, int splits) {
	const int h = blockIdx.x, i = blockIdx.y;
	const float *pr = part + ((size_t)i * heads + h) * splits * (hd + 2);
	float mAll = NEG_INF;
	for (int s = 0; s < splits; s++) mAll = fmaxf(mAll, pr[s * (hd + 2)]);
	float lAll = 0.0f;
	for (int s = 0; s < splits; s++) {
		const float l = pr[s * (hd + 2) + 1];
		if (l > 0.0f) lAll += l * expf(pr[s * (hd + 2)] - mAll);
	}
	float *dr = dst + (size_t)i * heads * hd + (size_t)h * hd;
	for (int d = threadIdx.x; d < hd; d += blockDim.x) {
		float o = 0.0f;
		for (int s = 0; s < splits; s++) {
			const float *ps = pr + s * (hd + 2);
			if (ps[1] > 0.0f) o += ps[2 + d] * expf(ps[0] - mAll);
		}
		dr[d] = o / lAll;
	}
}

// ---- prompt batches: flash attention on the tensor cores ----
//
// flash_attn_f16_hdN: causal grouped-query attention of a batch of query rows over an
// F16 cache, for head dimension N (64, 80, 96 or 128), FlashAttention-2 style. One block
// of FA_WARPS warps takes FA_ROWS query rows of one head; each warp owns 16 of them. The
// keys and values go through shared memory FA_KEYS rows at a time; the scores S = q·kᵀ
// and the products p·v run on mma.sync m16n8k16 (f16 inputs, f32 accumulators), with the
// softmax kept online per row in registers, so no score matrix is ever stored. q is
// rounded to f16 (as llama.cpp's flash attention does), the scale is applied to the f32
// scores, and the probabilities are rounded to f16 for p·v while their sum stays f32.
// Row i sees cache rows 0..pos[i]; rows past n are computed as fully masked and not
// written. grid (ceil(n / FA_ROWS), heads), block FA_WARPS·32.

#define FA_WARPS 4
#define FA_ROWS (16 * FA_WARPS)
#define FA_KEYS 64

// pack2 rounds (lo, hi) to a half2 in one 32-bit register, lo in the low half.
static __device__ __forceinline__ u32 pack2(float lo, float hi) {
	const __half2 h = __floats2half2_rn(lo, hi);
	return *(const u32 *)&h;
}

// mma16816 is c += a·b for one m16n8k16 tile: a row-major 16×16 f16 (4 registers), b
// column-major 16×8 f16 (2 registers), c 16×8 f32 (4 registers). Lane l holds rows
// l/4 and l/4+8, columns 2·(l%4) and 2·(l%4)+1 of c.
static __device__ __forceinline__ void mma16816(float c[4], const u32 a[4], u32 b0, u32 b1) {
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
	             "{%0,%1,%2,%3};"
	             : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int HD>
static __device__ void flash_attend(float *dst, const float *q, const __half *k, const __half *v, const int *pos,
                                    int n, int heads, int kvHeads, float scale) {
	constexpr int KS = HD + 8;      // row stride of ks in halves (bank-conflict-free fragment loads)
	constexpr int VS = FA_KEYS + 8; // row stride of vt
	__shared__ __align__(16) __half ks[FA_KEYS * KS]; // keys of the tile, row-major
	__shared__ __align__(16) __half vt[HD * VS];      // values of the tile, transposed
	__shared__ int blockLast;
	const int h = blockIdx.y, lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
	const int g = lane / 4, t = lane % 4;
	const int kvh = h / (heads / kvHeads), kvStride = kvHeads * HD;
	const int r0 = blockIdx.x * FA_ROWS + warp * 16 + g, r1 = r0 + 8;
	const int p0 = r0 < n ? pos[r0] : -1, p1 = r1 < n ? pos[r1] : -1;
	int warpLast = max(p0, p1);
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) warpLast = max(warpLast, __shfl_xor_sync(FULL_MASK, warpLast, o));
	if (threadIdx.x == 0) blockLast = -1;
	__syncthreads();
	if (lane == 0) atomicMax(&blockLast, warpLast);
	__syncthreads();
	const int keys = blockLast + 1;

	u32 qa[HD / 16][4]; // this warp's 16 query rows as mma A fragments
	{
		const float *q0 = q + (size_t)min(r0, n - 1) * heads * HD + (size_t)h * HD;
		const float *q1 = q + (size_t)min(r1, n - 1) * heads * HD + (size_t)h * HD;
#pragma unroll
		for (int kk = 0; kk < HD / 16; kk++) {
			const int c = kk * 16 + 2 * t;
			qa[kk][0] = pack2(q0[c], q0[c + 1]);
			qa[kk][1] = pack2(q1[c], q1[c + 1]);
			qa[kk][2] = pack2(q0[c + 8], q0[c + 9]);
			qa[kk][3] = pack2(q1[c + 8], q1[c + 9]);
		}
	}
	float o[HD / 8][4];
#pragma unroll
	for (int d = 0; d < HD / 8; d++) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
	float m0 = NEG_INF, m1 = NEG_INF, l0 = 0.0f, l1 = 0.0f;
	const __half *kh = k + (size_t)kvh * HD, *vh = v + (size_t)kvh * HD;

	for (int j0 = 0; j0 < keys; j0 += FA_KEYS) {
		__syncthreads(); // every warp is done with the previous tile
		for (int c = threadIdx.x; c < FA_KEYS * HD / 8; c += blockDim.x) {
			const int r = c / (HD / 8), d = c % (HD / 8) * 8;
			uint4 kx = make_uint4(0, 0, 0, 0), vx = kx;
			if (j0 + r < keys) {
				kx = *(const uint4 *)(kh + (size_t)(j0 + r) * kvStride + d);
				vx = *(const uint4 *)(vh + (size_t)(j0 + r) * kvStride + d);
			}
			*(uint4 *)(ks + r * KS + d) = kx;
			const __half *vv = (const __half *)&vx;
#pragma unroll
			for (int e = 0; e < 8; e++) vt[(d + e) * VS + r] = vv[e];
		}
		__syncthreads();
		if (j0 > warpLast) continue; // no key of this tile is visible to the warp's rows

		float s[FA_KEYS / 8][4];
#pragma unroll
		for (int nt = 0; nt < FA_KEYS / 8; nt++) {
			s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
			for (int kk = 0; kk < HD / 16; kk++) {
				const __half *kr = ks + (nt * 8 + g) * KS + kk * 16 + 2 * t;
				mma16816(s[nt], qa[kk], *(const u32 *)kr, *(const u32 *)(kr + 8));
			}
		}
		float mx0 = NEG_INF, mx1 = NEG_INF;
#pragma unroll
		for (int nt = 0; nt < FA_KEYS / 8; nt++) {
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const int j = j0 + nt * 8 + 2 * t + e;
				s[nt][e] = j <= p0 ? s[nt][e] * scale : NEG_INF;
				s[nt][2 + e] = j <= p1 ? s[nt][2 + e] * scale : NEG_INF;
				mx0 = fmaxf(mx0, s[nt][e]);
				mx1 = fmaxf(mx1, s[nt][2 + e]);
			}
		}
#pragma unroll
		for (int off = 1; off < 4; off <<= 1) {
			mx0 = fmaxf(mx0, __shfl_xor_sync(FULL_MASK, mx0, off));
			mx1 = fmaxf(mx1, __shfl_xor_sync(FULL_MASK, mx1, off));
		}
		const float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1);
		const float b0 = n0 == NEG_INF ? 0.0f : n0, b1 = n1 == NEG_INF ? 0.0f : n1; // no NaN from -inf - -inf
		const float c0 = expf(m0 - b0), c1 = expf(m1 - b1);
		float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
		for (int nt = 0; nt < FA_KEYS / 8; nt++) {
			s[nt][0] = expf(s[nt][0] - b0);
			s[nt][1] = expf(s[nt][1] - b0);
			s[nt][2] = expf(s[nt][2] - b1);
			s[nt][3] = expf(s[nt][3] - b1);
			sum0 += s[nt][0] + s[nt][1];
			sum1 += s[nt][2] + s[nt][3];
		}
#pragma unroll
		for (int off = 1; off < 4; off <<= 1) {
			sum0 += __shfl_xor_sync(FULL_MASK, sum0, off);
			sum1 += __shfl_xor_sync(FULL_MASK, sum1, off);
		}
		l0 = l0 * c0 + sum0;
		l1 = l1 * c1 + sum1;
		m0 = n0;
		m1 = n1;
#pragma unroll
		for (int d = 0; d < HD / 8; d++) {
			o[d][0] *= c0;
			o[d][1] *= c0;
			o[d][2] *= c1;
			o[d][3] *= c1;
		}
#pragma unroll
		for (int kk = 0; kk < FA_KEYS / 16; kk++) {
			// Two n8 score tiles side by side are one A fragment over 16 keys.
			const u32 pa[4] = {pack2(s[2 * kk][0], s[2 * kk][1]), pack2(s[2 * kk][2], s[2 * kk][3]),
			                   pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
			for (int d = 0; d < HD / 8; d++) {
				const __half *vr = vt + (d * 8 + g) * VS + kk * 16 + 2 * t;
				mma16816(o[d], pa, *(const u32 *)vr, *(const u32 *)(vr + 8));
			}
		}
	}

	const float i0 = l0 > 0.0f ? 1.0f / l0 : 0.0f, i1 = l1 > 0.0f ? 1.0f / l1 : 0.0f;
#pragma unroll
	for (int d = 0; d < HD / 8; d++) {
		const int c = d * 8 + 2 * t;
		if (r0 < n) *(float2 *)(dst + (size_t)r0 * heads * HD + (size_t)h * HD + c) = make_float2(o[d][0] * i0, o[d][1] * i0);
		if (r1 < n) *(float2 *)(dst + (size_t)r1 * heads * HD + (size_t)h * HD + c) = make_float2(o[d][2] * i1, o[d][3] * i1);
	}
}

#define FLASH_ENTRY(HD)                                                                                               \
	extern "C" __global__ void __launch_bounds__(FA_WARPS * WARP)                                                       \
	    flash_attn_f16_hd##HD(float *dst, const float *q, const __half *k, const __half *v, const int *pos, int n,     \
	                          int heads, int kvHeads, float scale) {                                                    \
		flash_attend<HD>(dst, q, k, v, pos, n, heads, kvHeads, scale);                                                \
	}
FLASH_ENTRY(64)
FLASH_ENTRY(80)
FLASH_ENTRY(96)
FLASH_ENTRY(128)
