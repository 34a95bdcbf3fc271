// setrows.cu: scatter rows of an F32 matrix into a cache of F32 or F16 rows.
#include "common.cuh"

static __device__ __forceinline__ void store(float *p, float v) { *p = v; }
static __device__ __forceinline__ void store(__half *p, float v) { *p = __float2half_rn(v); }

// set_rows_*: dst row rows[i] = src row i (cols elements). grid (n, ceil(cols/256)).
extern "C" __global__ void set_rows_f32(float *dst, const float *src, const int *rows, int cols) {
	const int i = blockIdx.x, e = blockIdx.y * blockDim.x + threadIdx.x;
	if (e < cols) store(dst + (size_t)rows[i] * cols + e, src[(size_t)i * cols + e]);
}

extern "C" __global__ void set_rows_f16(__half *dst, const float *src, const int *rows, int cols) {
	const int i = blockIdx.x, e = blockIdx.y * blockDim.x + threadIdx.x;
	if (e < cols) store(dst + (size_t)rows[i] * cols + e, src[(size_t)i * cols + e]);
}

// set_rows2_*: set_rows for two (dst, src) pairs with the same row indices in one launch
// (the K and V caches): grid (n, ceil(max cols/256), 2), blockIdx.z picks the pair.
template <typename T>
static __device__ __forceinline__ void set_rows2(T *dst0, const float *src0, T *dst1, const float *src1,
                                                 const int *rows, int cols0, int cols1) {
	const int i = blockIdx.x, e = blockIdx.y * blockDim.x + threadIdx.x;
	T *dst = blockIdx.z ? dst1 : dst0;
	const float *src = blockIdx.z ? src1 : src0;
	const int cols = blockIdx.z ? cols1 : cols0;
	if (e < cols) store(dst + (size_t)rows[i] * cols + e, src[(size_t)i * cols + e]);
}

extern "C" __global__ void set_rows2_f32(float *dst0, const float *src0, float *dst1, const float *src1,
                                         const int *rows, int cols0, int cols1) {
	set_rows2(dst0, src0, dst1, src1, rows, cols0, cols1);
}

extern "C" __global__ void set_rows2_f16(__half *dst0, const float *src0, __half *dst1, const float *src1,
                                         const int *rows, int cols0, int cols1) {
	set_rows2(dst0, src0, dst1, src1, rows, cols0, cols1);
}
