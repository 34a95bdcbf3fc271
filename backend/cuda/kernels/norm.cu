// norm.cu: RMS normalisation of each row, times a weight row.
#include "common.cuh"

// rms_norm_f32: dst[i] = x[i]/rms(x[i]) ⊙ w for each row i of (n, cols); one block per
// row, blockDim.x a multiple of 32. llama.cpp: scale = rsqrtf(mean(x²) + eps).
extern "C" __global__ void rms_norm_f32(float *dst, const float *x, const float *w, int cols, float eps) {
	__shared__ float scratch[32];
	const float *xr = x + (size_t)blockIdx.x * cols;
	float *dr = dst + (size_t)blockIdx.x * cols;
	float ss = 0.0f;
	for (int e = threadIdx.x; e < cols; e += blockDim.x) ss += xr[e] * xr[e];
	ss = block_sum(ss, scratch);
	const float scale = rsqrtf(ss / (float)cols + eps);
	for (int e = threadIdx.x; e < cols; e += blockDim.x) dr[e] = scale * xr[e] * w[e];
}
