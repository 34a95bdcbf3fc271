// wgmma.cu: prompt-batch matmuls of quantized weights on Hopper's warpgroup MMA
// (wgmma.mma_async, sm_90a only: this module is compiled for compute_90a and loaded on
// compute capability 9.0 alone). dst (n, rows) = x (n, cols) · wᵀ with x the F16
// activations (the GEMM path's x16) and w the file's blocks, which are dequantized in
// registers: no F16 copy of the weights is ever written.
//
// A block of two warpgroups computes a tile of WG_BM weight rows × WG_BN activation rows.
// In wgmma terms the weights are A (M = rows, read from registers) and the activations B
// (N = tokens, read from shared memory through a matrix descriptor), D = A·B is the
// tile transposed, accumulated in F32. Each stage of WG_BK columns is copied by the
// tensor memory accelerator (TMA), three box copies one thread issues, completing on the
// stage's mbarrier: the activations as two 128-byte-swizzled K-major atoms of 64 halves
// a row (the map's swizzle is the one the wgmma descriptor names), the weights as one
// box of raw blocks, wbox bytes a row. A box's inner start must be 16-byte aligned, so
// the weight box starts at the stage's first byte rounded down to 16 and is 8 bytes
// wider than the stage's blocks where they need it. A thread then decodes, for its rows
// g and g+8 of its warp's 16, the pairs of elements the A fragment wants (elements 2c,
// 2c+1 of each 8-column chunk, c = lane % 4) into F16 with the block scale multiplied
// in: the same F16 values the dequant8_f16 kernel writes, (q-8)·d rounded once.
#include "common.cuh"

#define WG_BM 128
#define WG_BN 128
#define WG_BK 128
#define WG_THREADS 256
// WG_ATOM is one swizzle atom column of the activation tile: WG_BN rows × 128 bytes.
#define WG_ATOM (WG_BN * 128)

// ---- PTX wrappers ----

static __device__ __forceinline__ u32 smem_addr(const void *p) { return (u32)__cvta_generic_to_shared(p); }

// TMap is a CUtensorMap: the opaque 128 bytes cuTensorMapEncodeTiled writes, passed
// as a __grid_constant__ kernel parameter (the TMA reads it through its address).
struct __align__(64) TMap {
	unsigned long long v[16];
};

// mbar_init makes the mbarrier at bar expect one arrival a phase.
static __device__ __forceinline__ void mbar_init(unsigned long long *bar) {
	asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_addr(bar)) : "memory");
}
// mbar_fence_init makes the initialized mbarriers visible to the async proxy (the TMA).
static __device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// mbar_expect arrives on bar, its phase completing once bytes more have been copied.
static __device__ __forceinline__ void mbar_expect(unsigned long long *bar, u32 bytes) {
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// mbar_wait waits until the phase of bar with the given parity has completed.
static __device__ __forceinline__ void mbar_wait(unsigned long long *bar, u32 parity) {
	asm volatile(
	    "{\n"
	    ".reg .pred done;\n"
	    "WAIT:\n"
	    "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
	    "@!done bra WAIT;\n"
	    "}\n" ::"r"(smem_addr(bar)),
	    "r"(parity)
	    : "memory");
}
// tma2d copies the box of map at (c0 (inner), c1) into shared memory at dst (1 KiB
// aligned for the swizzled maps), completing the bytes on bar.
static __device__ __forceinline__ void tma2d(void *dst, const TMap *map, int c0, int c1, unsigned long long *bar) {
	asm volatile(
	    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
	        smem_addr(dst)),
	    "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
	    : "memory");
}
// fence_async_shared orders the block's shared-memory accesses so far (the barrier
// before it gathered them) before the async proxy's (the TMA's writes of a refill).
static __device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
static __device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
static __device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void wgmma_wait() {
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// fence_regs keeps the compiler from moving the definitions of registers a wgmma reads
// or writes (the accumulators, the A fragments) into the span between a wgmma.fence and
// the wait that retires it: ptxas would then serialize the wgmmas (C7513, C7515).
template <int N>
static __device__ __forceinline__ void fence_regs(float (&r)[N]) {
#pragma unroll
	for (int i = 0; i < N; i++) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
static __device__ __forceinline__ void fence_regs(u32 (&r)[N]) {
#pragma unroll
	for (int i = 0; i < N; i++) asm volatile("" : "+r"(r[i])::"memory");
}

// desc128 is the matrix descriptor of a K-major operand in shared memory with the
// 128-byte swizzle: start address, leading byte offset 1 (unused when swizzled), stride
// byte offset 1024 (from one 8-row group to the next), layout type 1 (128B swizzle).
static __device__ __forceinline__ unsigned long long desc128(const void *p) {
	const unsigned long long a = (smem_addr(p) & 0x3FFFF) >> 4;
	return a | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

// mma64x128 is D (64 × 128, F32, in d as the m64n128 fragment) += A (64 × 16 F16, the
// fragment a) · B (16 × 128 F16 at descriptor b).
static __device__ __forceinline__ void mma64x128(float (&d)[64], const u32 (&a)[4], unsigned long long b) {
	asm volatile(
	    "{\n"
	    ".reg .pred p;\n"
	    "setp.ne.b32 p, %69, 0;\n"
	    "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
	    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
	    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
	    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
	    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
	    "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n"
	    "}\n"
	    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
	      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
	      "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
	      "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
	      "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
	      "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
	      "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
	      "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

// ---- the formats: a stage's raw blocks to A fragments ----

static __device__ __forceinline__ u32 h2_bits(__half2 h) { return *(const u32 *)&h; }
static __device__ __forceinline__ __half2 bits_h2(u32 u) { return *(const __half2 *)&u; }

// spread16 moves byte 1 of q (16 bits) to byte 2: each byte then heads one half of a word.
static __device__ __forceinline__ u32 spread16(u32 q) { return __byte_perm(q, 0, 0x4140); }

// magic_h2 is the two halves 1024 + v for the 4-bit (or 8-bit) fields of v at bits 0
// and 16, less k, times d: (field - k + 1024)·d with k the format's offset plus 1024.
static __device__ __forceinline__ u32 magic_h2(u32 v, __half2 k, __half2 d) {
	return h2_bits(__hmul2(__hsub2(bits_h2(v | 0x64006400), k), d));
}

// Fragments are a thread's A fragments of one stage: WG_BK/16 k16 steps, each the pairs
// of (row g, chunk 0), (row g+8, chunk 0), (row g, chunk 1), (row g+8, chunk 1).
typedef u32 Fragments[WG_BK / 16][4];

// Each format T has QK and BYTES (its block) and decode(a, w0, w1, c): a's fragments of
// the stage from rows w0 (g) and w1 (g+8) of its weight box, for lane quad c.
struct WgQ4_0 {
	enum { QK = 32, BYTES = 18 };
	// Step 2b covers elements 0..15 of block b: the low nibbles of qs[2c], qs[2c+1]
	// (chunk 0) and qs[8+2c], qs[9+2c] (chunk 1); step 2b+1 their high nibbles.
	static __device__ __forceinline__ void decode(Fragments &a, const u8 *w0, const u8 *w1, int c) {
		const __half2 k = bits_h2(0x64086408); // 1032 = 1024 + 8
#pragma unroll
		for (int b = 0; b < WG_BK / QK; b++)
#pragma unroll
			for (int r = 0; r < 2; r++) {
				const u8 *blk = (r ? w1 : w0) + b * BYTES;
				const __half2 d = __half2half2(*(const __half *)blk);
				const u32 lo = spread16(*(const u16 *)(blk + 2 + 2 * c)), hi = spread16(*(const u16 *)(blk + 10 + 2 * c));
				a[2 * b][r] = magic_h2(lo & 0x000F000F, k, d);
				a[2 * b][r + 2] = magic_h2(hi & 0x000F000F, k, d);
				a[2 * b + 1][r] = magic_h2((lo >> 4) & 0x000F000F, k, d);
				a[2 * b + 1][r + 2] = magic_h2((hi >> 4) & 0x000F000F, k, d);
			}
	}
};

struct WgQ8_0 {
	enum { QK = 32, BYTES = 34 };
	// Step 2b+t covers elements 16t..16t+15 of block b: int8 qs[16t+2c..] (chunk 0) and
	// qs[16t+8+2c..] (chunk 1), made unsigned by flipping the sign bits.
	static __device__ __forceinline__ void decode(Fragments &a, const u8 *w0, const u8 *w1, int c) {
		const __half2 k = bits_h2(0x64806480); // 1152 = 1024 + 128
#pragma unroll
		for (int b = 0; b < WG_BK / QK; b++)
#pragma unroll
			for (int r = 0; r < 2; r++) {
				const u8 *blk = (r ? w1 : w0) + b * BYTES;
				const __half2 d = __half2half2(*(const __half *)blk);
#pragma unroll
				for (int t = 0; t < 2; t++) {
					const u8 *q = blk + 2 + 16 * t + 2 * c;
					a[2 * b + t][r] = magic_h2(spread16(*(const u16 *)q) ^ 0x00800080, k, d);
					a[2 * b + t][r + 2] = magic_h2(spread16(*(const u16 *)(q + 8)) ^ 0x00800080, k, d);
				}
			}
	}
};

// ---- the kernel ----

// wbox is the bytes between weight rows in a stage: the stage's blocks rounded up to 16
// (80 for Q4_0, a stride that spreads the 8 rows a warp reads over the banks).
template <class T>
static constexpr __host__ __device__ int wbox() {
	return (WG_BK / T::QK * T::BYTES + 15) & ~15;
}

// stage_bytes is the shared memory of one stage: the activation atoms, then the weights.
template <class T>
static constexpr __host__ __device__ int stage_bytes() {
	return 2 * WG_ATOM + ((WG_BM * wbox<T>() + 1023) & ~1023);
}

// issue starts the stage's WG_BK/16 wgmmas into acc.
static __device__ __forceinline__ void issue(float (&acc)[64], Fragments &a, const u8 *st) {
#pragma unroll
	for (int s = 0; s < WG_BK / 16; s++) fence_regs(a[s]);
	fence_regs(acc);
	wgmma_fence();
#pragma unroll
	for (int s = 0; s < WG_BK / 16; s++) mma64x128(acc, a[s], desc128(st + (s >> 2) * WG_ATOM + (s & 3) * 32));
	wgmma_commit();
	fence_regs(acc);
}

// wg_matmul: grid (ceil(rows/WG_BM), ceil(n/WG_BN)), WG_THREADS threads, STAGES·
// stage_bytes<T>() + 1024 bytes of dynamic shared memory; cols % (2·WG_BK) == 0. xmap is
// the activations (F16, dims cols × n, box 64 × WG_BN, 128-byte swizzle), wmap the
// weights (bytes, dims rowBytes × rows, box wbox × WG_BM, no swizzle); both fill past
// the ends with zeros.
//
// The pipeline: stage kt+STAGES-2 is copied while stage kt is decoded and its wgmmas
// run beside those of stage kt-1 (two sets of A fragments in registers); a stage buffer
// is refilled once the wgmmas of both warpgroups that read it have completed (each
// waits for all but its latest batch, then the block meets at the barrier). The stages
// alternate between the two fragment sets on every path through the loop (an even
// number of stages), or ptxas, unable to prove the sets free, serializes the wgmmas.
template <class T, int STAGES>
static __device__ void wg_matmul(const TMap *xmap, const TMap *wmap, float *__restrict__ dst, int rows, int cols, int n) {
	static_assert(STAGES >= 3, "the pipeline keeps two stages in use while it fills another");
	extern __shared__ u8 smem_raw[];
	__shared__ unsigned long long full[STAGES];
	u8 *smem = (u8 *)(((size_t)smem_raw + 1023) & ~(size_t)1023);
	constexpr int SB = stage_bytes<T>(), WB = wbox<T>(), TB = WG_BK / T::QK * T::BYTES;
	constexpr u32 TX = 2 * WG_ATOM + WG_BM * WB; // bytes a stage's three boxes bring
	const int row0 = blockIdx.x * WG_BM, tok0 = blockIdx.y * WG_BN, kts = cols / WG_BK;
	const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
	const int c = lane % 4, r0 = (warp / 4) * 64 + (warp % 4) * 16 + lane / 4;

	// load (thread 0 only) starts the copies of stage kt into its buffer.
	auto load = [&](int kt) {
		u8 *st = smem + (kt % STAGES) * SB;
		unsigned long long *bar = &full[kt % STAGES];
		mbar_expect(bar, TX);
		tma2d(st, xmap, kt * WG_BK, tok0, bar);
		tma2d(st + WG_ATOM, xmap, kt * WG_BK + 64, tok0, bar);
		tma2d(st + 2 * WG_ATOM, wmap, (kt * TB) & ~15, row0, bar);
	};
	if (threadIdx.x == 0) {
#pragma unroll
		for (int s = 0; s < STAGES; s++) mbar_init(&full[s]);
		mbar_fence_init();
	}
	__syncthreads();
	if (threadIdx.x == 0) {
#pragma unroll
		for (int s = 0; s < STAGES - 2; s++)
			if (s < kts) load(s);
	}
	float acc[64];
#pragma unroll
	for (int i = 0; i < 64; i++) acc[i] = 0.0f;
	fence_regs(acc);
	Fragments a0, a1;
	auto step = [&](int kt, Fragments &a) {
		mbar_wait(&full[kt % STAGES], (kt / STAGES) & 1);
		__syncthreads(); // stage kt is in; stage kt-2's wgmmas are done in both warpgroups
		const int next = kt + STAGES - 2;
		if (threadIdx.x == 0 && next < kts) {
			fence_async_shared(); // the decoding's reads of that buffer before the TMA's writes
			load(next);
		}
		const u8 *st = smem + (kt % STAGES) * SB;
		const u8 *wr = st + 2 * WG_ATOM + ((kt * TB) & 15) + r0 * WB;
		T::decode(a, wr, wr + 8 * WB, c);
		issue(acc, a, st);
		wgmma_wait<1>();
	};
	for (int kt = 0; kt < kts; kt += 2) { // kts is even: on every path a0 and a1 alternate
		step(kt, a0);
		step(kt + 1, a1);
	}
	wgmma_wait<0>();
	fence_regs(acc);

	// acc[4j + e] is (row r0, token 8j + 2c + e), acc[4j + 2 + e] row r0 + 8.
	const int ra = row0 + r0, rb = ra + 8;
#pragma unroll
	for (int j = 0; j < WG_BN / 8; j++)
#pragma unroll
		for (int e = 0; e < 2; e++) {
			const int tok = tok0 + 8 * j + 2 * c + e;
			if (tok >= n) continue;
			float *o = dst + (size_t)tok * rows;
			if (ra < rows) o[ra] = acc[4 * j + e];
			if (rb < rows) o[rb] = acc[4 * j + 2 + e];
		}
}

#define WG_ENTRY(name, T, S) \
	extern "C" __global__ void __launch_bounds__(WG_THREADS, 1) \
	    wg_##name##_s##S(const __grid_constant__ TMap xmap, const __grid_constant__ TMap wmap, float *dst, int rows, \
	                     int cols, int n) { \
		wg_matmul<T, S>(&xmap, &wmap, dst, rows, cols, n); \
	}

WG_ENTRY(q4_0, WgQ4_0, 3)
WG_ENTRY(q4_0, WgQ4_0, 4)
WG_ENTRY(q4_0, WgQ4_0, 5)
WG_ENTRY(q8_0, WgQ8_0, 3)
WG_ENTRY(q8_0, WgQ8_0, 4)
