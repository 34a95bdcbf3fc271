// common.cuh: types and helpers shared by every kernel file. Kernels are compiled to PTX
// for compute_80 (see the Makefile) and loaded by package cuda with the driver API; each
// entry point is extern "C" so that its PTX name is the plain C name.
#pragma once
#include <cuda_fp16.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef long long i64;

#define WARP 32
#define FULL_MASK 0xffffffffu

// warp_sum returns the sum of v over the 32 lanes of the warp, in every lane.
static __device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
	return v;
}

// warp_max returns the maximum of v over the warp, in every lane.
static __device__ __forceinline__ float warp_max(float v) {
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
	return v;
}

// i2f converts an integer of magnitude below 2^22 to float exactly, with an integer and
// a float add (full rate) instead of I2F, which Ampere and Hopper issue at 16 a clock per
// SM: the dp4a sums of the mat-vec kernels are converted once per lane and weight row.
static __device__ __forceinline__ float i2f(int v) { return __int_as_float(0x4B400000 + v) - 12582912.0f; }

// half_at reads the IEEE half at p (2-byte aligned) as a float.
static __device__ __forceinline__ float half_at(const u8 *p) {
	return __half2float(__ushort_as_half(*(const u16 *)p));
}

// block_sum returns the sum of v over the thread block (blockDim.x a multiple of 32,
// at most 1024) in every thread. scratch holds 32 floats.
static __device__ __forceinline__ float block_sum(float v, float *scratch) {
	const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
	v = warp_sum(v);
	if (lane == 0) scratch[warp] = v;
	__syncthreads();
	const int nwarps = blockDim.x / WARP;
	v = lane < nwarps ? scratch[lane] : 0.0f;
	v = warp_sum(v);
	__syncthreads();
	return v;
}

// q8_store quantizes one block of 32 activations, one per lane of a full warp, the way
// quantize_q8 (matvec.cu) does: lane l's value v goes to *q as int8, and lane 0 stores
// the block's scale (rounded through f16) at *d.
static __device__ __forceinline__ void q8_store(float v, signed char *q, float *d) {
	const float amax = warp_max(fabsf(v)) / 127.0f;
	const float id = amax != 0.0f ? 1.0f / amax : 0.0f;
	*q = (signed char)roundf(v * id);
	if (threadIdx.x % WARP == 0) *d = __half2float(__float2half_rn(amax));
}
