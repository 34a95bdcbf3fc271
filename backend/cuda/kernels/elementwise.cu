// elementwise.cu: SwiGLU, Add (also of one row to every row) and type-converting copies over n contiguous elements.
// Every kernel is a grid-stride loop; launch with any grid.
#include "common.cuh"
#include "pdl.cuh"

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
// blockDim.x % 32 == 0, so each warp takes whole blocks of 32. It lets the mat-vec after
// it launch at once (pdl_trigger, see pdl.cuh).
extern "C" __global__ void swiglu_q8(float *dst, const float *gate, const float *up, signed char *xq, float *xd,
                                     i64 n) {
	pdl_trigger();
	FOR_EACH_INDEX(i, n) {
		const float g = gate[i];
		const float v = g / (1.0f + expf(-g)) * up[i];
		dst[i] = v;
		q8_store(v, xq + i, xd + i / 32);
	}
}

// silu_mul is swiglu_f32's element: silu(g)·u.
static __device__ __forceinline__ float silu_mul(float g, float u) { return g / (1.0f + expf(-g)) * u; }

// swiglu_h16 is swiglu_f32 over n4 runs of 4 elements with 16-byte loads and stores
// (every pointer 16-byte aligned), that also stores dst rounded to F16 in h: the
// activations of the next batched MatMul (the GEMM path converts its input to F16
// first), so that the GEMM needs no conversion pass. h may be null (dst only).
extern "C" __global__ void swiglu_h16(float *dst, __half *h, const float *gate, const float *up, i64 n4) {
	FOR_EACH_INDEX(i, n4) {
		const float4 g = ((const float4 *)gate)[i], u = ((const float4 *)up)[i];
		const float4 v = make_float4(silu_mul(g.x, u.x), silu_mul(g.y, u.y), silu_mul(g.z, u.z), silu_mul(g.w, u.w));
		((float4 *)dst)[i] = v;
		if (h != 0) {
			__align__(8) __half2 p[2] = {__floats2half2_rn(v.x, v.y), __floats2half2_rn(v.z, v.w)};
			((uint2 *)h)[i] = *(const uint2 *)p;
		}
	}
}

// copy4_f32_f16 is copy_f32_f16 over n4 runs of 4 elements (16-byte aligned source,
// 8-byte aligned destination).
extern "C" __global__ void copy4_f32_f16(__half *dst, const float *src, i64 n4) {
	FOR_EACH_INDEX(i, n4) {
		const float4 v = ((const float4 *)src)[i];
		__align__(8) __half2 p[2] = {__floats2half2_rn(v.x, v.y), __floats2half2_rn(v.z, v.w)};
		((uint2 *)dst)[i] = *(const uint2 *)p;
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
