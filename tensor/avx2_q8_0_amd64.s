#include "textflag.h"
#include "avx2_hsum_amd64.h"

// AVX2 kernels (no AVX-512) of the x86 lane order of Q8_0 (dotQ8_0x86Go): per weight
// row and activation row, eight float32 lanes, lane l = fma(dw·dx, Σ_{k<4} w·x over
// elements 4l..4l+3, lane) block after block, reduced by hsum8 in the kernels.
//
// The int8 products are exact for every byte: the even and the odd bytes of a block,
// sign-extended to words (E, O), go through VPMADDWD separately, and the sum of the
// two leaves in dword l the four products of elements 4l..4l+3. The activation rows
// are prepared once per call (q80XPrep): per block 96 bytes, E, O and dx broadcast to
// eight float32.

// func q80XPrep(x *byte, nb int, dst *byte)
// Writes the 96-byte prepared form of nb ≥ 1 Q8_0 blocks at x to dst.
TEXT ·q80XPrep(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ dst+16(FP), DI

q80prep:
	VMOVDQU      2(SI), Y0
	VPSLLW       $8, Y0, Y1
	VPSRAW       $8, Y1, Y1
	VPSRAW       $8, Y0, Y2
	VPBROADCASTW (SI), X3
	VCVTPH2PS    X3, Y3
	VMOVDQU      Y1, 0(DI)
	VMOVDQU      Y2, 32(DI)
	VMOVUPS      Y3, 64(DI)
	ADDQ         $34, SI
	ADDQ         $96, DI
	DECQ         CX
	JNZ          q80prep
	VZEROUPPER
	RET

// Q80W puts the E and O words of the weight block at (ptr) in e and o and its dw,
// broadcast, in dw.
#define Q80W(ptr, e, o, dw) \
	VMOVDQU      2(ptr), o; \
	VPSLLW       $8, o, e; \
	VPSRAW       $8, e, e; \
	VPSRAW       $8, o, o; \
	VPBROADCASTW (ptr), X15; \
	VCVTPH2PS    X15, dw

// Q80MAC adds the block of the prepared activation row at (xp) to acc, for the weight
// block in e, o, dw. Y14 and Y15 are clobbered.
#define Q80MAC(xp, e, o, dw, acc) \
	VPMADDWD    0(xp), e, Y14; \
	VPMADDWD    32(xp), o, Y15; \
	VPADDD      Y15, Y14, Y14; \
	VCVTDQ2PS   Y14, Y14; \
	VMULPS      64(xp), dw, Y15; \
	VFMADD231PS Y15, Y14, acc

// func q81XPrep(x *byte, nb int, dst *byte)
// q80XPrep of nb ≥ 1 Q8_1 blocks (the scale at 0, the quants at 4).
TEXT ·q81XPrep(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ dst+16(FP), DI

q81prep:
	VMOVDQU      4(SI), Y0
	VPSLLW       $8, Y0, Y1
	VPSRAW       $8, Y1, Y1
	VPSRAW       $8, Y0, Y2
	VPBROADCASTW (SI), X3
	VCVTPH2PS    X3, Y3
	VMOVDQU      Y1, 0(DI)
	VMOVDQU      Y2, 32(DI)
	VMOVUPS      Y3, 64(DI)
	ADDQ         $36, SI
	ADDQ         $96, DI
	DECQ         CX
	JNZ          q81prep
	VZEROUPPER
	RET

// ZERO8 clears Y0..Y7.
#define ZERO8 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// func q80TileR2X4(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)
// For p < npairs, r < 2, i < 4: dst[i·dststride/4 + 2p + r] = hsum8 of the lanes of
// weight row 2p+r (at w+(2p+r)·wstride) and prepared activation row i (at
// xp+i·xpstride) over nb ≥ 1 blocks (hsum8 in its order; dststride in bytes). npairs ≥ 1.
TEXT ·q80TileR2X4(SB), NOSPLIT, $0-64
	MOVQ  w+0(FP), R9
	MOVQ  wstride+8(FP), BX
	MOVQ  npairs+16(FP), R10
	MOVQ  xp+24(FP), DI
	MOVQ  xpstride+32(FP), R11
	LEAQ  (DI)(R11*1), R12
	LEAQ  (DI)(R11*2), R13
	LEAQ  (R12)(R11*2), R14
	MOVQ  nb+40(FP), R11
	IMULQ $96, R11
	MOVQ  dst+48(FP), AX
	MOVQ  dststride+56(FP), DX

q80t2x4pair:
	MOVQ R9, SI
	LEAQ (R9)(BX*1), R8
	MOVQ nb+40(FP), CX
	ZERO8

q80t2x4:
	Q80W(SI, Y8, Y9, Y12)
	Q80W(R8, Y10, Y11, Y13)
	Q80MAC(DI, Y8, Y9, Y12, Y0)
	Q80MAC(R12, Y8, Y9, Y12, Y1)
	Q80MAC(R13, Y8, Y9, Y12, Y2)
	Q80MAC(R14, Y8, Y9, Y12, Y3)
	Q80MAC(DI, Y10, Y11, Y13, Y4)
	Q80MAC(R12, Y10, Y11, Y13, Y5)
	Q80MAC(R13, Y10, Y11, Y13, Y6)
	Q80MAC(R14, Y10, Y11, Y13, Y7)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $96, DI
	ADDQ $96, R12
	ADDQ $96, R13
	ADDQ $96, R14
	DECQ CX
	JNZ  q80t2x4

	SUBQ R11, DI
	SUBQ R11, R12
	SUBQ R11, R13
	SUBQ R11, R14

	// hsum8 of the eight accumulators: Y13 = [row 0 × activation rows 0..3 | row 1 × 0..3].
	HALVES(Y0, Y4, Y8, Y15)
	HALVES(Y1, Y5, Y9, Y15)
	HALVES(Y2, Y6, Y10, Y15)
	HALVES(Y3, Y7, Y11, Y15)
	PAIRS(Y8, Y9, Y12, Y15)
	PAIRS(Y10, Y11, Y14, Y15)
	VHADDPS      Y14, Y12, Y13
	VEXTRACTF128 $1, Y13, X14
	VUNPCKLPS    X14, X13, X15 // [s0 s4 s1 s5]: activation rows 0 and 1
	VUNPCKHPS    X14, X13, X12 // [s2 s6 s3 s7]: activation rows 2 and 3
	LEAQ         (AX)(DX*1), SI
	LEAQ         (AX)(DX*2), R8
	VMOVQ        X15, (AX)
	VMOVHPS      X15, (SI)
	VMOVQ        X12, (R8)
	VMOVHPS      X12, (SI)(DX*2)

	ADDQ $8, AX
	LEAQ (R9)(BX*2), R9
	DECQ R10
	JNZ  q80t2x4pair
	VZEROUPPER
	RET

// func q80TileR4X1(w *byte, wstride, nquads int, xp *byte, nb int, dst *float32)
// For q < nquads, r < 4: dst[4q+r] = hsum8 of the lanes of weight row 4q+r (at
// w+(4q+r)·wstride) and the prepared activation row at xp over nb ≥ 1 blocks
// (hsum8 in its order). nquads ≥ 1.
TEXT ·q80TileR4X1(SB), NOSPLIT, $0-48
	MOVQ  w+0(FP), R11
	MOVQ  wstride+8(FP), BX
	MOVQ  nquads+16(FP), R12
	MOVQ  xp+24(FP), DI
	MOVQ  nb+32(FP), R13
	IMULQ $96, R13
	MOVQ  dst+40(FP), AX

q80t4x1quad:
	MOVQ   R11, SI
	LEAQ   (R11)(BX*1), R8
	LEAQ   (R11)(BX*2), R9
	LEAQ   (R8)(BX*2), R10
	MOVQ   nb+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q80t4x1:
	Q80W(SI, Y4, Y5, Y6)
	Q80W(R8, Y7, Y8, Y9)
	Q80MAC(DI, Y4, Y5, Y6, Y0)
	Q80MAC(DI, Y7, Y8, Y9, Y1)
	Q80W(R9, Y4, Y5, Y6)
	Q80W(R10, Y7, Y8, Y9)
	Q80MAC(DI, Y4, Y5, Y6, Y2)
	Q80MAC(DI, Y7, Y8, Y9, Y3)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $34, R9
	ADDQ $34, R10
	ADDQ $96, DI
	DECQ CX
	JNZ  q80t4x1
	SUBQ R13, DI

	// hsum8 of the four accumulators: X13 = [s0 s1 s2 s3].
	HALVES(Y0, Y2, Y8, Y15)
	HALVES(Y1, Y3, Y9, Y15)
	PAIRS(Y8, Y9, Y12, Y15)
	VHADDPS      Y12, Y12, Y13
	VEXTRACTF128 $1, Y13, X14
	VMOVLHPS     X14, X13, X13
	VMOVUPS      X13, (AX)

	ADDQ $16, AX
	LEAQ (R11)(BX*4), R11
	DECQ R12
	JNZ  q80t4x1quad
	VZEROUPPER
	RET
