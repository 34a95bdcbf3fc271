// rope.cu: rotary position embedding, in place, with llama.cpp's theta:
// theta = scale · pos · base^(-2i/dims) / factor[i] for rotated pair i.
#include "common.cuh"

// rope_row rotates pair p of row r of x (n, cols), heads of headDim, at position pos[r].
// Adjacent pairs (2i, 2i+1) unless neox, then (i, i+dims/2). factors may be null.
static __device__ __forceinline__ void rope_row(float *x, const int *pos, const float *factors, int cols,
                                                int headDim, int dims, float base, float scale, int neox, int r,
                                                int p) {
	const int half = dims / 2;
	const int heads = cols / headDim;
	if (p >= heads * half) return;
	const int h = p / half, i = p % half;
	const float thetaScale = powf(base, -2.0f / (float)dims);
	float theta = scale * (float)pos[r] * powf(thetaScale, (float)i);
	if (factors != 0) theta /= factors[i];
	const float c = cosf(theta), s = sinf(theta);
	float *v = x + (size_t)r * cols + (size_t)h * headDim;
	const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
	const float x0 = v[a], x1 = v[b];
	v[a] = x0 * c - x1 * s;
	v[b] = x0 * s + x1 * c;
}

// rope_f32 rotates x (n, cols) in place. grid (n, ceil(heads·dims/2 / 256)); one thread
// per rotated pair.
extern "C" __global__ void rope_f32(float *x, const int *pos, const float *factors, int cols, int headDim,
                                    int dims, float base, float scale, int neox) {
	rope_row(x, pos, factors, cols, headDim, dims, base, scale, neox, blockIdx.x,
	         blockIdx.y * blockDim.x + threadIdx.x);
}

// rope2_f32 is rope_f32 on two matrices of the same rows and positions in one launch
// (q and k): grid (n, ceil(max pairs / 256), 2), blockIdx.z picks x0 or x1.
extern "C" __global__ void rope2_f32(float *x0, float *x1, const int *pos, const float *factors, int cols0,
                                     int cols1, int headDim, int dims, float base, float scale, int neox) {
	rope_row(blockIdx.z ? x1 : x0, pos, factors, blockIdx.z ? cols1 : cols0, headDim, dims, base, scale, neox,
	         blockIdx.x, blockIdx.y * blockDim.x + threadIdx.x);
}

// ROPE_TABLE bounds the rotated pairs of a head (dims/2) the row kernels below take.
#define ROPE_TABLE 512

// rope_rows rotates row r of x (n, cols) in place, every head, with the block's threads:
// the row's cos and sin of each of the dims/2 angles are computed once (theta exactly as
// rope_row computes it, so the bits are rope_f32's) into shared memory, then each
// thread rotates pairs p, p + blockDim.x, ... of the row's heads·dims/2. rope_f32
// evaluates powf twice, cosf and sinf for every pair of every head, which made it
// arithmetic-bound for prompt batches (~28 us a 7B layer for q and k of 512 tokens
// against ~8 us of memory traffic); here that work is 1/heads of it. dims/2 <=
// ROPE_TABLE.
static __device__ __forceinline__ void rope_rows(float *x, const int *pos, const float *factors, int cols,
                                                 int headDim, int dims, float base, float scale, int neox, int r) {
	__shared__ float cs[ROPE_TABLE], sn[ROPE_TABLE];
	const int half = dims / 2;
	const int heads = cols / headDim;
	const float thetaScale = powf(base, -2.0f / (float)dims);
	for (int i = threadIdx.x; i < half; i += blockDim.x) {
		float theta = scale * (float)pos[r] * powf(thetaScale, (float)i);
		if (factors != 0) theta /= factors[i];
		cs[i] = cosf(theta);
		sn[i] = sinf(theta);
	}
	__syncthreads();
	float *row = x + (size_t)r * cols;
	const int pairs = heads * half;
#pragma unroll 4
	for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
		const int h = p / half, i = p % half;
		float *v = row + (size_t)h * headDim;
		const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
		const float c = cs[i], s = sn[i];
		const float x0 = v[a], x1 = v[b];
		v[a] = x0 * c - x1 * s;
		v[b] = x0 * s + x1 * c;
	}
}

// rope_rows_f32 is rope_f32 for prompt batches: grid (n), one block a row (rope_rows).
extern "C" __global__ void rope_rows_f32(float *x, const int *pos, const float *factors, int cols, int headDim,
                                         int dims, float base, float scale, int neox) {
	rope_rows(x, pos, factors, cols, headDim, dims, base, scale, neox, blockIdx.x);
}

// rope2_rows_f32 is rope2_f32 for prompt batches: grid (n, 2), one block a row of x0
// (blockIdx.y 0) or x1 (1).
extern "C" __global__ void rope2_rows_f32(float *x0, float *x1, const int *pos, const float *factors, int cols0,
                                          int cols1, int headDim, int dims, float base, float scale, int neox) {
	rope_rows(blockIdx.y ? x1 : x0, pos, factors, blockIdx.y ? cols1 : cols0, headDim, dims, base, scale, neox,
	          blockIdx.x);
}

// norm_rope2_f32 is, in one launch, the per-head RMS norm of x0 (n, heads0·headDim) and
// x1 (n, heads1·headDim) in place (rms_norm_f32 over groups of headDim, weight w0 or
// w1 of headDim), each followed where rope0 / rope1 say by rope_f32 of that matrix:
// qwen3's q and k norms and their RoPE. One block a head (grid n·(heads0+heads1),
// blockDim.x headDim rounded up to a warp, at most 1024): the block sums the head's
// squares as rms_norm does for a row of at most blockDim.x elements (one square a
// thread, block_sum), writes the normalised head, and then rotates its pairs with
// rope_row, so the bits are those of the separate launches. heads1 may be 0 (x1 and w1
// unused).
extern "C" __global__ void norm_rope2_f32(float *x0, float *x1, const float *__restrict__ w0,
                                          const float *__restrict__ w1, const int *pos, const float *factors,
                                          int heads0, int heads1, int headDim, float eps, int dims, float base,
                                          float scale, int neox, int rope0, int rope1) {
	__shared__ float scratch[32];
	const int heads = heads0 + heads1;
	const int r = blockIdx.x / heads, h = blockIdx.x % heads;
	const bool second = h >= heads0;
	float *x = second ? x1 : x0;
	const float *w = second ? w1 : w0;
	const int hs = second ? heads1 : heads0, hh = second ? h - heads0 : h;
	float *v = x + ((size_t)r * hs + hh) * headDim;
	const int tid = threadIdx.x;
	const float e = tid < headDim ? v[tid] : 0.0f;
	const float ss = block_sum(e * e, scratch);
	const float s = rsqrtf(ss / (float)headDim + eps);
	if (tid < headDim) v[tid] = s * e * w[tid];
	if (!(second ? rope1 : rope0)) return;
	__syncthreads(); // the normalised head, written above, is what rope_row reads
	const int half = dims / 2;
	for (int i = tid; i < half; i += blockDim.x)
		rope_row(x, pos, factors, hs * headDim, headDim, dims, base, scale, neox, r, hh * half + i);
}
