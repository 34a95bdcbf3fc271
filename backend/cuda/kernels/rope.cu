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
