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
