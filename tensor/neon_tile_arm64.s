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

// ---- Q4_K repacked gemm (dotQ4KRepackGemmGo), all of it in NEON ----


// DOTNA with scratch V26, V27 (V14, V15 hold weight levels here).
#define DOTNB(o, a, b) WSMULL(26, a, b); WSMULL2(27, a, b); WSADALP(o, 26); WSADALP(o, 27)

// The levels of the Q4_K weight block at R0: the low nibbles of pair c in V2c, V2c+1,
// the high ones in V8+2c, V9+2c.
#define W4KLOAD \
	ADD    $16, R0, R5; \
	VLD1.P 64(R5), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	VLD1   (R5), [V4.B16, V5.B16, V6.B16, V7.B16]; \
	VMOVI  $15, V28.B16; \
	WUSHR8(8, 0, 4); WUSHR8(9, 1, 4); WUSHR8(10, 2, 4); WUSHR8(11, 3, 4); \
	WUSHR8(12, 4, 4); WUSHR8(13, 5, 4); WUSHR8(14, 6, 4); WUSHR8(15, 7, 4); \
	WAND(0, 0, 28); WAND(1, 1, 28); WAND(2, 2, 28); WAND(3, 3, 28); \
	WAND(4, 4, 28); WAND(5, 5, 28); WAND(6, 6, 28); WAND(7, 7, 28)

// Pair c of one activation row (activations at R6, advanced): Va += Σ low·q8 of
// sub-block 2c, Vb += Σ high·q8 of sub-block 2c+1.
#define P4K(DOTA, l0, l1, h0, h1, a, b) \
	VLD1.P 32(R6), [V24.B16, V25.B16]; \
	DOTA(a, l0, 24); \
	DOTA(a, l1, 25); \
	VLD1.P 32(R6), [V24.B16, V25.B16]; \
	DOTA(b, h0, 24); \
	DOTA(b, h1, 25)

// Activation row r's block at Rx (advanced): its d8 into V29.S[r]; the integers of
// q4KGemmInts, v[0..3] stored at R8 + 16r and v[4..7] at R8 + 64 + 16r (the scales
// and mins of the weight block at R15; vo = 16r, mo = 64 + 16r).
#define ROW4K(DOTA, x, r, vo, mo) \
	FMOVS  (x), F24; \
	WINSS(29, r, 24); \
	ADD    $4, x, R6; \
	WEOR(16, 16, 16); WEOR(17, 17, 17); WEOR(18, 18, 18); WEOR(19, 19, 19); \
	WEOR(20, 20, 20); WEOR(21, 21, 21); WEOR(22, 22, 22); WEOR(23, 23, 23); \
	P4K(DOTA, 0, 1, 8, 9, 16, 17); \
	P4K(DOTA, 2, 3, 10, 11, 18, 19); \
	P4K(DOTA, 4, 5, 12, 13, 20, 21); \
	P4K(DOTA, 6, 7, 14, 15, 22, 23); \
	WADDP(16, 16, 17); WADDP(18, 18, 19); WADDP(20, 20, 21); WADDP(22, 22, 23); \
	WADDP(16, 16, 18); \
	WADDP(17, 20, 22); \
	VLD1   (R15), [V18.S4, V19.S4, V20.S4, V21.S4]; \
	WMUL4(16, 16, 18); \
	WMUL4(17, 17, 19); \
	WADDP(16, 16, 17); \
	ADD    $260, x, R6; \
	VLD1   (R6), [V22.H8, V23.H8]; \
	WSADDLP(22, 22); \
	WSADDLP(23, 23); \
	WMUL4(22, 22, 20); \
	WMUL4(23, 23, 21); \
	WADDP(22, 22, 23); \
	FMOVQ  F16, vo(R8); \
	FMOVQ  F22, mo(R8); \
	ADD    $292, x

// One weight block against the four rows: acc (V30) and accm (V31), lane r for row r,
// fused-multiply-added pair after pair as q4KGemmBlock does (R9: the block's d, dmin).
#define Q4KX4(DOTA) \
	W4KLOAD; \
	ROW4K(DOTA, R10, 0, 0, 64); \
	ROW4K(DOTA, R11, 1, 16, 80); \
	ROW4K(DOTA, R12, 2, 32, 96); \
	ROW4K(DOTA, R13, 3, 48, 112); \
	WLD4S(16, 8); \
	ADD    $64, R8, R6; \
	WLD4S(20, 6); \
	WSCVTF4(16, 16); WSCVTF4(17, 17); WSCVTF4(18, 18); WSCVTF4(19, 19); \
	WSCVTF4(20, 20); WSCVTF4(21, 21); WSCVTF4(22, 22); WSCVTF4(23, 23); \
	FMOVD  (R9), F26; \
	WFMULE(24, 29, 26, 0); \
	WFMULE(25, 29, 26, 1); \
	WFMLA4(30, 16, 24); WFMLA4(30, 17, 24); WFMLA4(30, 18, 24); WFMLA4(30, 19, 24); \
	WFMLA4(31, 20, 25); WFMLA4(31, 21, 25); WFMLA4(31, 22, 25); WFMLA4(31, 23, 25); \
	ADD    $144, R0; \
	ADD    $64, R15; \
	ADD    $8, R9

// func q4KGemmNEONx4(w, x *byte, xstride, nb int, ws *int32, wd *float32, buf *[32]int32, out *[8]float32, sdot bool)
// For the weight row w and the activation rows r < 4 at x + r·xstride, over nb ≥ 1
// blocks: out[r] and out[4+r] are dotQ4KRepackGemmGo's acc and accm, given the
// weight row's scales and mins ws (sc at [16b+j], m at [16b+8+j]) and its d, dmin as
// float32 in wd ([2b], [2b+1]); buf is scratch.
TEXT ·q4KGemmNEONx4(SB), NOSPLIT, $0-65
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  xstride+16(FP), R7
	MOVD  nb+24(FP), R2
	MOVD  ws+32(FP), R15
	MOVD  wd+40(FP), R9
	MOVD  buf+48(FP), R8
	MOVD  out+56(FP), R3
	MOVBU sdot+64(FP), R4
	XROWS
	WEOR(30, 30, 30)
	WEOR(31, 31, 31)
	CBZ   R4, q4kxneon

q4kxsdot:
	Q4KX4(DOTSA)
	SUBS $1, R2, R2
	BNE  q4kxsdot
	B    q4kxdone

q4kxneon:
	Q4KX4(DOTNB)
	SUBS $1, R2, R2
	BNE  q4kxneon

q4kxdone:
	VST1 [V30.S4, V31.S4], (R3)
	RET

// ---- Q4_1 · Q8_1, x86 lanes (dotQ4_1x86Go) ----

// Q4_1 block (20 bytes) at R0 against Q8_1 block (36 bytes) at R1, both advanced:
// summs (F20) += mw·sx, F0 = dw·dx, V3 the levels of elements 0-15, V2 those of 16-31
// (V28 = 0x0F), V4, V5 the activation quants.
#define Q4_1LOAD \
	HALF((R0), R5, F0); \
	HALF((R1), R6, F1); \
	FMULS F1, F0, F0; \
	HALF(2(R0), R5, F2); \
	HALF(2(R1), R6, F3); \
	FMULS F3, F2, F2; \
	FADDS F2, F20, F20; \
	ADD   $4, R0; \
	ADD   $4, R1; \
	VLD1.P 16(R0), [V2.B16]; \
	WAND(3, 2, 28); \
	WUSHR8(2, 2, 4); \
	VLD1.P 32(R1), [V4.B16, V5.B16]

// The eight lanes of the block fused-multiply-added with F0 into V30, V31.
#define Q4_1LANES(DOT) \
	Q4_1LOAD; \
	DOT(6, 3, 4); \
	DOT(7, 2, 5); \
	WSCVTF4(6, 6); \
	WSCVTF4(7, 7); \
	WFMLAE(30, 6, 0, 0); \
	WFMLAE(31, 7, 0, 0)

// func q4_1LanesNEON(w, x *byte, nb int, acc *[8]float32, summs *float32, sdot bool)
// dotQ4_1x86Go's accumulators acc and summs carried over nb ≥ 1 blocks.
TEXT ·q4_1LanesNEON(SB), NOSPLIT, $0-41
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	MOVD  acc+24(FP), R3
	MOVD  summs+32(FP), R8
	MOVBU sdot+40(FP), R4
	VLD1  (R3), [V30.S4, V31.S4]
	FMOVS (R8), F20
	VMOVI $15, V28.B16
	CBZ   R4, q41neon

q41sdot:
	Q4_1LANES(DOTS)
	SUBS $1, R2, R2
	BNE  q41sdot
	B    q41done

q41neon:
	Q4_1LANES(DOTN)
	SUBS $1, R2, R2
	BNE  q41neon

q41done:
	VST1  [V30.S4, V31.S4], (R3)
	FMOVS F20, (R8)
	RET

// ---- Q4_K repacked gemv (dotQ4KRepackGo), all of it in NEON ----


// The eight sub-block sums of the Q4_K block at R0 against the Q8_K block at R1:
// s0-s3 in V16, s4-s7 in V17 (Q4KBLOCK's, not stored; V28 = 0x0F).
#define Q4KSUMS(DOTA) \
	ADD $16, R0, R5; \
	ADD $4, R1, R6; \
	WEOR(16, 16, 16); WEOR(17, 17, 17); WEOR(18, 18, 18); WEOR(19, 19, 19); \
	WEOR(20, 20, 20); WEOR(21, 21, 21); WEOR(22, 22, 22); WEOR(23, 23, 23); \
	Q4KPAIR(DOTA, 16, 17); \
	Q4KPAIR(DOTA, 18, 19); \
	Q4KPAIR(DOTA, 20, 21); \
	Q4KPAIR(DOTA, 22, 23); \
	WADDP(16, 16, 17); \
	WADDP(18, 18, 19); \
	WADDP(20, 20, 21); \
	WADDP(22, 22, 23); \
	WADDP(16, 16, 18); \
	WADDP(17, 20, 22)

// One block of dotQ4KRepackGo: acc (F30) = fma(isum, d·d8, acc), accm (F31) =
// fma(summs, dmin·d8, accm); R0, R1 advanced.
#define Q4KGEMV(DOTA) \
	Q4KSUMS(DOTA); \
	Q4KSCALES; \
	WMUL4(16, 16, 10); \
	WMUL4(17, 17, 11); \
	WADD4(16, 16, 17); \
	VADDV  V16.S4, V16; \
	ADD    $260, R1, R6; \
	VLD1   (R6), [V22.H8, V23.H8]; \
	WSADDLP(22, 22); \
	WSADDLP(23, 23); \
	WMUL4(22, 22, 12); \
	WMUL4(23, 23, 13); \
	WADD4(22, 22, 23); \
	VADDV  V22.S4, V22; \
	WSCVTFS(16, 16); \
	WSCVTFS(22, 22); \
	FMOVS  (R1), F24; \
	HALF((R0), R5, F25); \
	HALF(2(R0), R5, F29); \
	FMULS  F24, F25, F25; \
	FMULS  F24, F29, F29; \
	FMADDS F25, F30, F16, F30; \
	FMADDS F29, F31, F22, F31; \
	ADD    $144, R0; \
	ADD    $292, R1

// func q4KRepackNEON(w, x *byte, nb int, out *[2]float32, sdot bool)
// out[0], out[1] = dotQ4KRepackGo's acc and accm over nb ≥ 1 blocks.
TEXT ·q4KRepackNEON(SB), NOSPLIT, $0-33
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	MOVD  out+24(FP), R3
	MOVBU sdot+32(FP), R4
	VMOVI $15, V28.B16
	MOVD  $0xFCFCFCFC00000000, R9
	VMOV  R9, V27.D[0]
	FMOVS ZR, F30
	FMOVS ZR, F31
	VMOVI $63, V26.B16
	CBZ   R4, q4kgneon

q4kgsdot:
	Q4KGEMV(DOTSA)
	SUBS $1, R2, R2
	BNE  q4kgsdot
	B    q4kgdone

q4kgneon:
	Q4KGEMV(DOTNA)
	SUBS $1, R2, R2
	BNE  q4kgneon

q4kgdone:
	FMOVS F30, 0(R3)
	FMOVS F31, 4(R3)
	RET

// ---- Q5_1 · Q8_1, ggml's generic order (dotQ5_1Go) ----

// Q5_1 block (24 bytes) at R0 against Q8_1 block (36 bytes) at R1, both advanced: F0 =
// dw·dx, F12 = mw·sx, V3 the levels of elements 0-15, V2 those of 16-31 (the fifth bits
// spread as in Q5_0LOAD: V24-V27; V28 = 0x0F), V4, V5 the activation quants.
#define Q5_1LOAD \
	HALF((R0), R5, F0); \
	HALF((R1), R6, F1); \
	FMULS F1, F0, F0; \
	HALF(2(R0), R5, F12); \
	HALF(2(R1), R6, F13); \
	FMULS F13, F12, F12; \
	MOVWU 4(R0), R7; \
	ADD   $8, R0; \
	ADD   $4, R1; \
	VMOV  R7, V8.S[0]; \
	VTBL  V24.B16, [V8.B16], V9.B16; \
	VTBL  V25.B16, [V8.B16], V10.B16; \
	VCMTST V26.B16, V9.B16, V9.B16; \
	VCMTST V26.B16, V10.B16, V10.B16; \
	WAND(9, 9, 27); \
	WAND(10, 10, 27); \
	VLD1.P 16(R0), [V2.B16]; \
	WAND(3, 2, 28); \
	WUSHR8(2, 2, 4); \
	WORR(3, 3, 9); \
	WORR(2, 2, 10); \
	VLD1.P 32(R1), [V4.B16, V5.B16]

// sumf (F31) += float32(dd·float(Σ)) + float32(m·s).
#define Q5_1GENERIC(DOTA) \
	Q5_1LOAD; \
	WEOR(6, 6, 6); \
	DOTA(6, 3, 4); \
	DOTA(6, 2, 5); \
	VADDV V6.S4, V6; \
	WSCVTFS(6, 6); \
	FMULS F0, F6, F6; \
	FADDS F12, F6, F6; \
	FADDS F6, F31, F31

// func q5_1DotNEON(w, x *byte, nb int, sumf float32, sdot bool) float32
// dotQ5_1From's sum sumf carried over nb ≥ 1 blocks.
TEXT ·q5_1DotNEON(SB), NOSPLIT, $0-36
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	FMOVS sumf+24(FP), F31
	MOVBU sdot+28(FP), R4
	MOVD  ZR, R8
	MOVD  $0x0101010101010101, R9
	VMOV  R8, V24.D[0]
	VMOV  R9, V24.D[1]
	MOVD  $0x0202020202020202, R8
	MOVD  $0x0303030303030303, R9
	VMOV  R8, V25.D[0]
	VMOV  R9, V25.D[1]
	MOVD  $0x8040201008040201, R8
	VMOV  R8, V26.D[0]
	VMOV  R8, V26.D[1]
	VMOVI $16, V27.B16
	VMOVI $15, V28.B16
	CBZ   R4, q51neon

q51sdot:
	Q5_1GENERIC(DOTSA)
	SUBS $1, R2, R2
	BNE  q51sdot
	B    q51done

q51neon:
	Q5_1GENERIC(DOTNA)
	SUBS $1, R2, R2
	BNE  q51neon

q51done:
	FMOVS F31, ret+32(FP)
	RET

// ---- Q4_0 repacked, four weight rows against one activation row (decoding) ----

// Weight row at Rw (advanced) against the activation block loaded by the caller (F8 =
// dx, V4, V5): acc = fma(float(Σ), dw·dx, acc).
#define REPACKW(DOTA, w, acc) \
	HALF((w), R5, F0); \
	FMULS F8, F0, F0; \
	ADD   $2, w; \
	VLD1.P 16(w), [V2.B16]; \
	WAND(3, 2, 28); \
	WUSHR8(2, 2, 4); \
	WSUB8(3, 3, 29); \
	WSUB8(2, 2, 29); \
	WEOR(6, 6, 6); \
	DOTA(6, 3, 4); \
	DOTA(6, 2, 5); \
	VADDV V6.S4, V6; \
	WSCVTFS(6, 6); \
	FMADDS F0, acc, F6, acc

#define REPACKW4(DOTA) \
	HALF((R1), R6, F8); \
	ADD   $2, R1; \
	VLD1.P 32(R1), [V4.B16, V5.B16]; \
	REPACKW(DOTA, R10, F20); \
	REPACKW(DOTA, R11, F21); \
	REPACKW(DOTA, R12, F22); \
	REPACKW(DOTA, R13, F23)

// func q4_0RepackNEONw4(w *byte, wstride int, x *byte, nb int, out *[4]float32, sdot bool)
// out[r] = dotQ4_0RepackGo of the weight row r < 4 at w + r·wstride and the activation
// row x, over nb ≥ 1 blocks.
TEXT ·q4_0RepackNEONw4(SB), NOSPLIT, $0-41
	MOVD  w+0(FP), R10
	MOVD  wstride+8(FP), R7
	MOVD  x+16(FP), R1
	MOVD  nb+24(FP), R2
	MOVD  out+32(FP), R3
	MOVBU sdot+40(FP), R4
	ADD   R7, R10, R11
	ADD   R7, R11, R12
	ADD   R7, R12, R13
	VMOVI $15, V28.B16
	VMOVI $8, V29.B16
	FMOVS ZR, F20
	FMOVS ZR, F21
	FMOVS ZR, F22
	FMOVS ZR, F23
	CBZ   R4, q4rwneon

q4rwsdot:
	REPACKW4(DOTSA)
	SUBS $1, R2, R2
	BNE  q4rwsdot
	B    q4rwdone

q4rwneon:
	REPACKW4(DOTNA)
	SUBS $1, R2, R2
	BNE  q4rwneon

q4rwdone:
	FMOVS F20, 0(R3)
	FMOVS F21, 4(R3)
	FMOVS F22, 8(R3)
	FMOVS F23, 12(R3)
	RET
