#include "textflag.h"

// NEON forms of simd.go's float32 kernels (see neon_arm64.go). A 16-lane accumulator
// is four 4-lane registers; every addition is VFMLA by a register of ones (V0 after the
// loop), whose products are exact, so it rounds as a float32 addition does.

// ONES(v): every lane of v = 1.0.
#define ONES(v) \
	FMOVS $1.0, F0; \
	VDUP  V0.S[0], v.S4

// REDUCE16(a, b, c, d, t): lane 0 of a (F-register a) = reduce16 of the accumulator
// (a, b, c, d) (lanes 0-3, 4-7, 8-11, 12-15), V0 holding ones.
#define REDUCE16(a, b, c, d, t, fa, ft) \
	VFMLA c.S4, V0.S4, a.S4; \
	VFMLA d.S4, V0.S4, b.S4; \
	VFMLA b.S4, V0.S4, a.S4; \
	VEXT  $8, a.B16, a.B16, t.B16; \
	VFMLA t.S4, V0.S4, a.S4; \
	VEXT  $4, a.B16, a.B16, t.B16; \
	FADDS ft, fa, fa

// func sgemmF32BlocksNEON(a, b *float32, nblk int) float32
// sgemmF32 of one pair of rows over nblk ≥ 1 blocks of 16.
TEXT ·sgemmF32BlocksNEON(SB), NOSPLIT, $0-28
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD nblk+16(FP), R2
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16

s11k:
	VLD1.P 64(R0), [V1.S4, V2.S4, V3.S4, V4.S4]
	VLD1.P 64(R1), [V5.S4, V6.S4, V7.S4, V8.S4]
	VFMLA  V1.S4, V5.S4, V16.S4
	VFMLA  V2.S4, V6.S4, V17.S4
	VFMLA  V3.S4, V7.S4, V18.S4
	VFMLA  V4.S4, V8.S4, V19.S4
	SUBS   $1, R2, R2
	BNE    s11k

	ONES(V0)
	REDUCE16(V16, V17, V18, V19, V20, F16, F20)
	FMOVS F16, ret+24(FP)
	RET

// func sgemm2x2F32NEON(w *float32, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int)
// sgemmF32 of weight rows w, w+ws against the activation rows x+2i·xs, x+(2i+1)·xs for
// i < nx2, over nblk blocks of 16: a 2×2 tile of outputs at a time, dst advanced by
// 2·ds per pair of activation rows.
TEXT ·sgemm2x2F32NEON(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD ws+8(FP), R1
	MOVD x+16(FP), R2
	MOVD xs+24(FP), R3
	MOVD nx2+32(FP), R4
	MOVD nblk+40(FP), R5
	MOVD dst+48(FP), R6
	MOVD ds+56(FP), R7
	CBZ  R4, s22done

s22x:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16
	MOVD R0, R8           // w row 0
	ADD  R0, R1, R9       // w row 1
	MOVD R2, R10          // x row 0
	ADD  R2, R3, R11      // x row 1
	MOVD R5, R12

s22k:
	VLD1.P 64(R8), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R9), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R10), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1.P 64(R11), [V12.S4, V13.S4, V14.S4, V15.S4]
	VFMLA  V0.S4, V8.S4, V16.S4
	VFMLA  V1.S4, V9.S4, V17.S4
	VFMLA  V2.S4, V10.S4, V18.S4
	VFMLA  V3.S4, V11.S4, V19.S4
	VFMLA  V0.S4, V12.S4, V20.S4
	VFMLA  V1.S4, V13.S4, V21.S4
	VFMLA  V2.S4, V14.S4, V22.S4
	VFMLA  V3.S4, V15.S4, V23.S4
	VFMLA  V4.S4, V8.S4, V24.S4
	VFMLA  V5.S4, V9.S4, V25.S4
	VFMLA  V6.S4, V10.S4, V26.S4
	VFMLA  V7.S4, V11.S4, V27.S4
	VFMLA  V4.S4, V12.S4, V28.S4
	VFMLA  V5.S4, V13.S4, V29.S4
	VFMLA  V6.S4, V14.S4, V30.S4
	VFMLA  V7.S4, V15.S4, V31.S4
	SUBS   $1, R12, R12
	BNE    s22k

	ONES(V0)
	REDUCE16(V16, V17, V18, V19, V1, F16, F1)
	REDUCE16(V20, V21, V22, V23, V1, F20, F1)
	REDUCE16(V24, V25, V26, V27, V1, F24, F1)
	REDUCE16(V28, V29, V30, V31, V1, F28, F1)
	FMOVS F16, (R6)       // dst[x0][w0]
	FMOVS F24, 4(R6)      // dst[x0][w1]
	ADD   R6, R7, R13
	FMOVS F20, (R13)      // dst[x1][w0]
	FMOVS F28, 4(R13)     // dst[x1][w1]
	ADD   R3<<1, R2, R2
	ADD   R7<<1, R6, R6
	SUBS  $1, R4, R4
	BNE   s22x

s22done:
	RET

// func vecDotF32RowsNEON(w *float32, ws int, x *float32, n, rows int, dst *float32)
// dst[r] = vecDotF32(w+r·ws, x, n) for r < rows: blocks of 64 into four 16-lane
// accumulators, (0+2)+(1+3), reduce16, then the n%64 tail one fused multiply-add at a
// time.
TEXT ·vecDotF32RowsNEON(SB), NOSPLIT, $0-48
	MOVD w+0(FP), R0
	MOVD ws+8(FP), R1
	MOVD x+16(FP), R2
	MOVD n+24(FP), R3
	MOVD rows+32(FP), R4
	MOVD dst+40(FP), R5
	LSR  $6, R3, R6       // blocks of 64
	AND  $63, R3, R7      // tail
	CBZ  R4, vdone

vrow:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16
	MOVD R0, R8
	MOVD R2, R9
	MOVD R6, R10
	CBZ  R10, vred

vblk:
	VLD1.P 64(R8), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R8), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R9), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1.P 64(R9), [V12.S4, V13.S4, V14.S4, V15.S4]
	VFMLA  V0.S4, V8.S4, V16.S4
	VFMLA  V1.S4, V9.S4, V17.S4
	VFMLA  V2.S4, V10.S4, V18.S4
	VFMLA  V3.S4, V11.S4, V19.S4
	VFMLA  V4.S4, V12.S4, V20.S4
	VFMLA  V5.S4, V13.S4, V21.S4
	VFMLA  V6.S4, V14.S4, V22.S4
	VFMLA  V7.S4, V15.S4, V23.S4
	VLD1.P 64(R8), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R8), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R9), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1.P 64(R9), [V12.S4, V13.S4, V14.S4, V15.S4]
	VFMLA  V0.S4, V8.S4, V24.S4
	VFMLA  V1.S4, V9.S4, V25.S4
	VFMLA  V2.S4, V10.S4, V26.S4
	VFMLA  V3.S4, V11.S4, V27.S4
	VFMLA  V4.S4, V12.S4, V28.S4
	VFMLA  V5.S4, V13.S4, V29.S4
	VFMLA  V6.S4, V14.S4, V30.S4
	VFMLA  V7.S4, V15.S4, V31.S4
	SUBS   $1, R10, R10
	BNE    vblk

vred:
	ONES(V0)
	VFMLA V24.S4, V0.S4, V16.S4 // acc0 += acc2
	VFMLA V25.S4, V0.S4, V17.S4
	VFMLA V26.S4, V0.S4, V18.S4
	VFMLA V27.S4, V0.S4, V19.S4
	VFMLA V28.S4, V0.S4, V20.S4 // acc1 += acc3
	VFMLA V29.S4, V0.S4, V21.S4
	VFMLA V30.S4, V0.S4, V22.S4
	VFMLA V31.S4, V0.S4, V23.S4
	VFMLA V20.S4, V0.S4, V16.S4 // acc0 += acc1
	VFMLA V21.S4, V0.S4, V17.S4
	VFMLA V22.S4, V0.S4, V18.S4
	VFMLA V23.S4, V0.S4, V19.S4
	REDUCE16(V16, V17, V18, V19, V1, F16, F1)
	MOVD R7, R10
	CBZ  R10, vstore

vtail:
	FMOVS.P 4(R8), F1
	FMOVS.P 4(R9), F2
	FMADDS  F2, F16, F1, F16
	SUBS    $1, R10, R10
	BNE     vtail

vstore:
	FMOVS.P F16, 4(R5)
	ADD     R1, R0, R0
	SUBS    $1, R4, R4
	BNE     vrow

vdone:
	RET

// ---- F16 weights against float32 activations (F16 values widened, f16WideX) ----

// FCVTL Vd.4S, Vn.4H and FCVTL2 Vd.4S, Vn.8H (register numbers): F16 to float32, exact
// (a signaling NaN comes out quiet, where the Go table keeps it).
#define FCVTL(d, n)  WORD $(0x0E217800 | ((n)<<5) | (d))
#define FCVTL2(d, n) WORD $(0x4E217800 | ((n)<<5) | (d))

// WIDEN2(a, b, c, d): the 16 halves in Va, Vb widened to float32 in Va, Vb, Vc, Vd
// (each source read before it is overwritten).
#define WIDEN2(a, b, c, d) FCVTL2(d, b); FCVTL(c, b); FCVTL2(b, a); FCVTL(a, a)

// WIDEN4: the 32 halves in V0-V3 widened to float32 in V0-V7.
#define WIDEN4 FCVTL2(7, 3); FCVTL(6, 3); FCVTL2(5, 2); FCVTL(4, 2); FCVTL2(3, 1); FCVTL(2, 1); FCVTL2(1, 0); FCVTL(0, 0)

// func sgemmF16F32BlocksNEON(a *uint16, b *float32, nblk int) float32
// sgemmF16F32Go of an F16 row and a float32 row over nblk ≥ 1 blocks of 16.
TEXT ·sgemmF16F32BlocksNEON(SB), NOSPLIT, $0-28
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD nblk+16(FP), R2
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16

h11k:
	VLD1.P 32(R0), [V1.H8, V2.H8]
	WIDEN2(1, 2, 3, 4)
	VLD1.P 64(R1), [V5.S4, V6.S4, V7.S4, V8.S4]
	VFMLA  V1.S4, V5.S4, V16.S4
	VFMLA  V2.S4, V6.S4, V17.S4
	VFMLA  V3.S4, V7.S4, V18.S4
	VFMLA  V4.S4, V8.S4, V19.S4
	SUBS   $1, R2, R2
	BNE    h11k

	ONES(V0)
	REDUCE16(V16, V17, V18, V19, V20, F16, F20)
	FMOVS F16, ret+24(FP)
	RET

// func sgemm2x2F16NEON(w *uint16, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int)
// sgemmF16F32Go (sgemm2x2F16NEON over F16 weights) of weight rows w, w+ws against the activation rows x+2i·xs, x+(2i+1)·xs for
// i < nx2, over nblk blocks of 16: a 2×2 tile of outputs at a time, dst advanced by
// 2·ds per pair of activation rows.
TEXT ·sgemm2x2F16NEON(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD ws+8(FP), R1
	MOVD x+16(FP), R2
	MOVD xs+24(FP), R3
	MOVD nx2+32(FP), R4
	MOVD nblk+40(FP), R5
	MOVD dst+48(FP), R6
	MOVD ds+56(FP), R7
	CBZ  R4, h22done

h22x:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16
	MOVD R0, R8           // w row 0
	ADD  R0, R1, R9       // w row 1
	MOVD R2, R10          // x row 0
	ADD  R2, R3, R11      // x row 1
	MOVD R5, R12

h22k:
	VLD1.P 32(R8), [V0.H8, V1.H8]
	VLD1.P 32(R9), [V4.H8, V5.H8]
	WIDEN2(0, 1, 2, 3)
	WIDEN2(4, 5, 6, 7)
	VLD1.P 64(R10), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1.P 64(R11), [V12.S4, V13.S4, V14.S4, V15.S4]
	VFMLA  V0.S4, V8.S4, V16.S4
	VFMLA  V1.S4, V9.S4, V17.S4
	VFMLA  V2.S4, V10.S4, V18.S4
	VFMLA  V3.S4, V11.S4, V19.S4
	VFMLA  V0.S4, V12.S4, V20.S4
	VFMLA  V1.S4, V13.S4, V21.S4
	VFMLA  V2.S4, V14.S4, V22.S4
	VFMLA  V3.S4, V15.S4, V23.S4
	VFMLA  V4.S4, V8.S4, V24.S4
	VFMLA  V5.S4, V9.S4, V25.S4
	VFMLA  V6.S4, V10.S4, V26.S4
	VFMLA  V7.S4, V11.S4, V27.S4
	VFMLA  V4.S4, V12.S4, V28.S4
	VFMLA  V5.S4, V13.S4, V29.S4
	VFMLA  V6.S4, V14.S4, V30.S4
	VFMLA  V7.S4, V15.S4, V31.S4
	SUBS   $1, R12, R12
	BNE    h22k

	ONES(V0)
	REDUCE16(V16, V17, V18, V19, V1, F16, F1)
	REDUCE16(V20, V21, V22, V23, V1, F20, F1)
	REDUCE16(V24, V25, V26, V27, V1, F24, F1)
	REDUCE16(V28, V29, V30, V31, V1, F28, F1)
	FMOVS F16, (R6)       // dst[x0][w0]
	FMOVS F24, 4(R6)      // dst[x0][w1]
	ADD   R6, R7, R13
	FMOVS F20, (R13)      // dst[x1][w0]
	FMOVS F28, 4(R13)     // dst[x1][w1]
	ADD   R3<<1, R2, R2
	ADD   R7<<1, R6, R6
	SUBS  $1, R4, R4
	BNE   h22x

h22done:
	RET

// func vecDotF16F32RowsNEON(w *uint16, ws int, x *float32, n, rows int, dst *float32)
// dst[r] = vecDotTileF16Go's output for F16 weight row w+r·ws and float32 row x, r < rows:
// vecDotF16F32RowsNEON's blocks over the widened weights, then the reduced blocks and the
// n%64 tail (float32 products) summed in float64.
TEXT ·vecDotF16F32RowsNEON(SB), NOSPLIT, $0-48
	MOVD w+0(FP), R0
	MOVD ws+8(FP), R1
	MOVD x+16(FP), R2
	MOVD n+24(FP), R3
	MOVD rows+32(FP), R4
	MOVD dst+40(FP), R5
	LSR  $6, R3, R6       // blocks of 64
	AND  $63, R3, R7      // tail
	CBZ  R4, hdone

hrow:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16
	MOVD R0, R8
	MOVD R2, R9
	MOVD R6, R10
	CBZ  R10, hred

hblk:
	VLD1.P 64(R8), [V0.H8, V1.H8, V2.H8, V3.H8]
	WIDEN4
	VLD1.P 64(R9), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1.P 64(R9), [V12.S4, V13.S4, V14.S4, V15.S4]
	VFMLA  V0.S4, V8.S4, V16.S4
	VFMLA  V1.S4, V9.S4, V17.S4
	VFMLA  V2.S4, V10.S4, V18.S4
	VFMLA  V3.S4, V11.S4, V19.S4
	VFMLA  V4.S4, V12.S4, V20.S4
	VFMLA  V5.S4, V13.S4, V21.S4
	VFMLA  V6.S4, V14.S4, V22.S4
	VFMLA  V7.S4, V15.S4, V23.S4
	VLD1.P 64(R8), [V0.H8, V1.H8, V2.H8, V3.H8]
	WIDEN4
	VLD1.P 64(R9), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1.P 64(R9), [V12.S4, V13.S4, V14.S4, V15.S4]
	VFMLA  V0.S4, V8.S4, V24.S4
	VFMLA  V1.S4, V9.S4, V25.S4
	VFMLA  V2.S4, V10.S4, V26.S4
	VFMLA  V3.S4, V11.S4, V27.S4
	VFMLA  V4.S4, V12.S4, V28.S4
	VFMLA  V5.S4, V13.S4, V29.S4
	VFMLA  V6.S4, V14.S4, V30.S4
	VFMLA  V7.S4, V15.S4, V31.S4
	SUBS   $1, R10, R10
	BNE    hblk

hred:
	ONES(V0)
	VFMLA V24.S4, V0.S4, V16.S4 // acc0 += acc2
	VFMLA V25.S4, V0.S4, V17.S4
	VFMLA V26.S4, V0.S4, V18.S4
	VFMLA V27.S4, V0.S4, V19.S4
	VFMLA V28.S4, V0.S4, V20.S4 // acc1 += acc3
	VFMLA V29.S4, V0.S4, V21.S4
	VFMLA V30.S4, V0.S4, V22.S4
	VFMLA V31.S4, V0.S4, V23.S4
	VFMLA V20.S4, V0.S4, V16.S4 // acc0 += acc1
	VFMLA V21.S4, V0.S4, V17.S4
	VFMLA V22.S4, V0.S4, V18.S4
	VFMLA V23.S4, V0.S4, V19.S4
	REDUCE16(V16, V17, V18, V19, V1, F16, F1)
	FCVTSD F16, F16
	MOVD R7, R10
	CBZ  R10, hstore

htail:
	MOVHU.P 2(R8), R11
	FMOVS   R11, F1
	FCVTHS  F1, F1
	FMOVS.P 4(R9), F2
	FMULS   F2, F1, F1
	FCVTSD  F1, F1
	FADDD   F1, F16, F16
	SUBS    $1, R10, R10
	BNE     htail

hstore:
	FCVTDS  F16, F16
	FMOVS.P F16, 4(R5)
	ADD     R1, R0, R0
	SUBS    $1, R4, R4
	BNE     hrow

hdone:
	RET
