#include "textflag.h"
#include "neon_arm64.h"

// NEON kernels of the quantized dot products and activation quantizers (neon_arm64.go).
// Every kernel computes the exact integer sums of the Go code and, where it does float
// arithmetic, the Go code's float32 operations in its order: FMLA/FMADD where the Go
// code calls fmaf (one rounding), FMUL then FADD where it rounds the product. Each has
// an SDOT loop and a plain NEON one (sdot false), chosen once per call.

// ---- Q8_0 · Q8_0 ----

// Q8_0 block (34 bytes) at R0 against Q8_0 block at R1, both advanced: F0 = dw·dx,
// V2, V3 the weight quants, V4, V5 the activation quants.
#define Q8_0LOAD \
	HALF((R0), R5, F0); \
	HALF((R1), R6, F1); \
	FMULS F1, F0, F0; \
	ADD   $2, R0; \
	ADD   $2, R1; \
	VLD1.P 32(R0), [V2.B16, V3.B16]; \
	VLD1.P 32(R1), [V4.B16, V5.B16]

// Q4_0 block (18 bytes) at R0 against Q8_0 block at R1, both advanced: F0 = dw·dx,
// V3 the levels of elements 0-15 minus 8, V2 those of 16-31 (V28 = 0x0F, V29 = 8).
#define Q4_0LOAD \
	HALF((R0), R5, F0); \
	HALF((R1), R6, F1); \
	FMULS F1, F0, F0; \
	ADD   $2, R0; \
	ADD   $2, R1; \
	VLD1.P 16(R0), [V2.B16]; \
	WAND(3, 2, 28); \
	WUSHR8(2, 2, 4); \
	WSUB8(3, 3, 29); \
	WSUB8(2, 2, 29); \
	VLD1.P 32(R1), [V4.B16, V5.B16]

// The eight x86 lanes of one block, V6 (lanes 0-3) and V7 (4-7), fused-multiply-added
// with F0 into V30, V31 (fma8).
#define LANES8(DOT, wa, wb) \
	DOT(6, wa, 4); \
	DOT(7, wb, 5); \
	WSCVTF4(6, 6); \
	WSCVTF4(7, 7); \
	WFMLAE(30, 6, 0, 0); \
	WFMLAE(31, 7, 0, 0)

#define Q8_0LANES(DOT) Q8_0LOAD; LANES8(DOT, 2, 3)
#define Q4_0LANES(DOT) Q4_0LOAD; LANES8(DOT, 3, 2)

// func q8_0LanesNEON(w, x *byte, nb int, acc *[8]float32, sdot bool)
// dotQ8_0x86Go's accumulator acc carried over nb ≥ 0 blocks.
TEXT ·q8_0LanesNEON(SB), NOSPLIT, $0-33
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	MOVD  acc+24(FP), R3
	MOVBU sdot+32(FP), R4
	VLD1  (R3), [V30.S4, V31.S4]
	CBZ   R2, q8ldone
	CBZ   R4, q8lneon

q8lsdot:
	Q8_0LANES(DOTS)
	SUBS $1, R2, R2
	BNE  q8lsdot
	B    q8ldone

q8lneon:
	Q8_0LANES(DOTN)
	SUBS $1, R2, R2
	BNE  q8lneon

q8ldone:
	VST1 [V30.S4, V31.S4], (R3)
	RET

// func q4_0LanesNEON(w, x *byte, nb int, acc *[8]float32, sdot bool)
// dotQ4_0x86Go's accumulator acc carried over nb ≥ 0 blocks.
TEXT ·q4_0LanesNEON(SB), NOSPLIT, $0-33
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	MOVD  acc+24(FP), R3
	MOVBU sdot+32(FP), R4
	VLD1  (R3), [V30.S4, V31.S4]
	VMOVI $15, V28.B16
	VMOVI $8, V29.B16
	CBZ   R2, q4ldone
	CBZ   R4, q4lneon

q4lsdot:
	Q4_0LANES(DOTS)
	SUBS $1, R2, R2
	BNE  q4lsdot
	B    q4ldone

q4lneon:
	Q4_0LANES(DOTN)
	SUBS $1, R2, R2
	BNE  q4lneon

q4ldone:
	VST1 [V30.S4, V31.S4], (R3)
	RET

// Q5_0 block (22 bytes) at R0 against Q8_0 block at R1, both advanced: F0 = dw·dx, V3
// the levels of elements 0-15 minus 16, V2 those of 16-31. The fifth bits qh are
// spread to one byte per element by TBL (V24, V25: byte j/8 of qh for element j) and
// CMTST against bit j%8 (V26), then masked to 0x10 (V27); V28 = 0x0F, V29 = 16.
#define Q5_0LOAD \
	HALF((R0), R5, F0); \
	HALF((R1), R6, F1); \
	FMULS F1, F0, F0; \
	MOVWU 2(R0), R7; \
	ADD   $6, R0; \
	ADD   $2, R1; \
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
	WSUB8(3, 3, 29); \
	WSUB8(2, 2, 29); \
	VLD1.P 32(R1), [V4.B16, V5.B16]

#define Q5_0LANES(DOT) Q5_0LOAD; LANES8(DOT, 3, 2)

// func q5_0LanesNEON(w, x *byte, nb int, acc *[8]float32, sdot bool)
// dotQ5_0x86Go's accumulator acc carried over nb ≥ 0 blocks.
TEXT ·q5_0LanesNEON(SB), NOSPLIT, $0-33
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	MOVD  acc+24(FP), R3
	MOVBU sdot+32(FP), R4
	VLD1  (R3), [V30.S4, V31.S4]
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
	VMOVI $16, V29.B16
	CBZ   R2, q5ldone
	CBZ   R4, q5lneon

q5lsdot:
	Q5_0LANES(DOTS)
	SUBS $1, R2, R2
	BNE  q5lsdot
	B    q5ldone

q5lneon:
	Q5_0LANES(DOTN)
	SUBS $1, R2, R2
	BNE  q5lneon

q5ldone:
	VST1 [V30.S4, V31.S4], (R3)
	RET

// Exact block sum of a loaded block into S6 as float32: V6 = Σ lanes of wa·V4 + wb·V5.
#define BLOCKSUM(DOTA, wa, wb) \
	WEOR(6, 6, 6); \
	DOTA(6, wa, 4); \
	DOTA(6, wb, 5); \
	VADDV V6.S4, V6; \
	WSCVTFS(6, 6)

// Q4_0 repacked gemv/gemm: acc = fma(float(Σ), dw·dx, acc) in F31.
#define Q4_0REPACK(DOTA) \
	Q4_0LOAD; \
	BLOCKSUM(DOTA, 3, 2); \
	FMADDS F0, F31, F6, F31

// func q4_0RepackNEON(w, x *byte, nb int, acc float32, sdot bool) float32
// dotQ4_0RepackGo's accumulator acc carried over nb ≥ 0 blocks.
TEXT ·q4_0RepackNEON(SB), NOSPLIT, $0-36
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	FMOVS acc+24(FP), F31
	MOVBU sdot+28(FP), R4
	VMOVI $15, V28.B16
	VMOVI $8, V29.B16
	CBZ   R2, q4rdone
	CBZ   R4, q4rneon

q4rsdot:
	Q4_0REPACK(DOTSA)
	SUBS $1, R2, R2
	BNE  q4rsdot
	B    q4rdone

q4rneon:
	Q4_0REPACK(DOTNA)
	SUBS $1, R2, R2
	BNE  q4rneon

q4rdone:
	FMOVS F31, ret+32(FP)
	RET

// ggml's generic Q4_0 order: sumf += float32(float32(float32(Σ)·dw)·dx) in F31.
#define Q4_0GENERIC(DOTA) \
	Q4_0LOAD; \
	BLOCKSUM(DOTA, 3, 2); \
	FMOVS R5, F0; \
	FCVTHS F0, F0; \
	FMULS F0, F6, F6; \
	FMULS F1, F6, F6; \
	FADDS F6, F31, F31

// func q4_0DotNEON(w, x *byte, nb int, sumf float32, sdot bool) float32
// dotQ4_0From's sum sumf carried over nb ≥ 0 blocks.
TEXT ·q4_0DotNEON(SB), NOSPLIT, $0-36
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	FMOVS sumf+24(FP), F31
	MOVBU sdot+28(FP), R4
	VMOVI $15, V28.B16
	VMOVI $8, V29.B16
	CBZ   R2, q4gdone
	CBZ   R4, q4gneon

q4gsdot:
	Q4_0GENERIC(DOTSA)
	SUBS $1, R2, R2
	BNE  q4gsdot
	B    q4gdone

q4gneon:
	Q4_0GENERIC(DOTNA)
	SUBS $1, R2, R2
	BNE  q4gneon

q4gdone:
	FMOVS F31, ret+32(FP)
	RET

// ggml's generic Q8_0 order: sumf += float32(float32(Σ)·float32(dw·dx)) in F31.
#define Q8_0GENERIC(DOTA) \
	Q8_0LOAD; \
	BLOCKSUM(DOTA, 2, 3); \
	FMULS F0, F6, F6; \
	FADDS F6, F31, F31

// func q8_0DotNEON(w, x *byte, nb int, sumf float32, sdot bool) float32
// dotQ8_0From's sum sumf carried over nb ≥ 0 blocks.
TEXT ·q8_0DotNEON(SB), NOSPLIT, $0-36
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	FMOVS sumf+24(FP), F31
	MOVBU sdot+28(FP), R4
	CBZ   R2, q8gdone
	CBZ   R4, q8gneon

q8gsdot:
	Q8_0GENERIC(DOTSA)
	SUBS $1, R2, R2
	BNE  q8gsdot
	B    q8gdone

q8gneon:
	Q8_0GENERIC(DOTNA)
	SUBS $1, R2, R2
	BNE  q8gneon

q8gdone:
	FMOVS F31, ret+32(FP)
	RET

// ---- k-quants · Q8_K: integer sums per block, the float part in Go ----

// The eight sub-block sums of one Q4_K block (w at R0, x at R1) stored at R3 (advanced).
#define Q4KBLOCK(DOTA) \
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
	WADDP(17, 20, 22); \
	VST1.P [V16.S4, V17.S4], 32(R3); \
	ADD $144, R0; \
	ADD $292, R1

// func q4KSumsNEON(w, x *byte, nb int, out *int32, sdot bool)
// out[8i+j] = Σ q·q8 over sub-block j of block i (levels 0..15), for i < nb (≥ 1).
TEXT ·q4KSumsNEON(SB), NOSPLIT, $0-33
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	MOVD  out+24(FP), R3
	MOVBU sdot+32(FP), R4
	VMOVI $15, V28.B16
	CBZ   R4, q4kneon

q4ksdot:
	Q4KBLOCK(DOTSA)
	SUBS $1, R2, R2
	BNE  q4ksdot
	RET

q4kneon:
	Q4KBLOCK(DOTNA)
	SUBS $1, R2, R2
	BNE  q4kneon
	RET

// One group of 32 levels in V8 (elements 0-15) and V9 (16-31) against the next 32
// activations at R6 (advanced), lanes added to V16 (lanes 0-3) times scale Vr.S[i]
// and to V17 (lanes 4-7) times Vs.S[j].
#define GROUP(DOT, r, i, s, j) \
	VLD1.P 32(R6), [V6.B16, V7.B16]; \
	DOT(12, 8, 6); \
	DOT(13, 9, 7); \
	WMLAE(16, 12, r, i); \
	WMLAE(17, 13, s, j)

// Q6_K levels minus off of bit field k of a half: the low nibbles (Q6LO) or high ones
// (Q6HI) of the ql registers a, b, the top two bits from qh (V4, V5) moved to bits 4-5
// by a QH macro (V24 = 0x0F, V25 = 0x30, V26 = off).
#define Q6LO(a, b) WAND(8, a, 24); WAND(9, b, 24)
#define Q6HI(a, b) WUSHR8(8, a, 4); WUSHR8(9, b, 4)
#define QHSHL(s) WSHL8(10, 4, s); WSHL8(11, 5, s)
#define QHSHR(s) WUSHR8(10, 4, s); WUSHR8(11, 5, s)
#define QHMOV WORR(10, 4, 4); WORR(11, 5, 5)
#define Q6MERGE WAND(10, 10, 25); WAND(11, 11, 25); WORR(8, 8, 10); WORR(9, 9, 11); WSUB8(8, 8, 26); WSUB8(9, 9, 26)

// One half h of a Q6_K block: ql at R5, qh at R7 (both advanced); groups 4h..4h+3 with
// the scales of sub-blocks 8h..8h+7 (V20+2h: 8h..8h+3, V21+2h: 8h+4..8h+7).
#define Q6HALF(DOT, r, s) \
	VLD1.P 64(R5), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	VLD1.P 32(R7), [V4.B16, V5.B16]; \
	Q6LO(0, 1); QHSHL(4); Q6MERGE; GROUP(DOT, r, 0, r, 1); \
	Q6LO(2, 3); QHSHL(2); Q6MERGE; GROUP(DOT, r, 2, r, 3); \
	Q6HI(0, 1); QHMOV; Q6MERGE; GROUP(DOT, s, 0, s, 1); \
	Q6HI(2, 3); QHSHR(2); Q6MERGE; GROUP(DOT, s, 2, s, 3)

// The eight x86 lanes of one Q6_K block (w at R0, x at R1) stored at R3 (advanced).
#define Q6KBLOCK(DOT) \
	MOVD R0, R5; \
	ADD  $128, R0, R7; \
	ADD  $192, R0, R8; \
	ADD  $4, R1, R6; \
	VLD1 (R8), [V10.B16]; \
	WSXTL8(11, 10); \
	WSXTL8H(12, 10); \
	WSXTL16(20, 11); \
	WSXTL16H(21, 11); \
	WSXTL16(22, 12); \
	WSXTL16H(23, 12); \
	WEOR(16, 16, 16); \
	WEOR(17, 17, 17); \
	Q6HALF(DOT, 20, 21); \
	Q6HALF(DOT, 22, 23); \
	VST1.P [V16.S4, V17.S4], 32(R3); \
	ADD $210, R0; \
	ADD $292, R1

// func q6KLanesNEON(w, x *byte, nb int, out *int32, off uint8, sdot bool)
// out[8i+l] = lane l of dotQ6Kx86Go's block i, i < nb (≥ 1), over the levels minus off:
// off 32 gives the x86 lanes, off 0 those of the levels as stored (dotQ6K).
TEXT ·q6KLanesNEON(SB), NOSPLIT, $0-34
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	MOVD  out+24(FP), R3
	MOVBU off+32(FP), R4
	VDUP  R4, V26.B16
	MOVBU sdot+33(FP), R4
	VMOVI $15, V24.B16
	VMOVI $48, V25.B16
	CBZ   R4, q6kneon

q6ksdot:
	Q6KBLOCK(DOTS)
	SUBS $1, R2, R2
	BNE  q6ksdot
	RET

q6kneon:
	Q6KBLOCK(DOTN)
	SUBS $1, R2, R2
	BNE  q6kneon
	RET

// Q5_K levels of group g: the nibbles (Q6LO/Q6HI of V0, V1) with bit g of qh (V4, V5)
// moved to bit 4 by the QH macro (V25 = 0x10).
#define Q5MERGE WAND(10, 10, 25); WAND(11, 11, 25); WORR(8, 8, 10); WORR(9, 9, 11)

// Sub-block pair c of a Q5_K block: quants at R5 (advanced), scales of groups 2c, 2c+1
// in Vr.S[i], Vr.S[i+1].
#define Q5PAIR(DOT, LOQH, HIQH, r, i) \
	VLD1.P 32(R5), [V0.B16, V1.B16]; \
	Q6LO(0, 1); LOQH; Q5MERGE; GROUP(DOT, r, i, r, i); \
	Q6HI(0, 1); HIQH; Q5MERGE; GROUP(DOT, r, i+1, r, i+1)

// The eight x86 lanes of one Q5_K block (w at R0, x at R1, its eight sub-block scales
// as int32 at R9, advanced) stored at R3 (advanced).
#define Q5KBLOCK(DOT) \
	ADD  $48, R0, R5; \
	ADD  $16, R0, R7; \
	ADD  $4, R1, R6; \
	VLD1 (R7), [V4.B16, V5.B16]; \
	VLD1.P 32(R9), [V20.S4, V21.S4]; \
	WEOR(16, 16, 16); \
	WEOR(17, 17, 17); \
	Q5PAIR(DOT, QHSHL(4), QHSHL(3), 20, 0); \
	Q5PAIR(DOT, QHSHL(2), QHSHL(1), 20, 2); \
	Q5PAIR(DOT, QHMOV, QHSHR(1), 21, 0); \
	Q5PAIR(DOT, QHSHR(2), QHSHR(3), 21, 2); \
	VST1.P [V16.S4, V17.S4], 32(R3); \
	ADD $176, R0; \
	ADD $292, R1

// func q5KLanesNEON(w, x *byte, sc *int32, nb int, out *int32, sdot bool)
// out[8i+l] = lane l of dotQ5Kx86Go's block i (without the mins; its sum is dotQ5KGo's
// isum), given the blocks' scales sc[8i+g], i < nb (≥ 1).
TEXT ·q5KLanesNEON(SB), NOSPLIT, $0-41
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  sc+16(FP), R9
	MOVD  nb+24(FP), R2
	MOVD  out+32(FP), R3
	MOVBU sdot+40(FP), R4
	VMOVI $15, V24.B16
	VMOVI $16, V25.B16
	CBZ   R4, q5kneon

q5ksdot:
	Q5KBLOCK(DOTS)
	SUBS $1, R2, R2
	BNE  q5ksdot
	RET

q5kneon:
	Q5KBLOCK(DOTN)
	SUBS $1, R2, R2
	BNE  q5kneon
	RET

// ---- activation quantizers ----

// func quantizeQ8_0x86NEON(dst *byte, src *float32, nb int) bool
// quantizeQ8_0x86Go of nb ≥ 1 blocks. It returns false, with dst partly written, at the
// first block whose maximum |x| is not finite or whose 127/amax overflows (cases where
// the x86 conversions differ from FCVTNS); the caller then runs the Go code.
TEXT ·quantizeQ8_0x86NEON(SB), NOSPLIT, $0-25
	MOVD  dst+0(FP), R0
	MOVD  src+8(FP), R1
	MOVD  nb+16(FP), R2
	FMOVS $127.0, F30
	MOVW  $0x7f800000, R7

q80blk:
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	WFABS4(8, 0)
	WFABS4(9, 1)
	WFABS4(10, 2)
	WFABS4(11, 3)
	WFABS4(12, 4)
	WFABS4(13, 5)
	WFABS4(14, 6)
	WFABS4(15, 7)
	WFMAX4(8, 8, 9)
	WFMAX4(10, 10, 11)
	WFMAX4(12, 12, 13)
	WFMAX4(14, 14, 15)
	WFMAX4(8, 8, 10)
	WFMAX4(12, 12, 14)
	WFMAX4(8, 8, 12)
	WFMAXV(8, 8)                // amax in F8
	FMOVS F8, R5
	CMPW  R7, R5
	BHS   q80fail              // Inf or NaN (positive after FABS)
	FDIVS F30, F8, F9          // d = amax/127
	VEOR  V10.B16, V10.B16, V10.B16 // id = 0
	CBZW  R5, q80id
	FDIVS F8, F30, F10         // id = 127/amax
	FMOVS F10, R6
	CMPW  R7, R6
	BHS   q80fail

q80id:
	FCVTSH F9, F9
	FMOVS  F9, R5
	MOVH   R5, (R0)
	ADD    $2, R0
	WFMULE(0, 0, 10, 0)
	WFMULE(1, 1, 10, 0)
	WFMULE(2, 2, 10, 0)
	WFMULE(3, 3, 10, 0)
	WFMULE(4, 4, 10, 0)
	WFMULE(5, 5, 10, 0)
	WFMULE(6, 6, 10, 0)
	WFMULE(7, 7, 10, 0)
	WFCVTNS4(0, 0)
	WFCVTNS4(1, 1)
	WFCVTNS4(2, 2)
	WFCVTNS4(3, 3)
	WFCVTNS4(4, 4)
	WFCVTNS4(5, 5)
	WFCVTNS4(6, 6)
	WFCVTNS4(7, 7)
	WSQXTN(16, 0)
	WSQXTN2(16, 1)
	WSQXTN(17, 2)
	WSQXTN2(17, 3)
	WSQXTN(18, 4)
	WSQXTN2(18, 5)
	WSQXTN(19, 6)
	WSQXTN2(19, 7)
	WSQXTNB(20, 16)
	WSQXTNB2(20, 17)
	WSQXTNB(21, 18)
	WSQXTNB2(21, 19)
	VST1.P [V20.B16, V21.B16], 32(R0)
	SUBS  $1, R2, R2
	BNE   q80blk
	MOVD  $1, R3
	MOVB  R3, ret+24(FP)
	RET

q80fail:
	MOVB ZR, ret+24(FP)
	RET

// One quarter (64 values) of a Q8_K block: the values at R1 (advanced) times iscale
// (V30.S[0]), rounded to nearest even, stored as int8 at R0 (advanced), their four
// sums of 16 as int16 at R3 (advanced).
#define Q8KQUARTER \
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]; \
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]; \
	VLD1.P 64(R1), [V8.S4, V9.S4, V10.S4, V11.S4]; \
	VLD1.P 64(R1), [V12.S4, V13.S4, V14.S4, V15.S4]; \
	WFMULE(0, 0, 30, 0); WFMULE(1, 1, 30, 0); WFMULE(2, 2, 30, 0); WFMULE(3, 3, 30, 0); \
	WFMULE(4, 4, 30, 0); WFMULE(5, 5, 30, 0); WFMULE(6, 6, 30, 0); WFMULE(7, 7, 30, 0); \
	WFMULE(8, 8, 30, 0); WFMULE(9, 9, 30, 0); WFMULE(10, 10, 30, 0); WFMULE(11, 11, 30, 0); \
	WFMULE(12, 12, 30, 0); WFMULE(13, 13, 30, 0); WFMULE(14, 14, 30, 0); WFMULE(15, 15, 30, 0); \
	WFCVTNS4(0, 0); WFCVTNS4(1, 1); WFCVTNS4(2, 2); WFCVTNS4(3, 3); \
	WFCVTNS4(4, 4); WFCVTNS4(5, 5); WFCVTNS4(6, 6); WFCVTNS4(7, 7); \
	WFCVTNS4(8, 8); WFCVTNS4(9, 9); WFCVTNS4(10, 10); WFCVTNS4(11, 11); \
	WFCVTNS4(12, 12); WFCVTNS4(13, 13); WFCVTNS4(14, 14); WFCVTNS4(15, 15); \
	WSQXTN(16, 0); WSQXTN2(16, 1); WSQXTN(17, 2); WSQXTN2(17, 3); \
	WSQXTN(18, 4); WSQXTN2(18, 5); WSQXTN(19, 6); WSQXTN2(19, 7); \
	WSQXTN(20, 8); WSQXTN2(20, 9); WSQXTN(21, 10); WSQXTN2(21, 11); \
	WSQXTN(22, 12); WSQXTN2(22, 13); WSQXTN(23, 14); WSQXTN2(23, 15); \
	WSQXTNB(24, 16); WSQXTNB2(24, 17); \
	WSQXTNB(25, 18); WSQXTNB2(25, 19); \
	WSQXTNB(26, 20); WSQXTNB2(26, 21); \
	WSQXTNB(27, 22); WSQXTNB2(27, 23); \
	VST1.P [V24.B16, V25.B16, V26.B16, V27.B16], 64(R0); \
	WSADDLV(0, 24); \
	WSADDLV(1, 25); \
	WSADDLV(2, 26); \
	WSADDLV(3, 27); \
	FMOVS F0, R4; \
	MOVH.P R4, 2(R3); \
	FMOVS F1, R4; \
	MOVH.P R4, 2(R3); \
	FMOVS F2, R4; \
	MOVH.P R4, 2(R3); \
	FMOVS F3, R4; \
	MOVH.P R4, 2(R3)

// Running FMAX (V16-V19) and FMIN (V20-V23) over 16 values at R1 (advanced).
#define Q8KRANGE \
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]; \
	WFMAX4(16, 16, 0); WFMAX4(17, 17, 1); WFMAX4(18, 18, 2); WFMAX4(19, 19, 3); \
	WFMIN4(20, 20, 0); WFMIN4(21, 21, 1); WFMIN4(22, 22, 2); WFMIN4(23, 23, 3)

// func quantizeQ8KNEON(dst *byte, src *float32) bool
// quantizeBlockQ8K of one block (292 bytes of dst from 256 values), where the value of
// largest magnitude is unique in magnitude, finite and not zero, and -127/it is finite;
// false otherwise (dst untouched), for the Go code to handle.
TEXT ·quantizeQ8KNEON(SB), NOSPLIT, $0-17
	MOVD  dst+0(FP), R0
	MOVD  src+8(FP), R1
	VLD1  (R1), [V16.S4]
	VMOV  V16.B16, V17.B16
	VMOV  V16.B16, V18.B16
	VMOV  V16.B16, V19.B16
	VMOV  V16.B16, V20.B16
	VMOV  V16.B16, V21.B16
	VMOV  V16.B16, V22.B16
	VMOV  V16.B16, V23.B16
	MOVD  R1, R2
	MOVD  $16, R3

q8krange:
	Q8KRANGE
	SUBS $1, R3, R3
	BNE  q8krange
	WFMAX4(16, 16, 17)
	WFMAX4(18, 18, 19)
	WFMAX4(16, 16, 18)
	WFMAXV(16, 16)             // largest value (NaN if any)
	WFMIN4(20, 20, 21)
	WFMIN4(22, 22, 23)
	WFMIN4(20, 20, 22)
	WFMINV(20, 20)             // smallest value (NaN if any)
	FCMPS F16, F16
	BVS   q8kfail             // NaN
	FCMPS F20, F20
	BVS   q8kfail
	FNEGS F20, F21            // -min
	FCMPS F21, F16            // max against -min
	BEQ   q8kfail             // a tie in magnitude, or all zero
	FMOVS F16, F22
	BGT   q8kmx
	FMOVS F20, F22            // mx = min

q8kmx:
	FMOVS F22, R4
	AND   $0x7fffffff, R4
	MOVW  $0x7f800000, R5
	CMPW  R5, R4
	BHS   q8kfail             // mx infinite
	FMOVS $-127.0, F23
	FDIVS F22, F23, F30       // iscale = -127/mx
	FMOVS F30, R4
	AND   $0x7fffffff, R4
	CMPW  R5, R4
	BHS   q8kfail             // iscale overflowed
	FMOVS $1.0, F23
	FDIVS F30, F23, F23       // d = 1/iscale
	FMOVS F23, (R0)
	ADD   $4, R0
	ADD   $256, R0, R3        // bsums
	MOVD  R2, R1
	Q8KQUARTER
	Q8KQUARTER
	Q8KQUARTER
	Q8KQUARTER
	MOVD  $1, R4
	MOVB  R4, ret+16(FP)
	RET

q8kfail:
	MOVB ZR, ret+16(FP)
	RET

// One Q6_K block (w at R0, x at R1) of dotQ6Kx86Go: its eight x86 lanes (Q6KBLOCK's,
// levels minus 32) fused-multiply-added into V30, V31 with d8·d (fma8).
#define Q6KFBLOCK(DOT) \
	MOVD R0, R5; \
	ADD  $128, R0, R7; \
	ADD  $192, R0, R8; \
	ADD  $4, R1, R6; \
	VLD1 (R8), [V10.B16]; \
	WSXTL8(11, 10); \
	WSXTL8H(12, 10); \
	WSXTL16(20, 11); \
	WSXTL16H(21, 11); \
	WSXTL16(22, 12); \
	WSXTL16H(23, 12); \
	WEOR(16, 16, 16); \
	WEOR(17, 17, 17); \
	Q6HALF(DOT, 20, 21); \
	Q6HALF(DOT, 22, 23); \
	HALF(208(R0), R9, F27); \
	FMOVS (R1), F28; \
	FMULS F27, F28, F28; \
	WSCVTF4(16, 16); \
	WSCVTF4(17, 17); \
	WFMLAE(30, 16, 28, 0); \
	WFMLAE(31, 17, 28, 0); \
	ADD $210, R0; \
	ADD $292, R1

// func q6KDotx86NEON(w, x *byte, nb int, acc *[8]float32, sdot bool)
// dotQ6Kx86Go's accumulator acc carried over nb ≥ 1 blocks.
TEXT ·q6KDotx86NEON(SB), NOSPLIT, $0-33
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	MOVD  acc+24(FP), R3
	MOVBU sdot+32(FP), R4
	VLD1  (R3), [V30.S4, V31.S4]
	VMOVI $32, V26.B16
	VMOVI $15, V24.B16
	VMOVI $48, V25.B16
	CBZ   R4, q6fneon

q6fsdot:
	Q6KFBLOCK(DOTS)
	SUBS $1, R2, R2
	BNE  q6fsdot
	B    q6fdone

q6fneon:
	Q6KFBLOCK(DOTN)
	SUBS $1, R2, R2
	BNE  q6fneon

q6fdone:
	VST1 [V30.S4, V31.S4], (R3)
	RET

// ---- Q6_K x86 lanes, one weight row against four activation rows ----

// One group of 32 levels (V8, V9) against the next 32 activations of each row (R19-R22,
// advanced): row r's lanes added to its accumulators (V16/V17, V18/V19, V27/V28,
// V29/V30) times the group's scales Vs.S[i] (lanes 0-3) and Vs.S[j] (lanes 4-7).
#define GROUPROW(DOT, p, lo, hi, s, i, j) \
	VLD1.P 32(p), [V6.B16, V7.B16]; \
	DOT(12, 8, 6); \
	DOT(13, 9, 7); \
	WMLAE(lo, 12, s, i); \
	WMLAE(hi, 13, s, j)

#define GROUP4(DOT, s, i, j) \
	GROUPROW(DOT, R19, 16, 17, s, i, j); \
	GROUPROW(DOT, R20, 18, 19, s, i, j); \
	GROUPROW(DOT, R21, 27, 28, s, i, j); \
	GROUPROW(DOT, R22, 29, 30, s, i, j)

// Half h of the weight block (ql at R5, qh at R7, advanced) against the four rows.
#define Q6HALF4(DOT, r, s) \
	VLD1.P 64(R5), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	VLD1.P 32(R7), [V4.B16, V5.B16]; \
	Q6LO(0, 1); QHSHL(4); Q6MERGE; GROUP4(DOT, r, 0, 1); \
	Q6LO(2, 3); QHSHL(2); Q6MERGE; GROUP4(DOT, r, 2, 3); \
	Q6HI(0, 1); QHMOV; Q6MERGE; GROUP4(DOT, s, 0, 1); \
	Q6HI(2, 3); QHSHR(2); Q6MERGE; GROUP4(DOT, s, 2, 3)

// Row r's block lanes (Vlo, Vhi) fma8'd with d8·d (d in F31, d8 at Rb) into acc[r] at
// R3 + 32r (V8, V9 as scratch).
#define ROWF(b, lo, hi, off) \
	FMOVS (b), F6; \
	FMULS F31, F6, F6; \
	WSCVTF4(lo, lo); \
	WSCVTF4(hi, hi); \
	ADD   $off, R3, R9; \
	VLD1  (R9), [V8.S4, V9.S4]; \
	WFMLAE(8, lo, 6, 0); \
	WFMLAE(9, hi, 6, 0); \
	VST1  [V8.S4, V9.S4], (R9)

// One Q6_K weight block (R0) against the blocks of the four rows (R10-R13), all advanced.
#define Q6KX4BLOCK(DOT) \
	MOVD R0, R5; \
	ADD  $128, R0, R7; \
	ADD  $192, R0, R8; \
	ADD  $4, R10, R19; \
	ADD  $4, R11, R20; \
	ADD  $4, R12, R21; \
	ADD  $4, R13, R22; \
	VLD1 (R8), [V10.B16]; \
	WSXTL8(11, 10); \
	WSXTL8H(12, 10); \
	WSXTL16(20, 11); \
	WSXTL16H(21, 11); \
	WSXTL16(22, 12); \
	WSXTL16H(23, 12); \
	WEOR(16, 16, 16); WEOR(17, 17, 17); WEOR(18, 18, 18); WEOR(19, 19, 19); \
	WEOR(27, 27, 27); WEOR(28, 28, 28); WEOR(29, 29, 29); WEOR(30, 30, 30); \
	Q6HALF4(DOT, 20, 21); \
	Q6HALF4(DOT, 22, 23); \
	HALF(208(R0), R9, F31); \
	ROWF(R10, 16, 17, 0); \
	ROWF(R11, 18, 19, 32); \
	ROWF(R12, 27, 28, 64); \
	ROWF(R13, 29, 30, 96); \
	ADD $210, R0; \
	ADD $292, R10; \
	ADD $292, R11; \
	ADD $292, R12; \
	ADD $292, R13

// func q6KDotx86NEONx4(w, x *byte, xstride, nb int, acc *[4][8]float32, sdot bool)
// acc[r] = dotQ6Kx86Go's accumulator of the weight row w and the activation row r at
// x + r·xstride, carried over nb ≥ 1 blocks.
TEXT ·q6KDotx86NEONx4(SB), NOSPLIT, $0-41
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R10
	MOVD  xstride+16(FP), R9
	MOVD  nb+24(FP), R2
	MOVD  acc+32(FP), R3
	MOVBU sdot+40(FP), R4
	ADD   R9, R10, R11
	ADD   R9, R11, R12
	ADD   R9, R12, R13
	VMOVI $32, V26.B16
	VMOVI $15, V24.B16
	VMOVI $48, V25.B16
	CBZ   R4, q6xneon

q6xsdot:
	Q6KX4BLOCK(DOTS)
	SUBS $1, R2, R2
	BNE  q6xsdot
	RET

q6xneon:
	Q6KX4BLOCK(DOTN)
	SUBS $1, R2, R2
	BNE  q6xneon
	RET

// ---- Q5_K x86 lanes with the float part (dotQ5Kx86Go) ----

// One Q5_K block (w at R0, x at R1, both advanced): summs (F29) = fma(−d8·dmin, Σ m·bsums,
// summs), its lanes (scales unpacked here: Q4KSCALES) fma8'd with d8·d into V30, V31.
#define Q5KFBLOCK(DOT) \
	Q4KSCALES; \
	WORR(20, 10, 10); \
	WORR(21, 11, 11); \
	ADD   $260, R1, R6; \
	VLD1  (R6), [V22.H8, V23.H8]; \
	WSADDLP(22, 22); \
	WSADDLP(23, 23); \
	WMUL4(22, 22, 12); \
	WMUL4(23, 23, 13); \
	WADD4(22, 22, 23); \
	VADDV V22.S4, V22; \
	WSCVTFS(22, 22); \
	FMOVS (R1), F18; \
	HALF(2(R0), R8, F19); \
	FNMULS F19, F18, F19; \
	FMADDS F19, F29, F22, F29; \
	ADD  $48, R0, R5; \
	ADD  $16, R0, R7; \
	ADD  $4, R1, R6; \
	VLD1 (R7), [V4.B16, V5.B16]; \
	WEOR(16, 16, 16); \
	WEOR(17, 17, 17); \
	Q5PAIR(DOT, QHSHL(4), QHSHL(3), 20, 0); \
	Q5PAIR(DOT, QHSHL(2), QHSHL(1), 20, 2); \
	Q5PAIR(DOT, QHMOV, QHSHR(1), 21, 0); \
	Q5PAIR(DOT, QHSHR(2), QHSHR(3), 21, 2); \
	HALF((R0), R8, F19); \
	FMULS F18, F19, F19; \
	WSCVTF4(16, 16); \
	WSCVTF4(17, 17); \
	WFMLAE(30, 16, 19, 0); \
	WFMLAE(31, 17, 19, 0); \
	ADD $176, R0; \
	ADD $292, R1

// func q5KDotx86NEON(w, x *byte, nb int, acc *[8]float32, summs *float32, sdot bool)
// dotQ5Kx86Go's accumulators acc and summs carried over nb ≥ 1 blocks.
TEXT ·q5KDotx86NEON(SB), NOSPLIT, $0-41
	MOVD  w+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  nb+16(FP), R2
	MOVD  acc+24(FP), R3
	MOVD  summs+32(FP), R10
	MOVBU sdot+40(FP), R4
	VLD1  (R3), [V30.S4, V31.S4]
	FMOVS (R10), F29
	VMOVI $15, V24.B16
	VMOVI $16, V25.B16
	VMOVI $63, V26.B16
	MOVD  $0xFCFCFCFC00000000, R9
	VMOV  R9, V27.D[0]
	VMOVI $15, V28.B16
	CBZ   R4, q5fneon

q5fsdot:
	Q5KFBLOCK(DOTS)
	SUBS $1, R2, R2
	BNE  q5fsdot
	B    q5fdone

q5fneon:
	Q5KFBLOCK(DOTN)
	SUBS $1, R2, R2
	BNE  q5fneon

q5fdone:
	VST1  [V30.S4, V31.S4], (R3)
	FMOVS F29, (R10)
	RET
