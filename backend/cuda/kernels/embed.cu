// embed.cu: row gathers that dequantize: the token embedding lookup, and whole-matrix
// dequantization to F16 for the cuBLAS prefill path.
#include "types.cuh"

// ---- CUDA kernels ----

// embed: dst (n, cols) F32; row i = row tokens[i] of table. grid (n, ceil(cols/256)).
template <class T>
static __device__ void embed(float *dst, const u8 *table, const int *tokens, int cols) {
	const int i = blockIdx.x, e = blockIdx.y * blockDim.x + threadIdx.x;
	if (e >= cols) return;
	const size_t rowBytes = (size_t)(cols / T::QK) * T::BYTES;
	dst[(size_t)i * cols + e] = T::elem(table + (size_t)tokens[i] * rowBytes, e);
}

// dequant_f16: dst (rows, cols) F16 = src (rows, cols) of type T. grid (rows, ceil(cols/256)).
template <class T>
static __device__ void dequant_f16(__half *dst, const u8 *src, int cols) {
	const int r = blockIdx.x, e = blockIdx.y * blockDim.x + threadIdx.x;
	if (e >= cols) return;
	const size_t rowBytes = (size_t)(cols / T::QK) * T::BYTES;
	dst[(size_t)r * cols + e] = __float2half_rn(T::elem(src + (size_t)r * rowBytes, e));
}

// dequant8_f16: dequant_f16 with 8 consecutive elements a thread, stored as one 16-byte
// write (cols a multiple of 8, as every block format's rows are): the same values, an
// eighth of the threads and full-width stores. grid (rows, ceil(cols/8/256)).
template <class T>
static __device__ void dequant8_f16(__half *dst, const u8 *src, int cols) {
	const int r = blockIdx.x, e = 8 * (blockIdx.y * blockDim.x + threadIdx.x);
	if (e >= cols) return;
	const u8 *row = src + (size_t)r * (size_t)(cols / T::QK) * T::BYTES;
	__align__(16) __half h[8];
#pragma unroll
	for (int j = 0; j < 8; j++) h[j] = __float2half_rn(T::elem(row, e + j));
	*(uint4 *)(dst + (size_t)r * cols + e) = *(const uint4 *)h;
}

// ---- entry points ----

#define EMBED(name, T) \
	extern "C" __global__ void embed_##name(float *dst, const u8 *table, const int *tokens, int cols) { \
		embed<T>(dst, table, tokens, cols); \
	} \
	extern "C" __global__ void dequant_f16_##name(__half *dst, const u8 *src, int cols) { \
		dequant_f16<T>(dst, src, cols); \
	} \
	extern "C" __global__ void dequant8_f16_##name(__half *dst, const u8 *src, int cols) { \
		dequant8_f16<T>(dst, src, cols); \
	}
FOR_EACH_WEIGHT(EMBED)
