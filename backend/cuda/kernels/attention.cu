// attention.cu: causal multi-head attention over a K/V cache with grouped K/V heads, by
// online softmax: scores are never stored beyond one tile of keys.
//
// Decode (few query rows, attention_*): one block of ATT_WARPS warps per (query row,
// head, split). The number of splits (gridDim.z) comes from the cache capacity, so that a
// recorded decode step stays valid as positions advance; inside, a row's keys 0..pos are
// divided among the splits·ATT_WARPS warps by its position (att_split), so that every
// split that has keys gets a fair share and the splits past the position exit before
// loading anything. A split that is not alone writes {max, sum, unnormalised p·v} to
// `part`, and the last split of a row and head to finish (an atomic counter, left at zero
// again) merges them all into dst (flash-decoding without a second kernel).
//
// attention_{f16,f32}_hdN (att_vec) read the cache coalesced: a key's N elements are
// split into 16-byte loads over LPK lanes, so a warp loads KPL whole keys per instruction
// and a tile's K and V rows are all in flight at once; the partial dot products are
// reduce-scattered over each key's lanes, leaving one key's score per lane. attention_f16
// and attention_f32 (att_generic) take any head dimension up to ATT_MAX_DIM: lane j
// scores key j of a tile of 32 with q in shared memory. attention_gqa_f16_hdN_gG
// (att_gqa, below) is att_vec for an F16 cache with blocks of G query heads of a K/V
// head, and can also be a batch-1 decode step's RoPE and cache store (fused).
#include "common.cuh"
#include "pdl.cuh"

#define ATT_WARPS 4
#define ATT_MAX_DIM 256    // head dimensions up to this
#define ATT_MAX_SPLITS 256 // maxSplits in attention.go
#define NEG_INF __int_as_float(0xff800000)

static __device__ __forceinline__ float load(const float *p) { return *p; }
static __device__ __forceinline__ float load(const __half *p) { return __half2float(*p); }

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

// att_range is one block's share of a row's keys: warp w takes keys
// begin + w·kw .. min(begin + (w+1)·kw, end); active is the number of splits with keys.
struct att_range {
	int begin, end, kw, active;
};

// att_split places block blockIdx.z of a row that sees keys 0..pos (at most ctx of them):
// the gridDim.z·ATT_WARPS warps take kw keys each, at least minKeys, a multiple of 8 up
// to a tile of 32 and a multiple of 32 beyond (no warp ends on a nearly empty tile). It
// reports whether the block has keys; a block without returns at once.
static __device__ __forceinline__ bool att_split(int pos, int ctx, int minKeys, att_range &r) {
	const int keys = min(pos + 1, ctx), warps = gridDim.z * ATT_WARPS;
	int kw = (keys + warps - 1) / warps;
	kw = kw <= WARP ? (kw + 7) & ~7 : (kw + WARP - 1) & ~(WARP - 1);
	r.kw = max(kw, minKeys);
	const int span = ATT_WARPS * r.kw;
	r.active = (keys + span - 1) / span;
	r.begin = blockIdx.z * span;
	r.end = min(r.begin + span, keys);
	return (int)blockIdx.z < r.active;
}

// att_smem is a decode block's shared memory: each warp's {max, sum, p·v[hd]}, and the
// merge of the splits in the last block.
struct att_smem {
	float m[ATT_WARPS], l[ATT_WARPS];
	float acc[ATT_WARPS][ATT_MAX_DIM];
	float w[ATT_MAX_SPLITS]; // a split's weight e^(m_s−M)
	float red[WARP];         // block reductions
	int last;
};

// block_max returns the maximum of v over the thread block in every thread (as block_sum).
static __device__ __forceinline__ float block_max(float v, float *scratch) {
	const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
	v = warp_max(v);
	if (lane == 0) scratch[warp] = v;
	__syncthreads();
	v = lane < (int)blockDim.x / WARP ? scratch[lane] : NEG_INF;
	v = warp_max(v);
	__syncthreads();
	return v;
}

// att_finish completes block (i, h, blockIdx.z) once every warp has put its {max, sum,
// p·v} in sh: the warps are merged; a lone split writes dst, else its partial result goes
// to part[((i·heads + h)·splits + s)·(hd+2) ...] and the last of the row and head's
// `active` splits to finish (count[i·heads + h], reset to zero by it) merges them:
// dst = Σ_s e^(m_s−M)·acc_s / Σ_s e^(m_s−M)·l_s.
static __device__ void att_finish(att_smem &sh, float *dst, float *part, int *count, int i, int h, int heads, int hd,
                                  int active) {
	__syncthreads();
	float mAll = NEG_INF;
	for (int w = 0; w < ATT_WARPS; w++) mAll = fmaxf(mAll, sh.m[w]);
	float f[ATT_WARPS], lAll = 0.0f;
	for (int w = 0; w < ATT_WARPS; w++) {
		f[w] = sh.l[w] > 0.0f ? expf(sh.m[w] - mAll) : 0.0f;
		lAll += sh.l[w] * f[w];
	}
	float *dr = dst + ((size_t)i * heads + h) * hd;
	if (active == 1) {
		for (int d = threadIdx.x; d < hd; d += blockDim.x) {
			float o = 0.0f;
			for (int w = 0; w < ATT_WARPS; w++) o += sh.acc[w][d] * f[w];
			dr[d] = o / lAll;
		}
		return;
	}
	const int stride = hd + 2;
	const float *pr0 = part + ((size_t)i * heads + h) * gridDim.z * stride;
	float *pr = part + (((size_t)i * heads + h) * gridDim.z + blockIdx.z) * stride;
	if (threadIdx.x == 0) {
		pr[0] = mAll;
		pr[1] = lAll;
	}
	for (int d = threadIdx.x; d < hd; d += blockDim.x) {
		float o = 0.0f;
		for (int w = 0; w < ATT_WARPS; w++) o += sh.acc[w][d] * f[w];
		pr[2 + d] = o;
	}
	__threadfence(); // the partial result is visible before the count says so
	__syncthreads();
	if (threadIdx.x == 0) sh.last = atomicAdd(count + i * heads + h, 1) == active - 1;
	__syncthreads();
	if (!sh.last) return;
	__threadfence();
	// The other splits' results are read through L2 (__ldcg): they were written by other SMs.
	float mx = NEG_INF;
	for (int s = threadIdx.x; s < active; s += blockDim.x) mx = fmaxf(mx, __ldcg(pr0 + s * stride));
	mx = block_max(mx, sh.red);
	float ls = 0.0f;
	for (int s = threadIdx.x; s < active; s += blockDim.x) {
		const float l = __ldcg(pr0 + s * stride + 1);
		const float w = l > 0.0f ? expf(__ldcg(pr0 + s * stride) - mx) : 0.0f;
		sh.w[s] = w;
		ls += l * w;
	}
	ls = block_sum(ls, sh.red); // its barrier also publishes sh.w
	for (int d = threadIdx.x; d < hd; d += blockDim.x) {
		float o = 0.0f;
#pragma unroll 4
		for (int s = 0; s < active; s++) o += sh.w[s] * __ldcg(pr0 + s * stride + 2 + d);
		dr[d] = o / ls;
	}
	if (threadIdx.x == 0) count[i * heads + h] = 0;
}

// att_generic: dst, q (n, heads·hd) F32; k, v (ctx, kvHeads·hd) of KV; row i sees cache
// rows 0..pos[i]. grid (heads, n, splits), block ATT_WARPS·32. In a tile of 32 keys lane j
// scores key j (a 16-byte-load dot product with q held in shared memory); then the
// tile's probabilities are broadcast lane by lane while each lane accumulates its head
// dimensions of p·v.
template <typename KV>
static __device__ void att_generic(float *dst, const float *q, const KV *k, const KV *v, const int *pos, int heads,
                                   int kvHeads, int hd, float scale, int ctx, int minKeys, float *part, int *count) {
	__shared__ float qs[ATT_MAX_DIM];
	__shared__ att_smem sh;
	const int h = blockIdx.x, i = blockIdx.y;
	att_range rg;
	if (!att_split(pos[i], ctx, minKeys, rg)) return;
	const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
	const int kvh = h / (heads / kvHeads), kvStride = kvHeads * hd;
	const float *qr = q + ((size_t)i * heads + h) * hd;
	for (int d = threadIdx.x; d < hd; d += blockDim.x) qs[d] = qr[d] * scale;
	__syncthreads();
	const int wb = rg.begin + warp * rg.kw, we = min(wb + rg.kw, rg.end);
	const KV *kh = k + (size_t)kvh * hd, *vh = v + (size_t)kvh * hd;

	float acc[ATT_MAX_DIM / WARP];
#pragma unroll
	for (int t = 0; t < ATT_MAX_DIM / WARP; t++) acc[t] = 0.0f;
	float m = NEG_INF, l = 0.0f;
	for (int t0 = wb; t0 < we; t0 += WARP) {
		const int j = t0 + lane;
		const float sc = j < we ? dot(qs, kh + (size_t)j * kvStride, hd) : NEG_INF;
		const float mn = fmaxf(m, warp_max(sc)); // finite: key t0 is in range
		const float c = expf(m - mn), p = j < we ? expf(sc - mn) : 0.0f;
		l = l * c + warp_sum(p);
#pragma unroll
		for (int t = 0; t < ATT_MAX_DIM / WARP; t++) acc[t] *= c;
		const int cnt = min(WARP, we - t0);
		const KV *vt = vh + (size_t)t0 * kvStride;
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
		sh.m[warp] = m;
		sh.l[warp] = l;
	}
#pragma unroll
	for (int t = 0; t < ATT_MAX_DIM / WARP; t++) {
		const int d = lane + WARP * t;
		if (d < hd) sh.acc[warp][d] = acc[t];
	}
	att_finish(sh, dst, part, count, i, h, heads, hd, rg.active);
}

// unpack widens the elements of one 16-byte load: 8 halves or 4 floats.
static __device__ __forceinline__ void unpack(uint4 u, float (&x)[8]) {
	const float2 a = __half22float2(*(const __half2 *)&u.x), b = __half22float2(*(const __half2 *)&u.y);
	const float2 c = __half22float2(*(const __half2 *)&u.z), e = __half22float2(*(const __half2 *)&u.w);
	x[0] = a.x, x[1] = a.y, x[2] = b.x, x[3] = b.y, x[4] = c.x, x[5] = c.y, x[6] = e.x, x[7] = e.y;
}
static __device__ __forceinline__ void unpack(uint4 u, float (&x)[4]) {
	x[0] = __uint_as_float(u.x), x[1] = __uint_as_float(u.y), x[2] = __uint_as_float(u.z), x[3] = __uint_as_float(u.w);
}

// reduce_scatter sums s[0..N) over the lanes of a group of 2·O (lanes differing in bits
// O, O/2, ... 1): each step halves the values a lane holds, keeping the upper half where
// its bit O is set and receiving its partner's share of it; once one value is left the
// rest is a plain butterfly. A group of L lanes starting with N ≤ L values ends with
// value (lane % L) / (L/N) of the original ones in s[0], summed over the group.
template <int N, int O, int S>
static __device__ __forceinline__ void reduce_scatter(float (&s)[S], int lane) {
	if constexpr (O >= 1) {
		if constexpr (N > 1) {
			const bool up = lane & O;
#pragma unroll
			for (int x = 0; x < N / 2; x++) {
				const float send = up ? s[x] : s[x + N / 2], keep = up ? s[x + N / 2] : s[x];
				s[x] = keep + __shfl_xor_sync(FULL_MASK, send, O);
			}
			reduce_scatter<N / 2, O / 2>(s, lane);
		} else {
			s[0] += __shfl_xor_sync(FULL_MASK, s[0], O);
			reduce_scatter<1, O / 2>(s, lane);
		}
	}
}

// att_vec is att_generic for head dimension HD with coalesced loads. A key's HD elements
// are E per 16-byte load over LPK lanes, so one load instruction of the warp covers KPL
// keys (lane group g = lane / LPK takes key r·KPL + g of load r); a tile is T = NL·KPL
// keys, NL loads of K and NL of V per lane, all issued before any is used. Lane
// (g, sub) ends the tile with the score of key (sub / DUP)·KPL + g (reduce_scatter) and
// accumulates p·v for dimensions sub·E .. sub·E+E-1 over its group's keys; the groups are
// summed at the end. q·scale stays in registers. NLM bounds NL (the registers a tile
// takes); with PF the next tile's loads are issued before the current one is used.
template <typename KV, int HD, int NLM = 16, bool PF = false>
static __device__ void att_vec(float *dst, const float *q, const KV *k, const KV *v, const int *pos, int heads,
                               int kvHeads, float scale, int ctx, int minKeys, float *part, int *count) {
	constexpr int E = 16 / sizeof(KV), LPK = HD / E, KPL = WARP / LPK;
	constexpr int NL = LPK < NLM ? LPK : NLM, DUP = LPK / NL, T = NL * KPL;
	static_assert(HD % E == 0 && LPK >= 2 && LPK <= WARP && (LPK & (LPK - 1)) == 0, "att_vec: head dimension");
	__shared__ att_smem sh;
	const int h = blockIdx.x, i = blockIdx.y;
	att_range rg;
	if (!att_split(pos[i], ctx, minKeys, rg)) return;
	const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, sub = lane % LPK, g = lane / LPK;
	const size_t kvStride = (size_t)kvHeads * HD;
	const int kvh = h / (heads / kvHeads);
	const KV *kh = k + (size_t)kvh * HD + sub * E, *vh = v + (size_t)kvh * HD + sub * E;
	const int wb = rg.begin + warp * rg.kw, we = min(wb + rg.kw, rg.end);

	float acc[E], m = NEG_INF, l = 0.0f;
#pragma unroll
	for (int e = 0; e < E; e++) acc[e] = 0.0f;
	if (wb < we) { // warp-uniform
		float qr[E];
		const float *qp = q + ((size_t)i * heads + h) * HD + sub * E;
#pragma unroll
		for (int e = 0; e < E; e += 4) {
			const float4 a = *(const float4 *)(qp + e);
			qr[e] = a.x * scale, qr[e + 1] = a.y * scale, qr[e + 2] = a.z * scale, qr[e + 3] = a.w * scale;
		}
		// load issues the loads of the tile at t0 (none past we: zeros).
		auto load = [&](int t0, uint4 (&kr)[NL], uint4 (&vr)[NL]) {
#pragma unroll
			for (int r = 0; r < NL; r++) {
				const int j = t0 + r * KPL + g;
				kr[r] = vr[r] = make_uint4(0, 0, 0, 0);
				if (j < we) {
					kr[r] = __ldg((const uint4 *)(kh + (size_t)j * kvStride));
					vr[r] = __ldg((const uint4 *)(vh + (size_t)j * kvStride));
				}
			}
		};
		uint4 kr[NL], vr[NL];
		load(wb, kr, vr);
		for (int t0 = wb; t0 < we; t0 += T) {
			uint4 kn[NL], vn[NL];
			if constexpr (PF) load(t0 + T, kn, vn); // the next tile's loads in flight meanwhile
			float sc[NL];
#pragma unroll
			for (int r = 0; r < NL; r++) {
				float x[E];
				unpack(kr[r], x);
				float s = 0.0f;
#pragma unroll
				for (int e = 0; e < E; e++) s += qr[e] * x[e];
				sc[r] = s;
			}
			reduce_scatter<NL, LPK / 2>(sc, lane);
			const bool in = t0 + (sub / DUP) * KPL + g < we;
			const float mn = fmaxf(m, warp_max(in ? sc[0] : NEG_INF)); // finite: key t0 is in range
			const float c = expf(m - mn), p = in ? expf(sc[0] - mn) : 0.0f;
			l = l * c + (sub % DUP == 0 ? p : 0.0f); // each key once
			m = mn;
#pragma unroll
			for (int e = 0; e < E; e++) acc[e] *= c;
#pragma unroll
			for (int r = 0; r < NL; r++) {
				const float pj = __shfl_sync(FULL_MASK, p, g * LPK + r * DUP);
				float x[E];
				unpack(vr[r], x);
#pragma unroll
				for (int e = 0; e < E; e++) acc[e] += pj * x[e];
			}
			if constexpr (PF) {
#pragma unroll
				for (int r = 0; r < NL; r++) kr[r] = kn[r], vr[r] = vn[r];
			} else if (t0 + T < we) {
				load(t0 + T, kr, vr);
			}
		}
	}
#pragma unroll
	for (int o = LPK; o < WARP; o <<= 1) {
#pragma unroll
		for (int e = 0; e < E; e++) acc[e] += __shfl_xor_sync(FULL_MASK, acc[e], o);
	}
	l = warp_sum(l);
	if (lane == 0) {
		sh.m[warp] = m;
		sh.l[warp] = l;
	}
	if (lane < LPK) {
#pragma unroll
		for (int e = 0; e < E; e++) sh.acc[warp][sub * E + e] = acc[e];
	}
	att_finish(sh, dst, part, count, i, h, heads, HD, rg.active);
}

// ---- entry points ----
//
// attention_{f32,f16}[_hdN](dst, q, k, v, pos, heads, kvHeads, hd, scale, ctx, minKeys,
// part, count): ctx is the cache's rows, minKeys the fewest keys a warp takes (att_split);
// part and count are needed only with more than one split (gridDim.z), count zeroed once.

#define ATT_PARAMS(KV)                                                                                               \
	float *dst, const float *q, const KV *k, const KV *v, const int *pos, int heads, int kvHeads, int hd, float scale, \
	    int ctx, int minKeys, float *part, int *count

extern "C" __global__ void __launch_bounds__(ATT_WARPS *WARP) attention_f32(ATT_PARAMS(float)) {
	att_generic<float>(dst, q, k, v, pos, heads, kvHeads, hd, scale, ctx, minKeys, part, count);
}

extern "C" __global__ void __launch_bounds__(ATT_WARPS *WARP) attention_f16(ATT_PARAMS(__half)) {
	att_generic<__half>(dst, q, k, v, pos, heads, kvHeads, hd, scale, ctx, minKeys, part, count);
}

// ATT_HD128_NL and ATT_HD128_PF are att_vec's NLM and PF for llama's head dimension
// (variants measured with nvcc -D).
#ifndef ATT_HD128_NL
#define ATT_HD128_NL 16
#endif
#ifndef ATT_HD128_PF
#define ATT_HD128_PF false
#endif

#define ATT_VEC(NAME, KV, ...)                                                                                        \
	extern "C" __global__ void __launch_bounds__(ATT_WARPS *WARP) NAME(ATT_PARAMS(KV)) {                             \
		att_vec<KV, __VA_ARGS__>(dst, q, k, v, pos, heads, kvHeads, scale, ctx, minKeys, part, count);                 \
	}
ATT_VEC(attention_f16_hd64, __half, 64)
ATT_VEC(attention_f16_hd128, __half, 128, ATT_HD128_NL, ATT_HD128_PF)
ATT_VEC(attention_f16_hd256, __half, 256)
ATT_VEC(attention_f32_hd64, float, 64)
ATT_VEC(attention_f32_hd128, float, 128)

// ---- decode by K/V head: attention_gqa_f16_hdN_gG ----
//
// att_gqa is att_vec for an F16 cache with one block per (K/V head, G of its query
// heads, query row, split): a warp loads a tile of K and V once and scores it for G
// query heads (llama 3 and qwen share a K/V head among 4 or more), so the cache is read
// once per K/V head rather than once per query head. q goes through shared memory
// (staged while the first tile's loads are in flight); NL loads a lane a tile.
//
// Fused (fused != 0, one query row): the kernel is also the decode step's RoPE of q and
// k and its cache store (rope2_f32 and set_rows2_f16 before it otherwise): q and the new
// row's k (kx, unrotated, (1, kvHeads·HD) F32) are rotated as rope_row does. The blocks
// holding key P = pos[0] (one per block of a K/V head's query heads) take it from shared
// memory rather than from the cache; the first of them stores the rotated k and v (vx)
// rounded to F16 in cache row P, and the last of them to have read k (kvCount) writes
// the rotated k back to kx. The block that finishes a head (att_gqa_finish) writes the
// rotated q back to q. Every value is computed as the separate kernels compute it, so
// the results are those of the unfused launches.

#ifndef ATT_GQA_NL1
#define ATT_GQA_NL1 8 // NL for G = 1 (16: 211 registers, 2 blocks an SM; 8: 127, 4)
#endif
#ifndef ATT_GQA_NL
#define ATT_GQA_NL 8 // NL for G > 1
#endif
#define ATT_GQA_MAX 4 // the most query heads a block serves
#define ATT_MERGE 8   // partial results a thread of the merging block loads at once

// att_gqa_smem is an att_gqa block's shared memory.
template <int HD, int G>
struct att_gqa_smem {
	float q[G][HD]; // the G heads' q, rotated when fused, unscaled
	float kf[HD];   // the new row's k, rotated (fused)
	__align__(16) __half kn[HD];
	__align__(16) __half vn[HD]; // the new row's k and v as the cache holds them (fused)
	float m[G][ATT_WARPS], l[G][ATT_WARPS];
	float acc[G][ATT_WARPS][HD];
	float w[G][ATT_MAX_SPLITS];
	float red[WARP];
	int last;
};

// att_rope rotates pair i of the head x (F32) at position p as rope_row does: o0 and o1
// are the new values of x[a] and x[b].
static __device__ __forceinline__ void att_rope(const float *x, int p, int i, const float *factors, int dims, float base,
                                                float scale, int neox, int &a, int &b, float &o0, float &o1) {
	const int half = dims / 2;
	const float thetaScale = powf(base, -2.0f / (float)dims);
	float theta = scale * (float)p * powf(thetaScale, (float)i);
	if (factors != 0) theta /= factors[i];
	const float c = cosf(theta), s = sinf(theta);
	a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
	const float x0 = x[a], x1 = x[b];
	o0 = x0 * c - x1 * s;
	o1 = x0 * s + x1 * c;
}

// att_gqa_finish is att_finish for the G heads h0.. of the block, with one counter per
// block position (count[i·heads + h0]); the last split merges the heads' partial results
// with the whole block for one head, else with warp gh for head gh. The block that writes
// the heads' results also writes the rotated q back to qw when qw is not null.
template <int HD, int G>
static __device__ void att_gqa_finish(att_gqa_smem<HD, G> &sh, float *dst, float *part, int *count, float *qw, int i,
                                      int h0, int heads, int active) {
	__syncthreads();
	const int stride = HD + 2, lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
#pragma unroll 1
	for (int gh = 0; gh < G; gh++) {
		float mAll = NEG_INF;
		for (int w = 0; w < ATT_WARPS; w++) mAll = fmaxf(mAll, sh.m[gh][w]);
		float f[ATT_WARPS], lAll = 0.0f;
		for (int w = 0; w < ATT_WARPS; w++) {
			f[w] = sh.l[gh][w] > 0.0f ? expf(sh.m[gh][w] - mAll) : 0.0f;
			lAll += sh.l[gh][w] * f[w];
		}
		if (active == 1) {
			float *dr = dst + ((size_t)i * heads + h0 + gh) * HD;
			for (int d = threadIdx.x; d < HD; d += blockDim.x) {
				float o = 0.0f;
				for (int w = 0; w < ATT_WARPS; w++) o += sh.acc[gh][w][d] * f[w];
				dr[d] = o / lAll;
			}
			continue;
		}
		float *pr = part + (((size_t)i * heads + h0 + gh) * gridDim.z + blockIdx.z) * stride;
		if (threadIdx.x == 0) {
			pr[0] = mAll;
			pr[1] = lAll;
		}
		for (int d = threadIdx.x; d < HD; d += blockDim.x) {
			float o = 0.0f;
			for (int w = 0; w < ATT_WARPS; w++) o += sh.acc[gh][w][d] * f[w];
			pr[2 + d] = o;
		}
	}
	if (active > 1) {
		__threadfence(); // the partial results are visible before the count says so
		__syncthreads();
		if (threadIdx.x == 0) sh.last = atomicAdd(count + i * heads + h0, 1) == active - 1;
		__syncthreads();
		if (!sh.last) return;
		__threadfence();
		// The other splits' results are read through L2 (__ldcg): they were written by
		// other SMs. The loads of ATT_MERGE splits are issued at once (predicated, so that
		// a few splits take one round trip too).
		if constexpr (G == 1) {
			const float *pr0 = part + ((size_t)i * heads + h0) * gridDim.z * stride;
			float *dr = dst + ((size_t)i * heads + h0) * HD;
			constexpr int PS = ATT_MAX_SPLITS / (ATT_WARPS * WARP); // splits a thread reads
			static_assert(PS * ATT_WARPS * WARP == ATT_MAX_SPLITS, "att_gqa_finish: splits per thread");
			float ms[PS], lv[PS], mx = NEG_INF;
#pragma unroll
			for (int u = 0; u < PS; u++) {
				const int s = threadIdx.x + u * ATT_WARPS * WARP;
				ms[u] = s < active ? __ldcg(pr0 + s * stride) : NEG_INF;
				lv[u] = s < active ? __ldcg(pr0 + s * stride + 1) : 0.0f;
				mx = fmaxf(mx, ms[u]);
			}
			mx = block_max(mx, sh.red);
			float ls = 0.0f;
#pragma unroll
			for (int u = 0; u < PS; u++) {
				const int s = threadIdx.x + u * ATT_WARPS * WARP;
				const float w = lv[u] > 0.0f ? expf(ms[u] - mx) : 0.0f;
				if (s < active) sh.w[0][s] = w;
				ls += lv[u] * w;
			}
			ls = block_sum(ls, sh.red); // its barrier also publishes sh.w
			for (int d = threadIdx.x; d < HD; d += blockDim.x) {
				float o = 0.0f;
				for (int s0 = 0; s0 < active; s0 += ATT_MERGE) { // ATT_MERGE loads in flight
					float x[ATT_MERGE];
#pragma unroll
					for (int u = 0; u < ATT_MERGE; u++) x[u] = s0 + u < active ? __ldcg(pr0 + (s0 + u) * stride + 2 + d) : 0.0f;
#pragma unroll
					for (int u = 0; u < ATT_MERGE; u++) {
						if (s0 + u < active) o += sh.w[0][s0 + u] * x[u];
					}
				}
				dr[d] = o / ls;
			}
		} else if (warp < G) {
			const int gh = warp;
			const float *pr0 = part + ((size_t)i * heads + h0 + gh) * gridDim.z * stride;
			float *dr = dst + ((size_t)i * heads + h0 + gh) * HD;
			constexpr int PS = ATT_MAX_SPLITS / WARP; // splits a lane reads
			static_assert(PS * WARP == ATT_MAX_SPLITS && ATT_MERGE % 2 == 0, "att_gqa_finish: splits per lane");
			float ms[PS], lv[PS], mx = NEG_INF;
#pragma unroll
			for (int u = 0; u < PS; u++) {
				const int s = lane + u * WARP;
				ms[u] = s < active ? __ldcg(pr0 + s * stride) : NEG_INF;
				lv[u] = s < active ? __ldcg(pr0 + s * stride + 1) : 0.0f;
				mx = fmaxf(mx, ms[u]);
			}
			mx = warp_max(mx);
			float ls = 0.0f;
#pragma unroll
			for (int u = 0; u < PS; u++) {
				const int s = lane + u * WARP;
				const float w = lv[u] > 0.0f ? expf(ms[u] - mx) : 0.0f;
				if (s < active) sh.w[gh][s] = w;
				ls += lv[u] * w;
			}
			ls = warp_sum(ls);
			__syncwarp();
			float o[HD / WARP];
#pragma unroll
			for (int k = 0; k < HD / WARP; k++) o[k] = 0.0f;
			for (int s0 = 0; s0 < active; s0 += ATT_MERGE / 2) { // ATT_MERGE/2·HD/32 loads in flight
				float x[ATT_MERGE / 2][HD / WARP];
#pragma unroll
				for (int u = 0; u < ATT_MERGE / 2; u++) {
#pragma unroll
					for (int k = 0; k < HD / WARP; k++)
						x[u][k] = s0 + u < active ? __ldcg(pr0 + (s0 + u) * stride + 2 + lane + k * WARP) : 0.0f;
				}
#pragma unroll
				for (int u = 0; u < ATT_MERGE / 2; u++) {
					if (s0 + u < active) {
						const float w = sh.w[gh][s0 + u];
#pragma unroll
						for (int k = 0; k < HD / WARP; k++) o[k] += w * x[u][k];
					}
				}
			}
#pragma unroll
			for (int k = 0; k < HD / WARP; k++) dr[lane + k * WARP] = o[k] / ls;
		}
		if (threadIdx.x == 0) count[i * heads + h0] = 0;
	}
	if (qw != 0) { // every block of the heads has read q: the rotated q replaces it
		for (int e = threadIdx.x; e < G * HD; e += blockDim.x) qw[(size_t)h0 * HD + e] = sh.q[e / HD][e % HD];
	}
}

template <int HD, int G>
static __device__ void att_gqa(float *dst, float *q, float *kx, const float *vx, __half *kc, __half *vc, const int *pos,
                               int heads, int kvHeads, float scale, int ctx, int minKeys, float *part, int *count,
                               int *kvCount, const float *factors, int dims, float base, float rscale, int neox,
                               int fused) {
	constexpr int E = 8, LPK = HD / E, KPL = WARP / LPK;
	constexpr int NLM = G == 1 ? ATT_GQA_NL1 : ATT_GQA_NL;
	constexpr int NL = LPK < NLM ? LPK : NLM, DUP = LPK / NL, T = NL * KPL;
	static_assert(LPK >= 2 && LPK <= WARP && (LPK & (LPK - 1)) == 0 && G <= ATT_GQA_MAX, "att_gqa: shape");
	__shared__ att_gqa_smem<HD, G> sh;
	const int group = heads / kvHeads, blocksPerKV = group / G;
	const int kvh = blockIdx.x / blocksPerKV, h0 = kvh * group + blockIdx.x % blocksPerKV * G, i = blockIdx.y;
	const int P = pos[i];
	att_range rg;
	if (!att_split(P, ctx, minKeys, rg)) return;
	const int tid = threadIdx.x, lane = tid % WARP, warp = tid / WARP, sub = lane % LPK, g = lane / LPK;
	const size_t kvStride = (size_t)kvHeads * HD;
	const bool newRow = fused && (int)blockIdx.z == rg.active - 1; // holds key P
	const int skip = newRow ? P : -1;                                  // key taken from sh.kn, sh.vn
	const __half *kh = kc + (size_t)kvh * HD + sub * E, *vh = vc + (size_t)kvh * HD + sub * E;
	const int wb = rg.begin + warp * rg.kw, we = min(wb + rg.kw, rg.end);

	// load issues the loads of the tile at t0 (none past we: zeros; key skip from shared
	// memory when patch is set, else zeros too).
	auto load = [&](int t0, bool patch, uint4 (&kr)[NL], uint4 (&vr)[NL]) {
#pragma unroll
		for (int r = 0; r < NL; r++) {
			const int j = t0 + r * KPL + g;
			kr[r] = vr[r] = make_uint4(0, 0, 0, 0);
			if (j < we) {
				if (j != skip) {
					kr[r] = __ldg((const uint4 *)(kh + (size_t)j * kvStride));
					vr[r] = __ldg((const uint4 *)(vh + (size_t)j * kvStride));
				} else if (patch) {
					kr[r] = *(const uint4 *)(sh.kn + sub * E);
					vr[r] = *(const uint4 *)(sh.vn + sub * E);
				}
			}
		}
	};
	uint4 kr[NL], vr[NL];
	load(wb, false, kr, vr);

	// q (and, fused, the new row) into shared memory while the loads are in flight.
	const float *qg = q + ((size_t)i * heads + h0) * HD;
	if (!fused) {
		for (int e = tid; e < G * HD; e += blockDim.x) sh.q[e / HD][e % HD] = qg[e];
	} else {
		const int half = dims / 2;
		for (int e = tid; e < G * HD; e += blockDim.x) {
			if (e % HD >= dims) sh.q[e / HD][e % HD] = qg[e];
		}
		for (int p = tid; p < G * half; p += blockDim.x) {
			int a, b;
			float o0, o1;
			att_rope(qg + p / half * HD, P, p % half, factors, dims, base, rscale, neox, a, b, o0, o1);
			sh.q[p / half][a] = o0;
			sh.q[p / half][b] = o1;
		}
		if (newRow) { // k rotated as rope_f32 does; k and v stored as set_rows_f16 (first block of the K/V head)
			const float *kr0 = kx + (size_t)kvh * HD, *vr0 = vx + (size_t)kvh * HD;
			__half *kd = 0, *vd = 0;
			if (blockIdx.x % blocksPerKV == 0)
				kd = kc + (size_t)P * kvStride + (size_t)kvh * HD, vd = vc + (size_t)P * kvStride + (size_t)kvh * HD;
			for (int e = tid; e < HD; e += blockDim.x) {
				const __half hv = __float2half_rn(vr0[e]);
				sh.vn[e] = hv;
				if (vd) vd[e] = hv;
				if (e >= dims) {
					const float x = kr0[e];
					const __half hk = __float2half_rn(x);
					sh.kf[e] = x;
					sh.kn[e] = hk;
					if (kd) kd[e] = hk;
				}
			}
			for (int p = tid; p < half; p += blockDim.x) {
				int a, b;
				float o0, o1;
				att_rope(kr0, P, p, factors, dims, base, rscale, neox, a, b, o0, o1);
				const __half h0v = __float2half_rn(o0), h1v = __float2half_rn(o1);
				sh.kf[a] = o0;
				sh.kf[b] = o1;
				sh.kn[a] = h0v;
				sh.kn[b] = h1v;
				if (kd) kd[a] = h0v, kd[b] = h1v;
			}
		}
	}
	__syncthreads();
	if (newRow) { // the rotated k replaces k once every block of the K/V head has read it
		bool last = blocksPerKV == 1;
		if (!last) {
			if (tid == 0) sh.last = atomicAdd(kvCount + kvh, 1) == blocksPerKV - 1;
			__syncthreads();
			last = sh.last;
		}
		if (last) {
			for (int e = tid; e < dims; e += blockDim.x) kx[(size_t)kvh * HD + e] = sh.kf[e];
			if (tid == 0 && blocksPerKV > 1) kvCount[kvh] = 0;
		}
	}
	if (skip >= 0) { // the first tile's key P
#pragma unroll
		for (int r = 0; r < NL; r++) {
			if (wb + r * KPL + g == skip && skip < we) {
				kr[r] = *(const uint4 *)(sh.kn + sub * E);
				vr[r] = *(const uint4 *)(sh.vn + sub * E);
			}
		}
	}

	float qr[G][E], acc[G][E], m[G], l[G];
#pragma unroll
	for (int gh = 0; gh < G; gh++) {
		m[gh] = NEG_INF, l[gh] = 0.0f;
#pragma unroll
		for (int e = 0; e < E; e++) qr[gh][e] = sh.q[gh][sub * E + e] * scale, acc[gh][e] = 0.0f;
	}
	for (int t0 = wb; t0 < we; t0 += T) {
		float sc[G][NL];
#pragma unroll
		for (int r = 0; r < NL; r++) {
			float x[E];
			unpack(kr[r], x);
#pragma unroll
			for (int gh = 0; gh < G; gh++) {
				float s = 0.0f;
#pragma unroll
				for (int e = 0; e < E; e++) s += qr[gh][e] * x[e];
				sc[gh][r] = s;
			}
		}
		const bool in = t0 + (sub / DUP) * KPL + g < we;
		float p[G];
#pragma unroll
		for (int gh = 0; gh < G; gh++) {
			reduce_scatter<NL, LPK / 2>(sc[gh], lane);
			const float mn = fmaxf(m[gh], warp_max(in ? sc[gh][0] : NEG_INF)); // finite: key t0 is in range
			const float c = expf(m[gh] - mn);
			p[gh] = in ? expf(sc[gh][0] - mn) : 0.0f;
			l[gh] = l[gh] * c + (sub % DUP == 0 ? p[gh] : 0.0f); // each key once
			m[gh] = mn;
#pragma unroll
			for (int e = 0; e < E; e++) acc[gh][e] *= c;
		}
#pragma unroll
		for (int r = 0; r < NL; r++) {
			float x[E];
			unpack(vr[r], x);
#pragma unroll
			for (int gh = 0; gh < G; gh++) {
				const float pj = __shfl_sync(FULL_MASK, p[gh], g * LPK + r * DUP);
#pragma unroll
				for (int e = 0; e < E; e++) acc[gh][e] += pj * x[e];
			}
		}
		if (t0 + T < we) load(t0 + T, true, kr, vr);
	}
#pragma unroll
	for (int gh = 0; gh < G; gh++) {
#pragma unroll
		for (int o = LPK; o < WARP; o <<= 1) {
#pragma unroll
			for (int e = 0; e < E; e++) acc[gh][e] += __shfl_xor_sync(FULL_MASK, acc[gh][e], o);
		}
		const float ls = warp_sum(l[gh]);
		if (lane == 0) {
			sh.m[gh][warp] = m[gh];
			sh.l[gh][warp] = ls;
		}
		if (lane < LPK) {
#pragma unroll
			for (int e = 0; e < E; e++) sh.acc[gh][warp][sub * E + e] = acc[gh][e];
		}
	}
	att_gqa_finish<HD, G>(sh, dst, part, count, fused ? q : 0, i, h0, heads, rg.active);
}

// attention_gqa_f16_hdN_gG(dst, q, kx, vx, kc, vc, pos, heads, kvHeads, scale, ctx,
// minKeys, part, count, kvCount, factors, dims, base, ropeScale, neox, fused): grid
// (kvHeads·heads/kvHeads/G, n, splits), block ATT_WARPS·32; kx, vx, factors and the
// RoPE parameters are read only when fused (then n = 1), kvCount (kvHeads counters,
// zeroed once, left at zero) only when fused with more than one block per K/V head. It
// lets the kernel after it launch at once (pdl_trigger: the o mat-vec then loads its first
// weights while the attention runs); it is itself launched without PDL.
#define ATT_GQA(HD, G)                                                                                                \
	extern "C" __global__ void __launch_bounds__(ATT_WARPS *WARP) attention_gqa_f16_hd##HD##_g##G(                    \
	    float *dst, float *q, float *kx, const float *vx, __half *kc, __half *vc, const int *pos, int heads,           \
	    int kvHeads, float scale, int ctx, int minKeys, float *part, int *count, int *kvCount,                       \
	    const float *factors, int dims, float base, float rscale, int neox, int fused) {                             \
		pdl_trigger();                                                                                                \
		att_gqa<HD, G>(dst, q, kx, vx, kc, vc, pos, heads, kvHeads, scale, ctx, minKeys, part, count, kvCount,        \
		               factors, dims, base, rscale, neox, fused);                                                     \
	}
ATT_GQA(64, 1)
ATT_GQA(64, 2)
ATT_GQA(64, 4)
ATT_GQA(128, 1)
ATT_GQA(128, 2)
ATT_GQA(128, 4)
ATT_GQA(256, 1)
ATT_GQA(256, 2)
ATT_GQA(256, 4)

// ---- prompt batches: flash attention on the tensor cores ----
//
// flash_attn_f16_hdN: causal grouped-query attention of a batch of query rows over an
// F16 cache, for head dimension N (64, 80, 96 or 128), FlashAttention-2 style. One block
// of FA_WARPS warps takes FA_ROWS query rows of one head; each warp owns 16 of them. The
// keys and values go through shared memory FA_KEYS rows at a time, in FA_STAGES buffers
// filled by cp.async, so the next tile's copy runs while this one is multiplied; both
// stay row-major (rows FA_PAD halves longer than the head, conflict-free for ldmatrix),
// the value fragments are read transposed by ldmatrix.trans. The scores S = q·kᵀ and the
// products p·v run on mma.sync m16n8k16 (f16 inputs, f32 accumulators), with the softmax
// kept online per row in registers, so no score matrix is ever stored. q is rounded to
// f16 (as llama.cpp's flash attention does), the scale is applied to the f32 scores, and
// the probabilities are rounded to f16 for p·v while their sum stays f32. Row i sees
// cache rows 0..pos[i]; rows past n are computed as fully masked and not written. Blocks
// take their query tiles last first, so the longest (causal) rows start first.
// grid (ceil(n / FA_ROWS), heads), block FA_WARPS·32, dynamic shared memory
// FA_STAGES · 2 · FA_KEYS · (N + FA_PAD) halves.

#define FA_WARPS 4
#define FA_ROWS (16 * FA_WARPS)
#define FA_KEYS 64
#define FA_STAGES 2
#define FA_PAD 8

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

static __device__ __forceinline__ u32 fa_smem_addr(const void *p) { return (u32)__cvta_generic_to_shared(p); }

// fa_copy16 starts an asynchronous copy of 16 bytes from g to shared s, or stores 16
// zero bytes there when !full (g is not read then, but stays a valid address).
static __device__ __forceinline__ void fa_copy16(void *s, const void *g, bool full) {
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(fa_smem_addr(s)), "l"(g), "r"(full ? 16 : 0)
	             : "memory");
}
static __device__ __forceinline__ void fa_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
static __device__ __forceinline__ void fa_wait_prev() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

// fa_ldsm4 is ldmatrix .x4 (.trans when T): lanes 8i..8i+7 give the row addresses of
// 8×8 matrix i, which lands in r[i].
template <bool T> static __device__ __forceinline__ void fa_ldsm4(u32 r[4], const __half *p) {
	if (T)
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
		             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		             : "r"(fa_smem_addr(p))
		             : "memory");
	else
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
		             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		             : "r"(fa_smem_addr(p))
		             : "memory");
}

// fa_ldsm2 is ldmatrix .x2: lanes 0..7 and 8..15 give the row addresses of the two
// matrices.
static __device__ __forceinline__ void fa_ldsm2(u32 r[2], const __half *p) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
	             : "=r"(r[0]), "=r"(r[1])
	             : "r"(fa_smem_addr(p))
	             : "memory");
}

// fa_load starts the copies of cache rows j0..j0+FA_KEYS-1 of one K/V head into the
// tiles ks, vs; rows from keys on are zeros (so that p·v never meets stale values).
template <int HD>
static __device__ __forceinline__ void fa_load(__half *ks, __half *vs, const __half *kh, const __half *vh, int j0,
                                               int keys, int kvStride) {
	constexpr int S = HD + FA_PAD;
	for (int c = threadIdx.x; c < FA_KEYS * HD / 8; c += FA_WARPS * WARP) {
		const int r = c / (HD / 8), d = c % (HD / 8) * 8;
		const bool full = j0 + r < keys;
		const size_t at = (size_t)(full ? j0 + r : 0) * kvStride + d;
		fa_copy16(ks + r * S + d, kh + at, full);
		fa_copy16(vs + r * S + d, vh + at, full);
	}
}

// fa_scores sets s to the warp's 16 query rows (qa) times the FA_KEYS keys of the tile ks.
template <int HD>
static __device__ __forceinline__ void fa_scores(float s[FA_KEYS / 8][4], const u32 qa[HD / 16][4], const __half *ks,
                                                 int lane) {
	constexpr int S = HD + FA_PAD;
#pragma unroll
	for (int nt = 0; nt < FA_KEYS / 8; nt++) {
		s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
		const __half *kr = ks + (nt * 8 + (lane & 7)) * S;
#pragma unroll
		for (int kk = 0; kk + 1 < HD / 16; kk += 2) {
			u32 b[4]; // matrix i: keys nt·8.., dims kk·16 + 8i..
			fa_ldsm4<false>(b, kr + kk * 16 + (lane >> 3) * 8);
			mma16816(s[nt], qa[kk], b[0], b[1]);
			mma16816(s[nt], qa[kk + 1], b[2], b[3]);
		}
		if (HD / 16 % 2 == 1) {
			constexpr int kk = HD / 16 - 1;
			u32 b[2];
			fa_ldsm2(b, kr + kk * 16 + (lane >> 3 & 1) * 8);
			mma16816(s[nt], qa[kk], b[0], b[1]);
		}
	}
}

// fa_values adds the tile's probabilities s (rounded to f16) times its values vs to o.
template <int HD>
static __device__ __forceinline__ void fa_values(float o[HD / 8][4], const float s[FA_KEYS / 8][4], const __half *vs,
                                                 int lane) {
	constexpr int S = HD + FA_PAD;
#pragma unroll
	for (int kk = 0; kk < FA_KEYS / 16; kk++) {
		// Two n8 score tiles side by side are one A fragment over 16 keys.
		const u32 pa[4] = {pack2(s[2 * kk][0], s[2 * kk][1]), pack2(s[2 * kk][2], s[2 * kk][3]),
		                   pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
		const __half *vr = vs + (kk * 16 + (lane >> 3 & 1) * 8 + (lane & 7)) * S + (lane >> 4) * 8;
#pragma unroll
		for (int d = 0; d < HD / 8; d += 2) {
			u32 b[4]; // matrix i: keys kk·16 + 8·(i&1).., dims d·8 + 8·(i>>1).., transposed
			fa_ldsm4<true>(b, vr + d * 8);
			mma16816(o[d], pa, b[0], b[1]);
			mma16816(o[d + 1], pa, b[2], b[3]);
		}
	}
}

template <int HD>
static __device__ void flash_attend(float *dst, const float *q, const __half *k, const __half *v, const int *pos,
                                    int n, int heads, int kvHeads, float scale) {
	constexpr int TILE = FA_KEYS * (HD + FA_PAD); // halves of one K or V tile
	extern __shared__ __align__(16) __half fa_tiles[]; // per stage: the K tile, then the V tile
	__shared__ int blockLast;
	const int h = blockIdx.y, lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
	const int g = lane / 4, t = lane % 4;
	const int kvh = h / (heads / kvHeads), kvStride = kvHeads * HD;
	const int r0 = (gridDim.x - 1 - blockIdx.x) * FA_ROWS + warp * 16 + g, r1 = r0 + 8;
	const int p0 = r0 < n ? pos[r0] : -1, p1 = r1 < n ? pos[r1] : -1;
	int warpLast = max(p0, p1);
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) warpLast = max(warpLast, __shfl_xor_sync(FULL_MASK, warpLast, o));
	if (threadIdx.x == 0) blockLast = -1;
	__syncthreads();
	if (lane == 0) atomicMax(&blockLast, warpLast);
	__syncthreads();
	const int keys = blockLast + 1;
	const __half *kh = k + (size_t)kvh * HD, *vh = v + (size_t)kvh * HD;
	fa_load<HD>(fa_tiles, fa_tiles + TILE, kh, vh, 0, keys, kvStride);
	fa_commit();

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

	for (int j0 = 0, stage = 0; j0 < keys; j0 += FA_KEYS, stage ^= 1) {
		if (j0 + FA_KEYS < keys) {
			__half *next = fa_tiles + (stage ^ 1) * 2 * TILE;
			fa_load<HD>(next, next + TILE, kh, vh, j0 + FA_KEYS, keys, kvStride);
		}
		fa_commit(); // an empty group after the last tile keeps wait_group 1 exact
		fa_wait_prev();
		__syncthreads(); // every thread's copies of this tile have landed
		if (j0 <= warpLast) { // else no key of this tile is visible to the warp's rows
			const __half *ks = fa_tiles + stage * 2 * TILE;
			float s[FA_KEYS / 8][4];
			fa_scores<HD>(s, qa, ks, lane);
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
			fa_values<HD>(o, s, ks + TILE, lane);
		}
		__syncthreads(); // every warp is done with this stage before the copies into it
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
