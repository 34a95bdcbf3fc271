// matvec.cu: dst (n, rows) = x (n, cols) · wᵀ for small n (decode), w (rows, cols) of any
// weight format, each weight byte read once for up to NC activation rows. Quantized
// weights multiply activations quantized to int8 blocks of 32 (quantize_q8, Q8_0's
// rounding) with dp4a, as llama.cpp's MMVQ does; F32, F16 and BF16 weights multiply the
// F32 activations.
//
// A block of MV_WARPS warps computes R weight rows: warp w takes the 256-element chunks
// w, w+MV_WARPS, ... of those rows, and the warps' sums meet in shared memory. Launch:
// block MV_WARPS·32 threads, grid (ceil(rows/R), ceil(n/NC)).
#include "types.cuh"

#define MV_WARPS 4
// Weight rows per block of the quantized kernels for 1 and 2 activation rows (1 for 4,
// 8, and for the float formats); the Go side (matmul.go, mvRows) must agree.
#define MV_ROWS_1 4
#define MV_ROWS_2 2

// block_reduce adds the MV_WARPS warps' acc[R·NC] and writes the sums to dst (n, rows):
// dst[c·rows + row0 + r] for r < nr, c < nc; add, unless null, gets the sums added too
// (the residual epilogue: add += dst).
template <int R, int NC>
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
		dst[(size_t)c * rows + row0 + r] = s;
		if (add) add[(size_t)c * rows + row0 + r] += s;
	}
}

// quantize_q8 quantizes x to int8 in blocks of 32 the way llama.cpp's
// quantize_row_q8_0 does (d = amax/127, q = round(x/d), d stored as f16): xq (n·cols)
// int8 and xd (n·cols/32) the scales as floats. One warp per block.
extern "C" __global__ void quantize_q8(signed char *xq, float *xd, const float *x, i64 nblocks) {
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
// ceil(rows/R) blocks of this matrix; add is the residual epilogue's target, or null.
template <class T, int NC, int R>
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
	block_reduce<R, NC>(acc, dst, add, rows, row0, nr, nc);
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
template <typename W, int NC, bool VEC>
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
			block_reduce<1, NC>(acc, dst, add, rows, row0, 1, nc);
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
	block_reduce<1, NC>(acc, dst, add, rows, row0, 1, nc);
}

// ---- fused batch-1 mat-vecs: mv_fused_<type> ----
//
// One launch computes up to three mat-vecs of one activation row (q, k and v; gate and
// up): blocks [0, end0) take matrix 0, [end0, end1) matrix 1, the rest matrix 2, each
// block as in the single kernels. add, unless null, gets matrix 0's result added (the
// residual epilogue; the Go side uses it with one matrix only).
#define MV_FUSED_ARGS \
	const u8 *w0, const u8 *w1, const u8 *w2, float *d0, float *d1, float *d2, float *add, int rows0, int rows1, \
		int rows2, int end0, int end1, int cols

// MvSeg is one block's matrix: weights, output, rows, and the block's index within it.
struct MvSeg {
	const u8 *w;
	float *dst;
	int rows, blk;
};

static __device__ __forceinline__ MvSeg mv_seg(const u8 *w0, const u8 *w1, const u8 *w2, float *d0, float *d1,
                                               float *d2, int rows0, int rows1, int rows2, int end0, int end1) {
	const int b = blockIdx.x;
	if (b < end0) return MvSeg{w0, d0, rows0, b};
	if (b < end1) return MvSeg{w1, d1, rows1, b - end0};
	return MvSeg{w2, d2, rows2, b - end1};
}

// Quantized weights, fused: mv_fused_<type>(MV_FUSED_ARGS, xq, xd), MV_ROWS_1 rows a block.
#define MV_FUSED_Q8_ENTRY(name) \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP) \
	    mv_fused_##name(MV_FUSED_ARGS, const signed char *xq, const float *xd) { \
		const MvSeg s = mv_seg(w0, w1, w2, d0, d1, d2, rows0, rows1, rows2, end0, end1); \
		mv_q8<T_##name, 1, MV_ROWS_1>(s.dst, add, s.w, xq, xd, s.rows, cols, 1, s.blk); \
	}

// ---- entry points: mv_<type>_<NC> ----

// Quantized weights: mv_<type>_<NC>(dst, w, xq, xd, rows, cols, n), MV_ROWS_<NC> rows a block.
#define MV_Q8_ARGS float *dst, const u8 *w, const signed char *xq, const float *xd, int rows, int cols, int n
#define MV_Q8_ENTRY(name, NC, R) \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP) mv_##name##_##NC(MV_Q8_ARGS) { \
		mv_q8<T_##name, NC, R>(dst, nullptr, w, xq, xd, rows, cols, n, blockIdx.x); \
	}
#define MV_QUANT(name, T) \
	typedef T T_##name; \
	MV_Q8_ENTRY(name, 1, MV_ROWS_1) MV_Q8_ENTRY(name, 2, MV_ROWS_2) MV_Q8_ENTRY(name, 4, 1) MV_Q8_ENTRY(name, 8, 1) \
	MV_FUSED_Q8_ENTRY(name)
FOR_EACH_QUANT(MV_QUANT)

// Float weights: mv_<type>_<NC>(dst, w, x, rows, cols, n), one row a block.
#define MV_ARGS float *dst, const u8 *w, const float *x, int rows, int cols, int n
#define MV_ENTRY(name, NC, call) \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP) mv_##name##_##NC(MV_ARGS) { call; }
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

// Float weights, fused: mv_fused_<type>(MV_FUSED_ARGS, x), one row a block.
#define MV_FUSED_FLOAT(name, W, VEC) \
	extern "C" __global__ void __launch_bounds__(MV_WARPS * WARP) mv_fused_##name(MV_FUSED_ARGS, const float *x) { \
		const MvSeg s = mv_seg(w0, w1, w2, d0, d1, d2, rows0, rows1, rows2, end0, end1); \
		mv_float<W, 1, VEC>(s.dst, add, (const W *)s.w, x, s.rows, cols, 1, s.blk); \
	}
MV_FUSED_FLOAT(f32, float, true)
MV_FUSED_FLOAT(f16, __half, true)
MV_FUSED_FLOAT(bf16, u8, false)
