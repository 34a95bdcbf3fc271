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
