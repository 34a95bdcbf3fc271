// setrows.cu: scatter rows of an F32 matrix into a cache of F32 or F16 rows.
#include "common.cuh"

static __device__ __forceinline__ void store(float *p, float v) { *p = v; }
static __device__ __forceinline__ void store(__half *p, float v) { *p = __float2half_rn(v); }
static __device__ __forceinline__ void store4(float *p, float4 v) { *(float4 *)p = v; }
static __device__ __forceinline__ void store4(__half *p, float4 v) {
	const __half2 lo = __floats2half2_rn(v.x, v.y), hi = __floats2half2_rn(v.z, v.w);
	uint2 u;
	u.x = *(const u32 *)&lo;
	u.y = *(const u32 *)&hi;
	*(uint2 *)p = u;
}

// set_row4 stores elements e..e+3 (those below cols) of src row into dst row, with one
// 16-byte load and one store when cols is a multiple of 4 (rows then stay aligned).
template <typename T> static __device__ __forceinline__ void set_row4(T *dst, const float *src, int cols, int e) {
	if (cols % 4 == 0) {
		if (e < cols) store4(dst + e, *(const float4 *)(src + e));
		return;
	}
	for (int j = e; j < min(e + 4, cols); j++) store(dst + j, src[j]);
}

// set_rows_*: dst row rows[i] = src row i (cols elements), four elements a thread.
// grid (n, ceil(cols/(4·256))).
template <typename T> static __device__ __forceinline__ void set_rows(T *dst, const float *src, const int *rows, int cols) {
	const int i = blockIdx.x, e = 4 * (blockIdx.y * blockDim.x + threadIdx.x);
	set_row4(dst + (size_t)rows[i] * cols, src + (size_t)i * cols, cols, e);
}

extern "C" __global__ void set_rows_f32(float *dst, const float *src, const int *rows, int cols) {
	set_rows(dst, src, rows, cols);
}

extern "C" __global__ void set_rows_f16(__half *dst, const float *src, const int *rows, int cols) {
	set_rows(dst, src, rows, cols);
}

// set_rows2_*: set_rows for two (dst, src) pairs with the same row indices in one launch
// (the K and V caches): grid (n, ceil(max cols/(4·256)), 2), blockIdx.z picks the pair.
template <typename T>
static __device__ __forceinline__ void set_rows2(T *dst0, const float *src0, T *dst1, const float *src1,
                                                 const int *rows, int cols0, int cols1) {
	if (blockIdx.z)
		set_rows(dst1, src1, rows, cols1);
	else
		set_rows(dst0, src0, rows, cols0);
}

extern "C" __global__ void set_rows2_f32(float *dst0, const float *src0, float *dst1, const float *src1,
                                         const int *rows, int cols0, int cols1) {
	set_rows2(dst0, src0, dst1, src1, rows, cols0, cols1);
}

extern "C" __global__ void set_rows2_f16(__half *dst0, const float *src0, __half *dst1, const float *src1,
                                         const int *rows, int cols0, int cols1) {
	set_rows2(dst0, src0, dst1, src1, rows, cols0, cols1);
}
