#include "textflag.h"
#include "neon_arm64.h"

// NEON tile kernels (neon_tile_arm64.go): one weight row against four activation rows,
// each weight block loaded (and unpacked) once for the four. Per output, the float32
// operations are those of the one-row kernels of neon_arm64.s, in their order.

// The four activation row pointers R10..R13 from x (R1) and its stride (R7).
#define XROWS \
	MOVD R1, R10; \
	ADD  R7, R10, R11; \
	ADD  R7, R11, R12; \
	ADD  R7, R12, R13

// One activation row's Q8_0 block at Rx (advanced): F0 = dw (F8)·dx, V4, V5 the quants.
#define XLOAD(x) \
	HALF((x), R6, F1); \
	FMULS F1, F8, F0; \
	ADD   $2, x; \
	VLD1.P 32(x), [V4.B16, V5.B16]

// ---- Q4_0 repacked (dotQ4_0RepackGo): acc = fma(float(Σ), dw·dx, acc) ----

// The Q4_0 weight block at R0 (advanced): F8 = dw, V3 the levels of elements 0-15
// minus 8, V2 those of 16-31 (V28 = 0x0F, V29 = 8).
#define W4_0LOAD \
	HALF((R0), R5, F8); \
	ADD   $2, R0; \
	VLD1.P 16(R0), [V2.B16]; \
	WAND(3, 2, 28); \
	WUSHR8(2, 2, 4); \
	WSUB8(3, 3, 29); \
	WSUB8(2, 2, 29)

#define REPACKROW(DOTA, x, acc) \
	XLOAD(x); \
	WEOR(6, 6, 6); \
	DOTA(6, 3, 4); \
	DOTA(6, 2, 5); \
	VADDV V6.S4, V6; \
	WSCVTFS(6, 6); \
	FMADDS F0, acc, F6, acc

#define REPACKX4(DOTA) \
	W4_0LOAD; \
	REPACKROW(DOTA, R10, F20); \
	REPACKROW(DOTA, R11, F21); \
	REPACKROW(DOTA, R12, F22); \
	REPACKROW(DOTA, R13, F23)

// func q4_0RepackNEONx4(w, x *byte, xstride, nb int, out *[4]float32, sdot bool)
// out[r] = dotQ4_0RepackGo of the weight row w and activation row r < 4 at x +
// r·xstride, over nb ≥ 1 blocks.
TEXT ·q4_0RepackNEONx4(SB), NOSPLIT, $0-41
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  xstride+16(FP), R7
	MOVD  nb+24(FP), R2
	MOVD  out+32(FP), R3
	MOVBU sdot+40(FP), R4
	XROWS
	VMOVI $15, V28.B16
	VMOVI $8, V29.B16
	FMOVS ZR, F20
	FMOVS ZR, F21
	FMOVS ZR, F22
	FMOVS ZR, F23
	CBZ   R4, q4rxneon

q4rxsdot:
	REPACKX4(DOTSA)
	SUBS $1, R2, R2
	BNE  q4rxsdot
	B    q4rxdone

q4rxneon:
	REPACKX4(DOTNA)
	SUBS $1, R2, R2
	BNE  q4rxneon

q4rxdone:
	FMOVS F20, 0(R3)
	FMOVS F21, 4(R3)
	FMOVS F22, 8(R3)
	FMOVS F23, 12(R3)
	RET

// ---- x86 lane orders (dotQ8_0x86Go, dotQ4_0x86Go): fma8 per block ----

// The eight lanes of one activation row's block against the weight levels wa, wb,
// fused-multiply-added with F0 into Vlo, Vhi.
#define LANEROW(DOT, x, wa, wb, lo, hi) \
	XLOAD(x); \
	DOT(6, wa, 4); \
	DOT(7, wb, 5); \
	WSCVTF4(6, 6); \
	WSCVTF4(7, 7); \
	WFMLAE(lo, 6, 0, 0); \
	WFMLAE(hi, 7, 0, 0)

#define LANESX4(DOT, wa, wb) \
	LANEROW(DOT, R10, wa, wb, 16, 17); \
	LANEROW(DOT, R11, wa, wb, 18, 19); \
	LANEROW(DOT, R12, wa, wb, 20, 21); \
	LANEROW(DOT, R13, wa, wb, 22, 23)

// The Q8_0 weight block at R0 (advanced): F8 = dw, V2, V3 the quants.
#define W8_0LOAD \
	HALF((R0), R5, F8); \
	ADD   $2, R0; \
	VLD1.P 32(R0), [V2.B16, V3.B16]

#define Q8_0X4(DOT) W8_0LOAD; LANESX4(DOT, 2, 3)
#define Q4_0X4(DOT) W4_0LOAD; LANESX4(DOT, 3, 2)

// Arguments and accumulators of the lane kernels: acc[r] (8 float32) in V16+2r, V17+2r.
// (The arguments are loaded in each function, where go vet checks their names.)
#define LANESENTRY \
	XROWS; \
	VLD1  (R3), [V16.S4, V17.S4, V18.S4, V19.S4]; \
	ADD   $64, R3, R8; \
	VLD1  (R8), [V20.S4, V21.S4, V22.S4, V23.S4]

#define LANESEXIT \
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R3); \
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R8); \
	RET

// func q8_0LanesNEONx4(w, x *byte, xstride, nb int, acc *[4][8]float32, sdot bool)
// acc[r] = dotQ8_0x86Go's accumulator of the weight row w and activation row r at x +
// r·xstride, carried over nb ≥ 1 blocks.
TEXT ·q8_0LanesNEONx4(SB), NOSPLIT, $0-41
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  xstride+16(FP), R7
	MOVD  nb+24(FP), R2
	MOVD  acc+32(FP), R3
	MOVBU sdot+40(FP), R4
	LANESENTRY
	CBZ R4, q8lxneon

q8lxsdot:
	Q8_0X4(DOTS)
	SUBS $1, R2, R2
	BNE  q8lxsdot
	LANESEXIT

q8lxneon:
	Q8_0X4(DOTN)
	SUBS $1, R2, R2
	BNE  q8lxneon
	LANESEXIT

// func q4_0LanesNEONx4(w, x *byte, xstride, nb int, acc *[4][8]float32, sdot bool)
// acc[r] = dotQ4_0x86Go's accumulator of the weight row w and activation row r at x +
// r·xstride, carried over nb ≥ 1 blocks.
TEXT ·q4_0LanesNEONx4(SB), NOSPLIT, $0-41
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  xstride+16(FP), R7
	MOVD  nb+24(FP), R2
	MOVD  acc+32(FP), R3
	MOVBU sdot+40(FP), R4
	LANESENTRY
	VMOVI $15, V28.B16
	VMOVI $8, V29.B16
	CBZ R4, q4lxneon

q4lxsdot:
	Q4_0X4(DOTS)
	SUBS $1, R2, R2
	BNE  q4lxsdot
	LANESEXIT

q4lxneon:
	Q4_0X4(DOTN)
	SUBS $1, R2, R2
	BNE  q4lxneon
	LANESEXIT
