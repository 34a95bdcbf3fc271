// dequant.cuh: the GGUF weight formats, one struct per type. Each has
//   QK, BYTES          elements and bytes per block
//   elem(row, e)       element e of a row, as float (any e)
//   offsets(l, i0, i1) lane l's 8 weights of a 256-element chunk of a row are elements
//                      i0..i0+3 and i1..i1+3 of the chunk, in one 32-element block; for
//                      the 32-element formats lane l reads block l/4 of the chunk, so a
//                      warp reads the chunk's bytes contiguously
//   vdot(chunk, l, xa, xb, dx)
//                      those 8 weights times 8 activations quantized to int8 (xa: elements
//                      i0..i0+3, xb: i1..i1+3, block scale dx), by dp4a integer dot
//                      products, as llama.cpp's MMVQ does
// A format whose lane's two runs of 4 lie in two different 32-element blocks (Q4_K)
// sets TwoScales<T> and has instead
//   vdot2(chunk, l, xa, xb, dxa, dxb)
//                      the same, with the block scales of xa's and xb's elements apart.
// Layouts and formulas follow ggml's dequantize_row_* (ggml-quants.c).
#pragma once
#include "common.cuh"

// TwoScales<T>::value says whether T uses vdot2 (see above).
template <class T>
struct TwoScales {
	enum { value = 0 };
};

struct F32W {
	enum { QK = 1, BYTES = 4 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) { return ((const float *)row)[e]; }
};

struct F16W {
	enum { QK = 1, BYTES = 2 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) { return half_at(row + 2 * e); }
};

struct BF16W {
	enum { QK = 1, BYTES = 2 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		return __uint_as_float((u32)((const u16 *)row)[e] << 16);
	}
};

// u32_at reads 4 bytes at p, which is only 2-byte aligned.
static __device__ __forceinline__ u32 u32_at(const u8 *p) {
	return (u32)((const u16 *)p)[0] | ((u32)((const u16 *)p)[1] << 16);
}

// Offsets of lane l's two runs of 4 in a 256-element chunk, for the formats whose lane
// covers elements 4p..4p+3 and 16+4p.. of block l/4 (Q4_0, Q4_1, Q5_0, Q5_1), and for
// those whose lane covers 8 consecutive elements from 8l (Q8_0 too: 8p of block l/4).
static __device__ __forceinline__ void offsets_split(int l, int &i0, int &i1) {
	i0 = 32 * (l / 4) + 4 * (l % 4);
	i1 = i0 + 16;
}
static __device__ __forceinline__ void offsets_run(int l, int &i0, int &i1) {
	i0 = 8 * l;
	i1 = i0 + 4;
}

// sum8 is the sum of the 8 int8 activations in xa, xb.
static __device__ __forceinline__ int sum8(int xa, int xb) { return __dp4a(0x01010101, xa, __dp4a(0x01010101, xb, 0)); }

// generic_vdot is vdot through elem, for the formats without a hand-written one.
template <class T>
static __device__ __forceinline__ float generic_vdot(const u8 *c, int l, int xa, int xb, float dx) {
	float s = 0.0f;
#pragma unroll
	for (int t = 0; t < 4; t++) {
		s += T::elem(c, 8 * l + t) * (float)(signed char)(xa >> (8 * t));
		s += T::elem(c, 8 * l + 4 + t) * (float)(signed char)(xb >> (8 * t));
	}
	return s * dx;
}

// spread4 moves bits 0..3 of h to bit 4 of bytes 0..3.
static __device__ __forceinline__ int spread4(u32 h) {
	return (int)(((h & 1) << 4) | ((h & 2) << 11) | ((h & 4) << 18) | ((h & 8) << 25));
}

// Q4_0: half d; u8 qs[16]. x[j] = d·(lo(qs[j])-8), x[j+16] = d·(hi(qs[j])-8).
struct Q4_0W {
	enum { QK = 32, BYTES = 18 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 32) * BYTES;
		const int j = e % 32;
		const int q = j < 16 ? (b[2 + j] & 0xF) : (b[2 + j - 16] >> 4);
		return half_at(b) * (float)(q - 8);
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) { offsets_split(l, i0, i1); }
	static __device__ __forceinline__ float vdot(const u8 *c, int l, int xa, int xb, float dx) {
		const u8 *b = c + (l / 4) * BYTES;
		const int q = (int)u32_at(b + 2 + 4 * (l % 4));
		const int sumi = __dp4a(q & 0x0F0F0F0F, xa, __dp4a((q >> 4) & 0x0F0F0F0F, xb, 0));
		return half_at(b) * dx * i2f(sumi - 8 * sum8(xa, xb));
	}
};

// Q4_1: half d, m; u8 qs[16]. x = d·q + m.
struct Q4_1W {
	enum { QK = 32, BYTES = 20 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 32) * BYTES;
		const int j = e % 32;
		const int q = j < 16 ? (b[4 + j] & 0xF) : (b[4 + j - 16] >> 4);
		return half_at(b) * (float)q + half_at(b + 2);
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) { offsets_split(l, i0, i1); }
	static __device__ __forceinline__ float vdot(const u8 *c, int l, int xa, int xb, float dx) {
		const u8 *b = c + (l / 4) * BYTES;
		const int q = *(const int *)(b + 4 + 4 * (l % 4));
		const int sumi = __dp4a(q & 0x0F0F0F0F, xa, __dp4a((q >> 4) & 0x0F0F0F0F, xb, 0));
		return dx * (half_at(b) * i2f(sumi) + half_at(b + 2) * i2f(sum8(xa, xb)));
	}
};

// Q5_0: half d; u8 qh[4]; u8 qs[16]. The fifth bit of element j is bit j of qh.
struct Q5_0W {
	enum { QK = 32, BYTES = 22 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 32) * BYTES;
		const int j = e % 32;
		const u32 qh = b[2] | (b[3] << 8) | (b[4] << 16) | ((u32)b[5] << 24);
		const int lo = j < 16 ? (b[6 + j] & 0xF) : (b[6 + j - 16] >> 4);
		const int q = lo | (((qh >> j) & 1) << 4);
		return half_at(b) * (float)(q - 16);
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) { offsets_split(l, i0, i1); }
	static __device__ __forceinline__ float vdot(const u8 *c, int l, int xa, int xb, float dx) {
		const u8 *b = c + (l / 4) * BYTES;
		const int p = l % 4;
		const u32 qh = u32_at(b + 2);
		const int q = (int)u32_at(b + 6 + 4 * p);
		const int lo = (q & 0x0F0F0F0F) | spread4(qh >> (4 * p)), hi = ((q >> 4) & 0x0F0F0F0F) | spread4(qh >> (16 + 4 * p));
		const int sumi = __dp4a(lo, xa, __dp4a(hi, xb, 0));
		return half_at(b) * dx * i2f(sumi - 16 * sum8(xa, xb));
	}
};

// Q5_1: half d, m; u8 qh[4]; u8 qs[16]. x = d·q + m.
struct Q5_1W {
	enum { QK = 32, BYTES = 24 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 32) * BYTES;
		const int j = e % 32;
		const u32 qh = b[4] | (b[5] << 8) | (b[6] << 16) | ((u32)b[7] << 24);
		const int lo = j < 16 ? (b[8 + j] & 0xF) : (b[8 + j - 16] >> 4);
		const int q = lo | (((qh >> j) & 1) << 4);
		return half_at(b) * (float)q + half_at(b + 2);
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) { offsets_split(l, i0, i1); }
	static __device__ __forceinline__ float vdot(const u8 *c, int l, int xa, int xb, float dx) {
		const u8 *b = c + (l / 4) * BYTES;
		const int p = l % 4;
		const u32 qh = *(const u32 *)(b + 4);
		const int q = *(const int *)(b + 8 + 4 * p);
		const int lo = (q & 0x0F0F0F0F) | spread4(qh >> (4 * p)), hi = ((q >> 4) & 0x0F0F0F0F) | spread4(qh >> (16 + 4 * p));
		const int sumi = __dp4a(lo, xa, __dp4a(hi, xb, 0));
		return dx * (half_at(b) * i2f(sumi) + half_at(b + 2) * i2f(sum8(xa, xb)));
	}
};

// Q8_0: half d; i8 qs[32].
struct Q8_0W {
	enum { QK = 32, BYTES = 34 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 32) * BYTES;
		return half_at(b) * (float)(signed char)b[2 + e % 32];
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) {
		i0 = 32 * (l / 4) + 8 * (l % 4);
		i1 = i0 + 4;
	}
	static __device__ __forceinline__ float vdot(const u8 *c, int l, int xa, int xb, float dx) {
		const u8 *b = c + (l / 4) * BYTES;
		const u8 *q = b + 2 + 8 * (l % 4);
		const int sumi = __dp4a((int)u32_at(q), xa, __dp4a((int)u32_at(q + 4), xb, 0));
		return half_at(b) * dx * i2f(sumi);
	}
};

// scale_min_k4 unpacks the 6-bit scale and min of sub-block j (0..7) of Q4_K and Q5_K.
static __device__ __forceinline__ void scale_min_k4(int j, const u8 *q, float *sc, float *m) {
	if (j < 4) {
		*sc = (float)(q[j] & 63);
		*m = (float)(q[j + 4] & 63);
	} else {
		*sc = (float)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
		*m = (float)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
	}
}

// Q2_K: u8 scales[16]; u8 qs[64]; half d, dmin.
struct Q2_KW {
	enum { QK = 256, BYTES = 84 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 256) * BYTES;
		const int r = e % 256, n = r / 128, j = (r % 128) / 32, half = (r % 32) / 16, l = r % 16;
		const int sc = b[n * 8 + j * 2 + half];
		const int q = (b[16 + n * 32 + half * 16 + l] >> (2 * j)) & 3;
		return half_at(b + 80) * (float)(sc & 0xF) * (float)q - half_at(b + 82) * (float)(sc >> 4);
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) { offsets_run(l, i0, i1); }
	static __device__ __forceinline__ float vdot(const u8 *c, int l, int xa, int xb, float dx) {
		return generic_vdot<Q2_KW>(c, l, xa, xb, dx);
	}
};

// Q3_K: u8 hmask[32]; u8 qs[64]; u8 scales[12] (16 packed 6-bit scales); half d.
struct Q3_KW {
	enum { QK = 256, BYTES = 110 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 256) * BYTES;
		const int r = e % 256, n = r / 128, j = (r % 128) / 32, half = (r % 32) / 16, l = r % 16;
		const int is = n * 8 + j * 2 + half, grp = is / 4, k = is % 4;
		const u8 *s = b + 96;
		const int low = (grp & 1) ? s[4 + k] : s[k];
		const int sc = ((grp < 2 ? low & 0xF : low >> 4) | (((s[8 + k] >> (2 * grp)) & 3) << 4)) - 32;
		const int hm = (b[half * 16 + l] >> (n * 4 + j)) & 1;
		const int q = ((b[32 + n * 32 + half * 16 + l] >> (2 * j)) & 3) - (hm ? 0 : 4);
		return half_at(b + 108) * (float)sc * (float)q;
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) { offsets_run(l, i0, i1); }
	static __device__ __forceinline__ float vdot(const u8 *c, int l, int xa, int xb, float dx) {
		return generic_vdot<Q3_KW>(c, l, xa, xb, dx);
	}
};

// Q4_K: half d, dmin; u8 scales[12]; u8 qs[128]. Sub-block j (32 elements) is the low
// (j even) or high (j odd) nibbles of qs[32·(j/2) ...+32]. Lane l (c = l/8, p = l%8)
// reads the aligned word qs[32c+4p ...+4]: its low nibbles are elements 4p.. of
// sub-block 2c, its high nibbles elements 4p.. of sub-block 2c+1, so that a warp reads
// the 128 quant bytes once, with one 4-byte load a lane, and the header with broadcast
// loads.
struct Q4_KW {
	enum { QK = 256, BYTES = 144 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 256) * BYTES;
		const int r = e % 256, c = r / 64, hi = (r % 64) / 32, l = r % 32;
		float sc, m;
		scale_min_k4(2 * c + hi, b + 4, &sc, &m);
		const int q = (b[16 + c * 32 + l] >> (4 * hi)) & 0xF;
		return half_at(b) * sc * (float)q - half_at(b + 2) * m;
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) {
		i0 = 64 * (l / 8) + 4 * (l % 8);
		i1 = i0 + 32;
	}
	static __device__ __forceinline__ float vdot2(const u8 *b, int l, int xa, int xb, float dxa, float dxb) {
		const int c = l / 8, p = l % 8;
		const float2 dm = __half22float2(*(const __half2 *)b); // d, dmin
		// The scales and mins of sub-blocks 2c and 2c+1 as byte pairs (llama.cpp's
		// vec_dot_q4_K_q8_1): scale_min_k4 on 16-bit halves of the 12 scale bytes.
		const u16 *s16 = (const u16 *)(b + 4);
		u32 scp, mp;
		if (c < 2) {
			scp = s16[c] & 0x3f3f;
			mp = s16[c + 2] & 0x3f3f;
		} else {
			scp = (s16[c + 2] & 0x0f0f) | ((s16[c - 2] & 0xc0c0) >> 2);
			mp = ((s16[c + 2] >> 4) & 0x0f0f) | ((s16[c] & 0xc0c0) >> 2);
		}
		const int q = *(const int *)(b + 16 + 32 * c + 4 * p); // 144-byte blocks: aligned
		const int sa = __dp4a(q & 0x0F0F0F0F, xa, 0), sb = __dp4a((q >> 4) & 0x0F0F0F0F, xb, 0);
		const int na = __dp4a(0x01010101, xa, 0), nb = __dp4a(0x01010101, xb, 0);
		// Integer products, then exact conversions without I2F (see i2f).
		return dxa * (dm.x * i2f((int)(scp & 0xFF) * sa) - dm.y * i2f((int)(mp & 0xFF) * na)) +
		       dxb * (dm.x * i2f((int)(scp >> 8) * sb) - dm.y * i2f((int)(mp >> 8) * nb));
	}
};

template <>
struct TwoScales<Q4_KW> {
	enum { value = 1 };
};

// Q5_K: half d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128].
struct Q5_KW {
	enum { QK = 256, BYTES = 176 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 256) * BYTES;
		const int r = e % 256, c = r / 64, hi = (r % 64) / 32, l = r % 32;
		float sc, m;
		scale_min_k4(2 * c + hi, b + 4, &sc, &m);
		const int q = ((b[48 + c * 32 + l] >> (4 * hi)) & 0xF) | (((b[16 + l] >> (2 * c + hi)) & 1) << 4);
		return half_at(b) * sc * (float)q - half_at(b + 2) * m;
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) { offsets_run(l, i0, i1); }
	static __device__ __forceinline__ float vdot(const u8 *c, int l, int xa, int xb, float dx) {
		return generic_vdot<Q5_KW>(c, l, xa, xb, dx);
	}
};

// Q6_K: u8 ql[128]; u8 qh[64]; i8 scales[16]; half d.
struct Q6_KW {
	enum { QK = 256, BYTES = 210 };
	static __device__ __forceinline__ float elem(const u8 *row, int e) {
		const u8 *b = row + (e / 256) * BYTES;
		const int r = e % 256, n = r / 128, k = (r % 128) / 32, l = r % 32;
		const int ql = (b[n * 64 + l + (k & 1) * 32] >> (k >= 2 ? 4 : 0)) & 0xF;
		const int qh = (b[128 + n * 32 + l] >> (2 * k)) & 3;
		const int sc = (signed char)b[192 + n * 8 + l / 16 + 2 * k];
		return half_at(b + 208) * (float)sc * (float)((ql | (qh << 4)) - 32);
	}
	static __device__ __forceinline__ void offsets(int l, int &i0, int &i1) { offsets_run(l, i0, i1); }
	static __device__ __forceinline__ float vdot(const u8 *b, int l, int xa, int xb, float dx) {
		const int j = l / 4, p = l % 4, n = j / 4, k = j % 4;
		const float s = half_at(b + 208) * i2f((signed char)b[192 + n * 8 + p / 2 + 2 * k]);
		const u8 *ql = b + n * 64 + (k & 1) * 32 + 8 * p, *qh = b + 128 + n * 32 + 8 * p;
		const int shl = k >= 2 ? 4 : 0;
		const int a = ((int)(u32_at(ql) >> shl) & 0x0F0F0F0F) | ((int)((u32_at(qh) >> (2 * k)) & 0x03030303) << 4);
		const int c = ((int)(u32_at(ql + 4) >> shl) & 0x0F0F0F0F) | ((int)((u32_at(qh + 4) >> (2 * k)) & 0x03030303) << 4);
		const int sumi = __dp4a(a, xa, __dp4a(c, xb, 0));
		return s * dx * i2f(sumi - 32 * sum8(xa, xb));
	}
};
