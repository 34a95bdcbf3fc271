// norm.cu: RMS normalisation of each row, times a weight row.
#include "common.cuh"
#include "pdl.cuh"

// Under PDL (sm_90 code, see pdl.cuh) both kernels start with pdl_trigger: the next kernel
// (the mat-vec of the normalised row) may launch, and its blocks take their SMs, at once.
PDL_MARKER(pdl_norm)

// NORM_CACHE is the elements a thread keeps in registers between the two passes; rows
// longer than NORM_CACHE·blockDim.x read the rest twice.
#define NORM_CACHE 8

// The row norms read their weight row, which no kernel writes, before waiting for the
// kernel ahead (pdl.cuh); their entries call pdl_trigger, rms_norm waits. On an H200 this
// took 7B Q4_0 tg128 from 554 to 583 t/s (with the mat-vecs' early loads), 2026-12-02.

// rms_norm: dst[i] = x[i]/rms(x[i]) ⊙ w for each row i of (n, cols); one block per row,
// blockDim.x a multiple of 32 (launched with 1024: a decode row is one block, so its
// latency is the kernel's). llama.cpp: scale = rsqrtf(mean(x²) + eps). With Q8 the row
// is also quantized for the mat-vec kernels as quantize_q8 would (xq n·cols int8, xd
// n·cols/32 scales; cols % 32 == 0). Both variants sum in the same order, so they give
// the same bits. dst may be x.
template <bool Q8>
static __device__ void rms_norm(float *dst, const float *x, const float *__restrict__ w, signed char *xq, float *xd,
                                int cols, float eps) {
	__shared__ float scratch[32];
	const size_t off = (size_t)blockIdx.x * cols;
	const float *xr = x + off;
	float *dr = dst + off;
	const int tid = threadIdx.x, bd = blockDim.x;
	float v[NORM_CACHE], wv[NORM_CACHE];
	float ss = 0.0f;
	// The weight row before the wait for the kernel ahead, x after it.
#pragma unroll
	for (int i = 0; i < NORM_CACHE; i++) {
		const int e = tid + i * bd;
		wv[i] = e < cols ? w[e] : 0.0f;
	}
	pdl_wait();
#pragma unroll
	for (int i = 0; i < NORM_CACHE; i++) {
		const int e = tid + i * bd;
		v[i] = e < cols ? xr[e] : 0.0f;
	}
#pragma unroll
	for (int i = 0; i < NORM_CACHE; i++) ss += v[i] * v[i];
	for (int e = tid + NORM_CACHE * bd; e < cols; e += bd) ss += xr[e] * xr[e];
	ss = block_sum(ss, scratch);
	const float scale = rsqrtf(ss / (float)cols + eps);
	// With Q8, a warp's 32 consecutive elements are one quantization block: cols and
	// blockDim.x are multiples of 32, so whole warps take each branch.
#pragma unroll
	for (int i = 0; i < NORM_CACHE; i++) {
		const int e = tid + i * bd;
		if (e < cols) {
			const float o = scale * v[i] * wv[i];
			dr[e] = o;
			if constexpr (Q8) q8_store(o, xq + off + e, xd + (off + e) / 32);
		}
	}
	for (int e = tid + NORM_CACHE * bd; e < cols; e += bd) {
		const float o = scale * xr[e] * w[e];
		dr[e] = o;
		if constexpr (Q8) q8_store(o, xq + off + e, xd + (off + e) / 32);
	}
}

extern "C" __global__ void rms_norm_f32(float *dst, const float *x, const float *w, int cols, float eps) {
	pdl_trigger();
	rms_norm<false>(dst, x, w, nullptr, nullptr, cols, eps);
}

extern "C" __global__ void rms_norm_q8(float *dst, const float *x, const float *w, signed char *xq, float *xd,
                                       int cols, float eps) {
	pdl_trigger();
	rms_norm<true>(dst, x, w, xq, xd, cols, eps);
}
