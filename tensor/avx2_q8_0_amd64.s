#include "textflag.h"

// AVX2 kernels (no AVX-512) of the x86 lane order of Q8_0 (dotQ8_0x86Go): per weight
// row and activation row, eight float32 lanes, lane l = fma(dw·dx, Σ_{k<4} w·x over
// elements 4l..4l+3, lane) block after block; the caller reduces them (hsum8).
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

// func q80LanesR2X4(w *byte, wstride int, xp *byte, xpstride int, nb int, acc *[8][8]float32)
// acc[4r+i] = the lanes of weight row r < 2 (at w+r·wstride) and prepared activation
// row i < 4 (at xp+i·xpstride) over nb ≥ 1 blocks.
TEXT ·q80LanesR2X4(SB), NOSPLIT, $0-48
	MOVQ   w+0(FP), SI
	MOVQ   wstride+8(FP), BX
	LEAQ   (SI)(BX*1), R8
	MOVQ   xp+16(FP), DI
	MOVQ   xpstride+24(FP), R11
	LEAQ   (DI)(R11*1), R12
	LEAQ   (DI)(R11*2), R13
	LEAQ   (R12)(R11*2), R14
	MOVQ   nb+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

q80r2x4:
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
	JNZ  q80r2x4

	MOVQ    acc+40(FP), AX
	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VMOVUPS Y3, 96(AX)
	VMOVUPS Y4, 128(AX)
	VMOVUPS Y5, 160(AX)
	VMOVUPS Y6, 192(AX)
	VMOVUPS Y7, 224(AX)
	VZEROUPPER
	RET

// func q80LanesR4X1(w *byte, wstride int, xp *byte, nb int, acc *[4][8]float32)
// acc[r] = the lanes of weight row r < 4 (at w+r·wstride) and the prepared activation
// row at xp over nb ≥ 1 blocks.
TEXT ·q80LanesR4X1(SB), NOSPLIT, $0-40
	MOVQ   w+0(FP), SI
	MOVQ   wstride+8(FP), BX
	LEAQ   (SI)(BX*1), R8
	LEAQ   (SI)(BX*2), R9
	LEAQ   (R8)(BX*2), R10
	MOVQ   xp+16(FP), DI
	MOVQ   nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q80r4x1:
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
	JNZ  q80r4x1

	MOVQ    acc+32(FP), AX
	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VMOVUPS Y3, 96(AX)
	VZEROUPPER
	RET

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
