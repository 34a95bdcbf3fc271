// elementwise.cu: SwiGLU, Add (also of one row to every row) and type-converting copies over n contiguous elements.
// Every kernel is a grid-stride loop; launch with any grid.
#include "common.cuh"

#define FOR_EACH_INDEX(i, n) \
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)

// swiglu_f32: dst = silu(gate) ⊙ up, silu(g) = g/(1+exp(-g)).
extern "C" __global__ void swiglu_f32(float *dst, const float *gate, const float *up, i64 n) {
	FOR_EACH_INDEX(i, n) {
		const float g = gate[i];
		dst[i] = g / (1.0f + expf(-g)) * up[i];
	}
}

// swiglu_q8 is swiglu_f32 that also quantizes dst for the mat-vec kernels, as
// quantize_q8 would: xq (n) int8, xd (n/32) scales. n % 32 == 0 and the launch's
// blockDim.x % 32 == 0, so each warp takes whole blocks of 32.
extern "C" __global__ void swiglu_q8(float *dst, const float *gate, const float *up, signed char *xq, float *xd,
                                     i64 n) {
	FOR_EACH_INDEX(i, n) {
		const float g = gate[i];
		const float v = g / (1.0f + expf(-g)) * up[i];
		dst[i] = v;
		q8_store(v, xq + i, xd + i / 32);
	}
}

// add_f32: dst += x.
extern "C" __global__ void add_f32(float *dst, const float *x, i64 n) {
	FOR_EACH_INDEX(i, n) dst[i] += x[i];
}

// add_row_f32: dst (rows, cols) += row (cols), the row added to every row of dst (a
// bias). grid (ceil(cols / blockDim.x), any y): each thread takes one column and strides
// over the rows.
extern "C" __global__ void add_row_f32(float *dst, const float *row, int rows, int cols) {
	const int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= cols) return;
	const float b = row[c];
	for (int r = blockIdx.y; r < rows; r += gridDim.y) dst[(size_t)r * cols + c] += b;
}

extern "C" __global__ void copy_f32_f32(float *dst, const float *src, i64 n) {
	FOR_EACH_INDEX(i, n) dst[i] = src[i];
}

extern "C" __global__ void copy_f32_f16(__half *dst, const float *src, i64 n) {
	FOR_EACH_INDEX(i, n) dst[i] = __float2half_rn(src[i]);
}

// copy_bf16_f32 widens BF16 to F32 (exact): BF16 weights are multiplied in F32.
extern "C" __global__ void copy_bf16_f32(float *dst, const u16 *src, i64 n) {
	FOR_EACH_INDEX(i, n) dst[i] = __uint_as_float((u32)src[i] << 16);
}

extern "C" __global__ void copy_f16_f32(float *dst, const __half *src, i64 n) {
	FOR_EACH_INDEX(i, n) dst[i] = __half2float(src[i]);
}

extern "C" __global__ void copy_f16_f16(__half *dst, const __half *src, i64 n) {
	FOR_EACH_INDEX(i, n) dst[i] = src[i];
}
