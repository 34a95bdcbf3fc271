// mmq.cu: dst (n, rows) = x (n, cols) · wᵀ for prompt batches, w (rows, cols) quantized,
// on the int8 tensor cores: the activations quantized to int8 blocks of 32 (quantize_q8
// of matvec.cu, Q8_0's rounding, the same int8 copy the mat-vec kernels read), the
// weights read as they are stored and unpacked to int8 in shared memory by the tile
// loader, mma.sync m16n8k32 s8·s8→s32 per block of 32 (two m16n8k16 for the formats
// with a scale per 16 weights), each block's exact integer sum scaled by its weight
// and activation scales into float32 accumulators, as llama.cpp's MMQ does. No
// dequantized copy of the weights exists at any point.
//
// A block of MMQ_THREADS threads (8 warps: 4 along the weight rows × 2 along the
// tokens) computes MMQ_BM weight rows × BN tokens; it walks cols by stages of MMQ_KT
// through two buffers in dynamic shared memory: while the warps multiply stage s from
// one buffer (ldmatrix, mma), the global loads of stage s+1 are in flight into
// registers, and after the multiply they are unpacked to int8 into the other buffer;
// one __syncthreads per stage. Launch: grid (ceil(rows/MMQ_BM), ceil(n/BN)), block
// MMQ_THREADS, dynamic shared memory 2·MMQLayout<T, BN>::SIZE bytes (mmqSmem in mmq.go;
// the kernel traps on less); entry mmq_<type>_<BN>.
//
// Weight formats: MQ<type> below, one struct each, gives SUB (weights per scale: 32, or
// 16 for Q2_K, Q3_K, Q6_K), MIN (whether a weight is s·q + m rather than s·q), and
//   load(row, blk, v, s, m)   the 32 weights of 32-element block blk of a weight row as
//                             int8 q (v: 8 words, element order), their scale(s) s and
//                             offset(s) m (one per SUB weights)
// so that weight e = s·q + m. A format may split load in two (Split<T>, see there), so
// that its global loads are issued before the multiply of the stage before and unpacked
// after it; the others load in the unpacking phase. These functions are the only code
// that reads the stored layout.
#include "types.cuh"

#define MMQ_BM 128                   // weight rows per block
#define MMQ_KT 128                   // cols per stage: 4 blocks of 32
#define MMQ_KB (MMQ_KT / 32)         // blocks of 32 per stage
#define MMQ_STRIDE (MMQ_KT + 16)     // bytes per row in shared memory: conflict-free ldmatrix
#define MMQ_THREADS 256
#define MMQ_MAGIC 0x4B400000         // the bits of 1.5·2^23: int i + these bits = float 1.5·2^23 + i
#define MMQ_MAGIC_F 12582912.0f

// sub_bytes returns the 4 bytes of q (each below 128) less the bytes of offs (each at
// most 128) as int8: no byte borrows from the next.
static __device__ __forceinline__ int sub_bytes(int q, int offs) {
	return (int)((((u32)q | 0x80808080u) - (u32)offs) ^ 0x80808080u);
}

// u32_at2 reads 4 bytes at a 2-byte aligned p.
static __device__ __forceinline__ int u32_at2(const u8 *p) { return (int)u32_at(p); }

// Q4_0: half d; u8 qs[16]; element j < 16 is lo(qs[j]) - 8, j ≥ 16 hi(qs[j-16]) - 8.
struct MQ4_0 {
	enum { SUB = 32, MIN = 0, QK = 32, BYTES = 18 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)blk * BYTES;
		s[0] = half_at(b);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int q = u32_at2(b + 2 + 4 * j);
			v[j] = sub_bytes(q & 0x0F0F0F0F, 0x08080808);
			v[4 + j] = sub_bytes((q >> 4) & 0x0F0F0F0F, 0x08080808);
		}
	}
};

// Q4_1: half d, m; u8 qs[16]; weight = d·q + m.
struct MQ4_1 {
	enum { SUB = 32, MIN = 1, QK = 32, BYTES = 20 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)blk * BYTES;
		s[0] = half_at(b);
		m[0] = half_at(b + 2);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int q = *(const int *)(b + 4 + 4 * j);
			v[j] = q & 0x0F0F0F0F;
			v[4 + j] = (q >> 4) & 0x0F0F0F0F;
		}
	}
};

// Q5_0: half d; u8 qh[4]; u8 qs[16]; the fifth bit of element j is bit j of qh; q - 16.
struct MQ5_0 {
	enum { SUB = 32, MIN = 0, QK = 32, BYTES = 22 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)blk * BYTES;
		s[0] = half_at(b);
		const u32 qh = u32_at(b + 2);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int q = u32_at2(b + 6 + 4 * j);
			v[j] = sub_bytes((q & 0x0F0F0F0F) | spread4(qh >> (4 * j)), 0x10101010);
			v[4 + j] = sub_bytes(((q >> 4) & 0x0F0F0F0F) | spread4(qh >> (16 + 4 * j)), 0x10101010);
		}
	}
};

// Q5_1: half d, m; u8 qh[4]; u8 qs[16]; weight = d·q + m.
struct MQ5_1 {
	enum { SUB = 32, MIN = 1, QK = 32, BYTES = 24 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)blk * BYTES;
		s[0] = half_at(b);
		m[0] = half_at(b + 2);
		const u32 qh = *(const u32 *)(b + 4);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int q = *(const int *)(b + 8 + 4 * j);
			v[j] = (q & 0x0F0F0F0F) | spread4(qh >> (4 * j));
			v[4 + j] = ((q >> 4) & 0x0F0F0F0F) | spread4(qh >> (16 + 4 * j));
		}
	}
};

// Q8_0: half d; i8 qs[32].
struct MQ8_0 {
	enum { SUB = 32, MIN = 0, QK = 32, BYTES = 34 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)blk * BYTES;
		s[0] = half_at(b);
#pragma unroll
		for (int j = 0; j < 8; j++) v[j] = u32_at2(b + 2 + 4 * j);
	}
};

// Split<T>::value says whether T splits load into
//   fetch(row, blk, aligned, raw)   the global loads of block blk into raw (registers),
//                                   nothing that waits for them
//   unpack(raw, blk, v, s, m)       load's results from raw
// aligned: every row's bytes of every stage start 4-byte aligned (cols a multiple of
// MMQ_KT, 4-byte aligned rows), so that the 2-byte aligned blocks of Q4_0 and Q8_0 may
// be read as the aligned words around them: a block that starts 4-byte aligned (an even
// one of its stage) then reads 2 bytes of the next block of the same stage.
template <class T>
struct Split {
	enum { value = 0 };
	struct Raw {};
};

// words_at reads the N words from b when aligned: the aligned words from b rounded down
// to 4 bytes (o = 2 when b is 2 mod 4), else from the 2-byte aligned b with 2-byte
// loads (o = 0), the last word's upper half 0, so that no byte past b + 4N - 2 is read.
template <int N>
static __device__ __forceinline__ void words_at(const u8 *b, bool aligned, u32 (&w)[N], int &o) {
	if (aligned) {
		const u32 *p = (const u32 *)((size_t)b & ~(size_t)3);
		o = (int)((size_t)b & 2);
#pragma unroll
		for (int i = 0; i < N; i++) w[i] = p[i];
	} else {
		const u16 *p = (const u16 *)b;
		o = 0;
#pragma unroll
		for (int i = 0; i < N - 1; i++) w[i] = (u32)p[2 * i] | ((u32)p[2 * i + 1] << 16);
		w[N - 1] = p[2 * N - 2];
	}
}

// word_at is the 4 bytes at b + 2 + 4j from words_at's words (the bytes after a block's
// half d, which makes Q4_0 and Q8_0 blocks 2 mod 4 in every other position).
template <int N>
static __device__ __forceinline__ int word_at(const u32 (&w)[N], int o, int j) {
	return (int)(o ? w[j + 1] : __funnelshift_r(w[j], w[j + 1], 16));
}

// half_of is the half at b from words_at's words, as a float.
template <int N>
static __device__ __forceinline__ float half_of(const u32 (&w)[N], int o) {
	return __half2float(__ushort_as_half((u16)(o ? w[0] >> 16 : w[0])));
}

template <>
struct Split<MQ4_0> {
	enum { value = 1 };
	struct Raw {
		u32 w[5];
		int o;
	};
	static __device__ __forceinline__ void fetch(const u8 *row, int blk, bool aligned, Raw &r) {
		words_at(row + (size_t)blk * MQ4_0::BYTES, aligned, r.w, r.o);
	}
	static __device__ __forceinline__ void unpack(const Raw &r, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		s[0] = half_of(r.w, r.o);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int q = word_at(r.w, r.o, j);
			v[j] = sub_bytes(q & 0x0F0F0F0F, 0x08080808);
			v[4 + j] = sub_bytes((q >> 4) & 0x0F0F0F0F, 0x08080808);
		}
	}
};

template <>
struct Split<MQ8_0> {
	enum { value = 1 };
	struct Raw {
		u32 w[9];
		int o;
	};
	static __device__ __forceinline__ void fetch(const u8 *row, int blk, bool aligned, Raw &r) {
		words_at(row + (size_t)blk * MQ8_0::BYTES, aligned, r.w, r.o);
	}
	static __device__ __forceinline__ void unpack(const Raw &r, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		s[0] = half_of(r.w, r.o);
#pragma unroll
		for (int j = 0; j < 8; j++) v[j] = word_at(r.w, r.o, j);
	}
};

// k4_scale_min is scale_min_k4 (dequant.cuh) as integers: sub-block j's 6-bit scale and min.
static __device__ __forceinline__ void k4_scale_min(int j, const u8 *q, int &sc, int &mn) {
	if (j < 4) {
		sc = q[j] & 63;
		mn = q[j + 4] & 63;
	} else {
		sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
		mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

// Q2_K: u8 scales[16]; u8 qs[64]; half d, dmin. Block jb (0..7) of a super-block: n =
// jb/4, j = jb%4; element l is (qs[32n + l] >> 2j) & 3, its 16-weight half h = l/16 has
// scale byte scales[8n + 2j + h]: weight = d·(sc & 15)·q - dmin·(sc >> 4).
struct MQ2_K {
	enum { SUB = 16, MIN = 1, QK = 256, BYTES = 84 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)(blk / 8) * BYTES;
		const int jb = blk % 8, n = jb / 4, j = jb % 4;
		const float d = half_at(b + 80), dmin = half_at(b + 82);
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int sc = b[8 * n + 2 * j + h];
			s[h] = d * (float)(sc & 0xF);
			m[h] = -dmin * (float)(sc >> 4);
		}
#pragma unroll
		for (int w = 0; w < 8; w++) v[w] = (*(const int *)(b + 16 + 32 * n + 4 * w) >> (2 * j)) & 0x03030303;
	}
};

// Q3_K: u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d. Block jb: n = jb/4, j = jb%4;
// element l: q = (qs[32n + l] >> 2j) & 3, minus 4 unless bit 4n+j of hmask[l] is set;
// scale index is = 8n + 2j + l/16 (6 bits, minus 32).
struct MQ3_K {
	enum { SUB = 16, MIN = 0, QK = 256, BYTES = 110 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)(blk / 8) * BYTES;
		const int jb = blk % 8, n = jb / 4, j = jb % 4;
		const float d = half_at(b + 108);
		const u8 *sc = b + 96;
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int is = 8 * n + 2 * j + h, grp = is / 4, k = is % 4;
			const int low = (grp & 1) ? sc[4 + k] : sc[k];
			s[h] = d * (float)(((grp < 2 ? low & 0xF : low >> 4) | (((sc[8 + k] >> (2 * grp)) & 3) << 4)) - 32);
		}
#pragma unroll
		for (int w = 0; w < 8; w++) {
			const int q = (u32_at2(b + 32 + 32 * n + 4 * w) >> (2 * j)) & 0x03030303;
			const int hm = (u32_at2(b + 4 * w) >> (4 * n + j)) & 0x01010101;
			v[w] = sub_bytes(q | (hm << 2), 0x04040404);
		}
	}
};

// Q4_K: half d, dmin; u8 scales[12]; u8 qs[128]. Block j of a super-block is the low (j
// even) or high (j odd) nibbles of qs[32·(j/2) ...+32]: weight = d·sc·q - dmin·mn.
struct MQ4_K {
	enum { SUB = 32, MIN = 1, QK = 256, BYTES = 144 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)(blk / 8) * BYTES;
		const int j = blk % 8;
		int sc, mn;
		k4_scale_min(j, b + 4, sc, mn);
		s[0] = half_at(b) * (float)sc;
		m[0] = -half_at(b + 2) * (float)mn;
		const int4 *q = (const int4 *)(b + 16 + 32 * (j / 2)); // 144-byte blocks: 16-byte aligned
		const int4 q0 = q[0], q1 = q[1];
		const int sh = 4 * (j & 1);
		v[0] = (q0.x >> sh) & 0x0F0F0F0F, v[1] = (q0.y >> sh) & 0x0F0F0F0F;
		v[2] = (q0.z >> sh) & 0x0F0F0F0F, v[3] = (q0.w >> sh) & 0x0F0F0F0F;
		v[4] = (q1.x >> sh) & 0x0F0F0F0F, v[5] = (q1.y >> sh) & 0x0F0F0F0F;
		v[6] = (q1.z >> sh) & 0x0F0F0F0F, v[7] = (q1.w >> sh) & 0x0F0F0F0F;
	}
};

// Q4_K's split: the header (d, dmin, the 12 scale bytes) and the block's 32 quant bytes,
// all aligned (144-byte super-blocks in 16-byte aligned rows).
template <>
struct Split<MQ4_K> {
	enum { value = 1 };
	struct Raw {
		int4 q0, q1;
		u32 dm, s0, s1, s2;
	};
	static __device__ __forceinline__ void fetch(const u8 *row, int blk, bool aligned, Raw &r) {
		const u8 *b = row + (size_t)(blk / 8) * MQ4_K::BYTES;
		const u32 *h = (const u32 *)b;
		r.dm = h[0], r.s0 = h[1], r.s1 = h[2], r.s2 = h[3];
		const int4 *q = (const int4 *)(b + 16 + 32 * ((blk % 8) / 2));
		r.q0 = q[0], r.q1 = q[1];
	}
	// sb is scale byte k (k not known at compile time: selects, not an array in local memory).
	static __device__ __forceinline__ int sb(const Raw &r, int k) {
		return (int)(((k < 4 ? r.s0 : k < 8 ? r.s1 : r.s2) >> (8 * (k & 3))) & 0xFF);
	}
	static __device__ __forceinline__ void unpack(const Raw &r, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const int j = blk % 8;
		int sc, mn;
		if (j < 4) {
			sc = sb(r, j) & 63;
			mn = sb(r, j + 4) & 63;
		} else {
			sc = (sb(r, j + 4) & 0xF) | ((sb(r, j - 4) >> 6) << 4);
			mn = (sb(r, j + 4) >> 4) | ((sb(r, j) >> 6) << 4);
		}
		s[0] = __half2float(__ushort_as_half((u16)r.dm)) * (float)sc;
		m[0] = -__half2float(__ushort_as_half((u16)(r.dm >> 16))) * (float)mn;
		const int sh = 4 * (j & 1);
		v[0] = (r.q0.x >> sh) & 0x0F0F0F0F, v[1] = (r.q0.y >> sh) & 0x0F0F0F0F;
		v[2] = (r.q0.z >> sh) & 0x0F0F0F0F, v[3] = (r.q0.w >> sh) & 0x0F0F0F0F;
		v[4] = (r.q1.x >> sh) & 0x0F0F0F0F, v[5] = (r.q1.y >> sh) & 0x0F0F0F0F;
		v[6] = (r.q1.z >> sh) & 0x0F0F0F0F, v[7] = (r.q1.w >> sh) & 0x0F0F0F0F;
	}
};

// Q5_K: half d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]. As Q4_K, with the fifth bit
// of element l of block j bit j of qh[l].
struct MQ5_K {
	enum { SUB = 32, MIN = 1, QK = 256, BYTES = 176 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)(blk / 8) * BYTES;
		const int j = blk % 8;
		int sc, mn;
		k4_scale_min(j, b + 4, sc, mn);
		s[0] = half_at(b) * (float)sc;
		m[0] = -half_at(b + 2) * (float)mn;
		const int sh = 4 * (j & 1);
#pragma unroll
		for (int w = 0; w < 8; w++) {
			const int q = *(const int *)(b + 48 + 32 * (j / 2) + 4 * w); // 176-byte blocks: 4-byte aligned
			const int h = *(const int *)(b + 16 + 4 * w);
			v[w] = ((q >> sh) & 0x0F0F0F0F) | (((h >> j) & 0x01010101) << 4);
		}
	}
};

// Q6_K: u8 ql[128]; u8 qh[64]; i8 scales[16]; half d. Block jb: n = jb/4, k = jb%4;
// element l: q = ((ql[64n + 32(k&1) + l] >> 4(k≥2)) & 15) | ((qh[32n + l] >> 2k) & 3) << 4,
// minus 32; scale scales[8n + 2k + l/16].
struct MQ6_K {
	enum { SUB = 16, MIN = 0, QK = 256, BYTES = 210 };
	static __device__ __forceinline__ void load(const u8 *row, int blk, int (&v)[8], float (&s)[2], float (&m)[2]) {
		const u8 *b = row + (size_t)(blk / 8) * BYTES;
		const int jb = blk % 8, n = jb / 4, k = jb % 4;
		const float d = half_at(b + 208);
		s[0] = d * (float)(signed char)b[192 + 8 * n + 2 * k];
		s[1] = d * (float)(signed char)b[192 + 8 * n + 2 * k + 1];
		const u8 *ql = b + 64 * n + 32 * (k & 1), *qh = b + 128 + 32 * n;
		const int shl = k >= 2 ? 4 : 0;
#pragma unroll
		for (int w = 0; w < 8; w++) {
			const int q = ((u32_at2(ql + 4 * w) >> shl) & 0x0F0F0F0F) | (((u32_at2(qh + 4 * w) >> (2 * k)) & 0x03030303) << 4);
			v[w] = sub_bytes(q, 0x20202020);
		}
	}
};

// The warp-wide primitives; a host emulation (a test harness outside the build) may
// define MMQ_HOST_EMULATION and its own.
#ifndef MMQ_HOST_EMULATION
static __device__ __forceinline__ u32 smem_addr(const void *p) { return (u32)__cvta_generic_to_shared(p); }

// ldsm4 is ldmatrix .x4: lanes 8i..8i+7 give the row addresses of matrix i, which lands
// in r[i] (each lane: row lane/4, bytes 4·(lane%4)..+3 of each matrix).
static __device__ __forceinline__ void ldsm4(u32 addr, int &r0, int &r1, int &r2, int &r3) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
	             : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
	             : "r"(addr));
}

// mma_k32 is d = a·b + c (every element of c the same) for A 16×32 and B 32×8 int8.
// Fragments (PTX ISA, mma.m16n8k32 .s8; g = lane/4, t = lane%4): a0 row g, cols 4t..4t+3;
// a1 row g+8, same cols; a2, a3 the same rows at cols 16+4t; b0 col g, k 4t..4t+3; b1 k
// 16+4t..; d0, d1 row g, cols 2t, 2t+1; d2, d3 row g+8.
static __device__ __forceinline__ void mma_k32(int (&d)[4], int a0, int a1, int a2, int a3, int b0, int b1, int c) {
	asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
	    "{%10, %11, %12, %13};"
	    : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
	    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c), "r"(c), "r"(c), "r"(c));
}

// mma_k16 is mma_k32 for K = 16: a0 row g, a1 row g+8, cols 4t..4t+3; b0 k 4t..4t+3.
static __device__ __forceinline__ void mma_k16(int (&d)[4], int a0, int a1, int b0, int c) {
	asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
	    : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
	    : "r"(a0), "r"(a1), "r"(b0), "r"(c), "r"(c), "r"(c), "r"(c));
}

#endif

// ifl is the int32 i that an mma started from MMQ_MAGIC left as magic + i, as a float:
// exact for |i| < 2^22 (every block sum here: at most 32·128·127), without I2F.
static __device__ __forceinline__ float ifl(int magic_plus_i) { return __int_as_float(magic_plus_i) - MMQ_MAGIC_F; }

// MMQLayout is one buffer of a stage in dynamic shared memory, byte offsets: the int8
// weights (MMQ_BM rows of MMQ_STRIDE) and activations (BN rows), the weight scales and
// offsets [KS][MMQ_BM + 8], the activation scales [MMQ_KB][BN + 8] and the scales times
// the sums of their SUB int8 activations [KS][BN + 8] (for the formats with offsets).
// Every part starts 16-byte aligned. mmqSmem (mmq.go) computes 2·SIZE the same way.
template <class T, int BN>
struct MMQLayout {
	enum {
		KS = MMQ_KT / T::SUB,
		KSM = T::MIN ? KS : 0,
		A = 0,
		B = A + MMQ_BM * MMQ_STRIDE,
		AS = B + BN * MMQ_STRIDE,
		AM = AS + KS * (MMQ_BM + 8) * 4,
		BD = AM + KSM * (MMQ_BM + 8) * 4,
		BS = BD + MMQ_KB * (BN + 8) * 4,
		SIZE = BS + KSM * (BN + 8) * 4,
	};
};

// mmq computes the block (blockIdx.x, blockIdx.y) of dst; see the top of the file.
template <class T, int BN>
static __device__ __forceinline__ void mmq(float *__restrict__ dst, const u8 *__restrict__ w,
                                           const signed char *__restrict__ xq, const float *__restrict__ xd,
                                           int rows, int cols, int n) {
	using L = MMQLayout<T, BN>;
	constexpr int MT = 2;       // m16 tiles per warp: 32 rows
	constexpr int NT = BN / 16; // n8 tiles per warp: BN/2 tokens
	constexpr int SPB = 32 / T::SUB; // scales per block of 32
	constexpr int UA = MMQ_BM * MMQ_KB / MMQ_THREADS;                 // weight blocks per thread and stage
	constexpr int UB = (BN * MMQ_KB + MMQ_THREADS - 1) / MMQ_THREADS; // activation blocks
	constexpr bool SPLIT = Split<T>::value;
#ifdef MMQ_HOST_EMULATION
	u8 *smem = mmq_emu_smem;
#else
	extern __shared__ __align__(16) u8 smem[];
	{
		u32 dyn;
		asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
		if (dyn < 2u * L::SIZE) __trap();
	}
#endif

	const int tid = threadIdx.x, lane = tid % WARP, warp = tid / WARP;
	const int g = lane / 4, t = lane % 4;
	const int wm0 = 32 * (warp % 4), wn0 = (BN / 2) * (warp / 4);
	const int row0 = blockIdx.x * MMQ_BM, n0 = blockIdx.y * BN;
	const int nblk = cols / 32, nst = (cols + MMQ_KT - 1) / MMQ_KT;
	const size_t rowBytes = (size_t)(cols / T::QK) * T::BYTES;
	const bool aligned = cols % MMQ_KT == 0 && rowBytes % 4 == 0 && ((size_t)w & 3) == 0;

	float acc[MT][NT][4];
#pragma unroll
	for (int i = 0; i < MT; i++)
#pragma unroll
		for (int j = 0; j < NT; j++)
#pragma unroll
			for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

	// The next stage in registers: weight unit it is block (tid + it·MMQ_THREADS) % MMQ_KB
	// of tile row (tid + it·MMQ_THREADS) / MMQ_KB (4 threads read a row's stage),
	// activation unit it the same of tile token.
	typename Split<T>::Raw raw[UA];
	int4 xlo[UB], xhi[UB];
	float xdx[UB];

	auto fetch = [&](int k0) {
		const int kb0 = k0 / 32;
#pragma unroll
		for (int it = 0; it < UA; it++) {
			const int u = tid + it * MMQ_THREADS, r = u / MMQ_KB, blk = kb0 + u % MMQ_KB;
			if constexpr (SPLIT) {
				if (row0 + r < rows && blk < nblk) Split<T>::fetch(w + (size_t)(row0 + r) * rowBytes, blk, aligned, raw[it]);
			}
		}
#pragma unroll
		for (int it = 0; it < UB; it++) {
			const int u = tid + it * MMQ_THREADS, c = u / MMQ_KB, blk = kb0 + u % MMQ_KB;
			xlo[it] = xhi[it] = make_int4(0, 0, 0, 0);
			xdx[it] = 0.0f;
			if (u < BN * MMQ_KB && n0 + c < n && blk < nblk) {
				const int4 *p = (const int4 *)(xq + (size_t)(n0 + c) * cols + 32 * blk);
				xlo[it] = p[0];
				xhi[it] = p[1];
				xdx[it] = xd[(size_t)(n0 + c) * nblk + blk];
			}
		}
	};

	auto store = [&](u8 *buf, int k0) {
		const int kb0 = k0 / 32;
		float *sAs = (float *)(buf + L::AS), *sAm = (float *)(buf + L::AM);
		float *sBd = (float *)(buf + L::BD), *sBs = (float *)(buf + L::BS);
#pragma unroll
		for (int it = 0; it < UA; it++) {
			const int u = tid + it * MMQ_THREADS, r = u / MMQ_KB, kb = u % MMQ_KB, blk = kb0 + kb;
			int v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
			float s[2] = {0.0f, 0.0f}, m[2] = {0.0f, 0.0f};
			if (row0 + r < rows && blk < nblk) {
				if constexpr (SPLIT) Split<T>::unpack(raw[it], blk, v, s, m);
				else T::load(w + (size_t)(row0 + r) * rowBytes, blk, v, s, m);
			}
			int4 *p = (int4 *)(buf + L::A + r * MMQ_STRIDE + 32 * kb);
			p[0] = make_int4(v[0], v[1], v[2], v[3]);
			p[1] = make_int4(v[4], v[5], v[6], v[7]);
#pragma unroll
			for (int h = 0; h < SPB; h++) {
				sAs[(SPB * kb + h) * (MMQ_BM + 8) + r] = s[h];
				if constexpr (T::MIN) sAm[(SPB * kb + h) * (MMQ_BM + 8) + r] = m[h];
			}
		}
#pragma unroll
		for (int it = 0; it < UB; it++) {
			const int u = tid + it * MMQ_THREADS, c = u / MMQ_KB, kb = u % MMQ_KB;
			if (u >= BN * MMQ_KB) continue;
			int4 *p = (int4 *)(buf + L::B + c * MMQ_STRIDE + 32 * kb);
			p[0] = xlo[it];
			p[1] = xhi[it];
			const float dx = xdx[it];
			sBd[kb * (BN + 8) + c] = dx;
			if constexpr (T::MIN) {
				const int4 lo = xlo[it], hi = xhi[it];
				const int sl = __dp4a(lo.x, 0x01010101, __dp4a(lo.y, 0x01010101, __dp4a(lo.z, 0x01010101, __dp4a(lo.w, 0x01010101, 0))));
				const int sh = __dp4a(hi.x, 0x01010101, __dp4a(hi.y, 0x01010101, __dp4a(hi.z, 0x01010101, __dp4a(hi.w, 0x01010101, 0))));
				if constexpr (SPB == 1) sBs[kb * (BN + 8) + c] = dx * (float)(sl + sh);
				else {
					sBs[2 * kb * (BN + 8) + c] = dx * (float)sl;
					sBs[(2 * kb + 1) * (BN + 8) + c] = dx * (float)sh;
				}
			}
		}
	};

	// ldmatrix row addresses: matrix i = lane/8 of A is (rows +8·(i&1), bytes +16·(i>>1)),
	// of B (n8 tile +(i>>1), bytes +16·(i&1)).
	const int li = lane / 8, lr = lane % 8;
	const u32 aOff = (u32)(L::A + (wm0 + lr + 8 * (li & 1)) * MMQ_STRIDE + 16 * (li >> 1));
	const u32 bOff = (u32)(L::B + (wn0 + lr + 8 * (li >> 1)) * MMQ_STRIDE + 16 * (li & 1));

	auto compute = [&](const u8 *buf) {
		const u32 base = smem_addr(buf);
		const float *sAs = (const float *)(buf + L::AS), *sAm = (const float *)(buf + L::AM);
		const float *sBd = (const float *)(buf + L::BD), *sBs = (const float *)(buf + L::BS);
#pragma unroll
		for (int kb = 0; kb < MMQ_KB; kb++) {
			int a[MT][4], b[NT][2];
#pragma unroll
			for (int i = 0; i < MT; i++) ldsm4(base + aOff + (u32)(16 * i * MMQ_STRIDE + 32 * kb), a[i][0], a[i][1], a[i][2], a[i][3]);
#pragma unroll
			for (int j = 0; j < NT; j += 2)
				ldsm4(base + bOff + (u32)(8 * j * MMQ_STRIDE + 32 * kb), b[j][0], b[j][1], b[j + 1][0], b[j + 1][1]);
			float2 dx[NT];
#pragma unroll
			for (int j = 0; j < NT; j++) dx[j] = *(const float2 *)&sBd[kb * (BN + 8) + wn0 + 8 * j + 2 * t];
#pragma unroll
			for (int i = 0; i < MT; i++) {
				const int r = wm0 + 16 * i + g;
				if constexpr (T::SUB == 32) {
					const float w0 = sAs[kb * (MMQ_BM + 8) + r], w1 = sAs[kb * (MMQ_BM + 8) + r + 8];
#pragma unroll
					for (int j = 0; j < NT; j++) {
						int d[4];
						mma_k32(d, a[i][0], a[i][1], a[i][2], a[i][3], b[j][0], b[j][1], MMQ_MAGIC);
						acc[i][j][0] = fmaf(ifl(d[0]), w0 * dx[j].x, acc[i][j][0]);
						acc[i][j][1] = fmaf(ifl(d[1]), w0 * dx[j].y, acc[i][j][1]);
						acc[i][j][2] = fmaf(ifl(d[2]), w1 * dx[j].x, acc[i][j][2]);
						acc[i][j][3] = fmaf(ifl(d[3]), w1 * dx[j].y, acc[i][j][3]);
					}
					if constexpr (T::MIN) {
						const float m0 = sAm[kb * (MMQ_BM + 8) + r], m1 = sAm[kb * (MMQ_BM + 8) + r + 8];
#pragma unroll
						for (int j = 0; j < NT; j++) {
							const float2 sx = *(const float2 *)&sBs[kb * (BN + 8) + wn0 + 8 * j + 2 * t];
							acc[i][j][0] = fmaf(m0, sx.x, acc[i][j][0]);
							acc[i][j][1] = fmaf(m0, sx.y, acc[i][j][1]);
							acc[i][j][2] = fmaf(m1, sx.x, acc[i][j][2]);
							acc[i][j][3] = fmaf(m1, sx.y, acc[i][j][3]);
						}
					}
				} else {
					const float *sa = sAs + 2 * kb * (MMQ_BM + 8), *sb = sa + (MMQ_BM + 8);
					const float wa0 = sa[r], wa1 = sa[r + 8], wb0 = sb[r], wb1 = sb[r + 8];
#pragma unroll
					for (int j = 0; j < NT; j++) {
						int da[4], db[4];
						mma_k16(da, a[i][0], a[i][1], b[j][0], MMQ_MAGIC);
						mma_k16(db, a[i][2], a[i][3], b[j][1], MMQ_MAGIC);
						acc[i][j][0] = fmaf(fmaf(ifl(da[0]), wa0, ifl(db[0]) * wb0), dx[j].x, acc[i][j][0]);
						acc[i][j][1] = fmaf(fmaf(ifl(da[1]), wa0, ifl(db[1]) * wb0), dx[j].y, acc[i][j][1]);
						acc[i][j][2] = fmaf(fmaf(ifl(da[2]), wa1, ifl(db[2]) * wb1), dx[j].x, acc[i][j][2]);
						acc[i][j][3] = fmaf(fmaf(ifl(da[3]), wa1, ifl(db[3]) * wb1), dx[j].y, acc[i][j][3]);
					}
					if constexpr (T::MIN) {
						const float *ma = sAm + 2 * kb * (MMQ_BM + 8), *mb = ma + (MMQ_BM + 8);
						const float ma0 = ma[r], ma1 = ma[r + 8], mb0 = mb[r], mb1 = mb[r + 8];
#pragma unroll
						for (int j = 0; j < NT; j++) {
							const float2 sa2 = *(const float2 *)&sBs[2 * kb * (BN + 8) + wn0 + 8 * j + 2 * t];
							const float2 sb2 = *(const float2 *)&sBs[(2 * kb + 1) * (BN + 8) + wn0 + 8 * j + 2 * t];
							acc[i][j][0] = fmaf(ma0, sa2.x, fmaf(mb0, sb2.x, acc[i][j][0]));
							acc[i][j][1] = fmaf(ma0, sa2.y, fmaf(mb0, sb2.y, acc[i][j][1]));
							acc[i][j][2] = fmaf(ma1, sa2.x, fmaf(mb1, sb2.x, acc[i][j][2]));
							acc[i][j][3] = fmaf(ma1, sa2.y, fmaf(mb1, sb2.y, acc[i][j][3]));
						}
					}
				}
			}
		}
	};

	fetch(0);
	store(smem, 0);
	__syncthreads();
	for (int st = 0; st < nst; st++) {
		const bool more = st + 1 < nst;
		if (more) fetch((st + 1) * MMQ_KT);
		compute(smem + (st & 1) * L::SIZE);
		if (more) store(smem + ((st + 1) & 1) * L::SIZE, (st + 1) * MMQ_KT);
		__syncthreads();
	}
#pragma unroll
	for (int i = 0; i < MT; i++)
#pragma unroll
		for (int j = 0; j < NT; j++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int row = row0 + wm0 + 16 * i + g + 8 * (e >> 1), tok = n0 + wn0 + 8 * j + 2 * t + (e & 1);
				if (row < rows && tok < n) dst[(size_t)tok * rows + row] = acc[i][j][e];
			}
}

// Entry points: mmq_<type>_<BN> for BN 32, 64 (every format) and 128 (Q4_0, Q8_0).
#define MMQ_ARGS float *dst, const u8 *w, const signed char *xq, const float *xd, int rows, int cols, int n
#define MMQ_ENTRY(name, T, BN) \
	extern "C" __global__ void __launch_bounds__(MMQ_THREADS, 2) mmq_##name##_##BN(MMQ_ARGS) { \
		mmq<T, BN>(dst, w, xq, xd, rows, cols, n); \
	}
#define MMQ_TYPE(name, T) MMQ_ENTRY(name, T, 32) MMQ_ENTRY(name, T, 64)

MMQ_TYPE(q4_0, MQ4_0)
MMQ_TYPE(q4_1, MQ4_1)
MMQ_TYPE(q5_0, MQ5_0)
MMQ_TYPE(q5_1, MQ5_1)
MMQ_TYPE(q8_0, MQ8_0)
MMQ_TYPE(q2_k, MQ2_K)
MMQ_TYPE(q3_k, MQ3_K)
MMQ_TYPE(q4_k, MQ4_K)
MMQ_TYPE(q5_k, MQ5_K)
MMQ_TYPE(q6_k, MQ6_K)
MMQ_ENTRY(q4_0, MQ4_0, 128)
MMQ_ENTRY(q8_0, MQ8_0, 128)
