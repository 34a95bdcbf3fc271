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

// Elem8<T>::get sets out[0..7] to elements e..e+7 of a row (e a multiple of 8), the
// same values as T::elem: by default element by element; the k-quants, whose 8
// elements share one sub-block, decode its scale once.
template <class T>
struct Elem8 {
	static __device__ __forceinline__ void get(const u8 *row, int e, float out[8]) {
#pragma unroll
		for (int j = 0; j < 8; j++) out[j] = T::elem(row, e + j);
	}
};

// The 32-element formats: 8 consecutive elements share the block's scale and one run
// of nibble bytes (low nibbles for elements 0..15, high for 16..31).
template <>
struct Elem8<Q4_0W> {
	static __device__ __forceinline__ void get(const u8 *row, int e, float out[8]) {
		const u8 *b = row + (e / 32) * Q4_0W::BYTES;
		const int j = e % 32, sh = j < 16 ? 0 : 4;
		const float d = half_at(b);
		const u16 *q = (const u16 *)(b + 2 + (j & 15)); // 2-byte aligned: blocks of 18 bytes
#pragma unroll
		for (int k = 0; k < 4; k++) {
			const u32 w = q[k];
			out[2 * k] = d * (float)((int)((w >> sh) & 0xF) - 8);
			out[2 * k + 1] = d * (float)((int)((w >> (8 + sh)) & 0xF) - 8);
		}
	}
};

template <>
struct Elem8<Q4_1W> {
	static __device__ __forceinline__ void get(const u8 *row, int e, float out[8]) {
		const u8 *b = row + (e / 32) * Q4_1W::BYTES;
		const int j = e % 32, sh = j < 16 ? 0 : 4;
		const float d = half_at(b), m = half_at(b + 2);
		const u8 *q = b + 4 + (j & 15);
#pragma unroll
		for (int k = 0; k < 8; k++) out[k] = d * (float)((q[k] >> sh) & 0xF) + m;
	}
};

template <>
struct Elem8<Q5_0W> {
	static __device__ __forceinline__ void get(const u8 *row, int e, float out[8]) {
		const u8 *b = row + (e / 32) * Q5_0W::BYTES;
		const int j = e % 32, sh = j < 16 ? 0 : 4;
		const float d = half_at(b);
		const u32 qh = b[2] | (b[3] << 8) | (b[4] << 16) | ((u32)b[5] << 24);
		const u8 *q = b + 6 + (j & 15);
#pragma unroll
		for (int k = 0; k < 8; k++) {
			const int v = ((q[k] >> sh) & 0xF) | (int)(((qh >> (j + k)) & 1) << 4); // signed: v - 16 < 0
			out[k] = d * (float)(v - 16);
		}
	}
};

template <>
struct Elem8<Q5_1W> {
	static __device__ __forceinline__ void get(const u8 *row, int e, float out[8]) {
		const u8 *b = row + (e / 32) * Q5_1W::BYTES;
		const int j = e % 32, sh = j < 16 ? 0 : 4;
		const float d = half_at(b), m = half_at(b + 2);
		const u32 qh = b[4] | (b[5] << 8) | (b[6] << 16) | ((u32)b[7] << 24);
		const u8 *q = b + 8 + (j & 15);
#pragma unroll
		for (int k = 0; k < 8; k++) out[k] = d * (float)(((q[k] >> sh) & 0xF) | (((qh >> (j + k)) & 1) << 4)) + m;
	}
};

template <>
struct Elem8<Q8_0W> {
	static __device__ __forceinline__ void get(const u8 *row, int e, float out[8]) {
		const u8 *b = row + (e / 32) * Q8_0W::BYTES;
		const float d = half_at(b);
		const u16 *q = (const u16 *)(b + 2 + e % 32); // 2-byte aligned: blocks of 34 bytes
#pragma unroll
		for (int k = 0; k < 4; k++) {
			const u32 w = q[k];
			out[2 * k] = d * (float)(signed char)(w & 0xFF);
			out[2 * k + 1] = d * (float)(signed char)(w >> 8);
		}
	}
};

// Q4_K: x = (d·sc)·q − dmin·m over a sub-block of 32, as Q4_KW::elem computes it.
template <>
struct Elem8<Q4_KW> {
	static __device__ __forceinline__ void get(const u8 *row, int e, float out[8]) {
		const u8 *b = row + (e / 256) * Q4_KW::BYTES;
		const int r = e % 256, c = r / 64, hi = (r % 64) / 32, l = r % 32;
		float sc, m;
		scale_min_k4(2 * c + hi, b + 4, &sc, &m);
		const float d = half_at(b) * sc, mn = half_at(b + 2) * m;
		const u8 *q = b + 16 + c * 32 + l;
#pragma unroll
		for (int j = 0; j < 8; j++) out[j] = d * (float)((q[j] >> (4 * hi)) & 0xF) - mn;
	}
};

// Q5_K: Q4_K's nibbles with a fifth bit from qh.
template <>
struct Elem8<Q5_KW> {
	static __device__ __forceinline__ void get(const u8 *row, int e, float out[8]) {
		const u8 *b = row + (e / 256) * Q5_KW::BYTES;
		const int r = e % 256, c = r / 64, hi = (r % 64) / 32, l = r % 32;
		float sc, m;
		scale_min_k4(2 * c + hi, b + 4, &sc, &m);
		const float d = half_at(b) * sc, mn = half_at(b + 2) * m;
		const u8 *q = b + 48 + c * 32 + l, *qh = b + 16 + l;
#pragma unroll
		for (int j = 0; j < 8; j++) {
			const int v = ((q[j] >> (4 * hi)) & 0xF) | (((qh[j] >> (2 * c + hi)) & 1) << 4);
			out[j] = d * (float)v - mn;
		}
	}
};

// Q6_K: x = (d·sc)·(q − 32), 8 elements in one group of 16 sharing sc.
template <>
struct Elem8<Q6_KW> {
	static __device__ __forceinline__ void get(const u8 *row, int e, float out[8]) {
		const u8 *b = row + (e / 256) * Q6_KW::BYTES;
		const int r = e % 256, n = r / 128, k = (r % 128) / 32, l = r % 32;
		const float d = half_at(b + 208) * (float)(signed char)b[192 + n * 8 + l / 16 + 2 * k];
		const u8 *ql = b + n * 64 + l + (k & 1) * 32, *qh = b + 128 + n * 32 + l;
		const int shl = k >= 2 ? 4 : 0;
#pragma unroll
		for (int j = 0; j < 8; j++) out[j] = d * (float)((((ql[j] >> shl) & 0xF) | (((qh[j] >> (2 * k)) & 3) << 4)) - 32);
	}
};

// dequant8_f16: dequant_f16 with 8 consecutive elements a thread, stored as one 16-byte
// write (cols a multiple of 8, as every block format's rows are): the same values, an
// eighth of the threads and full-width stores. grid (rows, ceil(cols/8/256)).
template <class T>
static __device__ void dequant8_f16(__half *dst, const u8 *src, int cols) {
	const int r = blockIdx.x, e = 8 * (blockIdx.y * blockDim.x + threadIdx.x);
	if (e >= cols) return;
	const u8 *row = src + (size_t)r * (size_t)(cols / T::QK) * T::BYTES;
	float f[8];
	Elem8<T>::get(row, e, f);
	__align__(16) __half h[8];
#pragma unroll
	for (int j = 0; j < 8; j++) h[j] = __float2half_rn(f[j]);
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
