// setrows.cu: scatter rows of an F32 matrix into a cache of F32 or F16 rows.
#include "common.cuh"

// set_rows_*: dst row rows[i] = src row i (cols elements). grid (n, ceil(cols/256)).
extern "C" __global__ void set_rows_f32(float *dst, const float *src, const int *rows, int cols) {
	const int i = blockIdx.x, e = blockIdx.y * blockDim.x + threadIdx.x;
	if (e < cols) dst[(size_t)rows[i] * cols + e] = src[(size_t)i * cols + e];
}

extern "C" __global__ void set_rows_f16(__half *dst, const float *src, const int *rows, int cols) {
	const int i = blockIdx.x, e = blockIdx.y * blockDim.x + threadIdx.x;
	if (e < cols) dst[(size_t)rows[i] * cols + e] = __float2half_rn(src[(size_t)i * cols + e]);
}
