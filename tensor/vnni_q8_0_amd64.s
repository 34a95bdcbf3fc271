#include "textflag.h"
#include "avx2_hsum_amd64.h"

// AVX512-VNNI kernels of the x86 lane order of Q8_0 (dotQ8_0x86Go): what q80TileR2X4
// and q80TileR4X1 (avx2_q8_0_amd64.s) compute, lane for lane, with VPDPBUSD on YMM
// registers. VPDPBUSD multiplies unsigned by signed bytes, so the weights are biased to
// w+128 (w XOR 0x80) and the activation rows are prepared once per call
// (q80XPrepVNNI) with, per block, the correction −128·Σ_{k<4} x[4l+k] of each lane l:
// the accumulator starts from it and VPDPBUSD adds Σ (w+128)·x, which leaves the exact
// Σ w·x of the four products. The float32 operations are those of the AVX2 kernels, in
// the same order, so the bits are theirs.
//
// A prepared block is 96 bytes: the 32 quants, the eight int32 corrections, dx
// broadcast to eight float32.

DATA q80vbias<>+0(SB)/8, $0x8080808080808080
DATA q80vbias<>+8(SB)/8, $0x8080808080808080
DATA q80vbias<>+16(SB)/8, $0x8080808080808080
DATA q80vbias<>+24(SB)/8, $0x8080808080808080
GLOBL q80vbias<>(SB), RODATA|NOPTR, $32

// Q80VPREP writes the prepared form of the block whose quants are at qoff(SI) and whose
// scale (f16) is at (SI) to (DI). Needs Y16 = q80vbias; Y0..Y3 are clobbered.
#define Q80VPREP(qoff) \
	VMOVDQU      qoff(SI), Y0; \
	VPXOR        Y1, Y1, Y1; \
	VPDPBUSD     Y0, Y16, Y1; \
	VPXOR        Y2, Y2, Y2; \
	VPSUBD       Y1, Y2, Y2; \
	VPBROADCASTW (SI), X3; \
	VCVTPH2PS    X3, Y3; \
	VMOVDQU      Y0, 0(DI); \
	VMOVDQU      Y2, 32(DI); \
	VMOVUPS      Y3, 64(DI)

// func q80XPrepVNNI(x *byte, nb int, dst *byte)
// Writes the 96-byte VNNI form of nb ≥ 1 Q8_0 blocks at x to dst.
TEXT ·q80XPrepVNNI(SB), NOSPLIT, $0-24
	MOVQ      x+0(FP), SI
	MOVQ      nb+8(FP), CX
	MOVQ      dst+16(FP), DI
	VMOVDQU64 q80vbias<>(SB), Y16

q80vprep:
	Q80VPREP(2)
	ADDQ $34, SI
	ADDQ $96, DI
	DECQ CX
	JNZ  q80vprep
	VZEROUPPER
	RET

// func q81XPrepVNNI(x *byte, nb int, dst *byte)
// q80XPrepVNNI of nb ≥ 1 Q8_1 blocks (the scale at 0, the quants at 4).
TEXT ·q81XPrepVNNI(SB), NOSPLIT, $0-24
	MOVQ      x+0(FP), SI
	MOVQ      nb+8(FP), CX
	MOVQ      dst+16(FP), DI
	VMOVDQU64 q80vbias<>(SB), Y16

q81vprep:
	Q80VPREP(4)
	ADDQ $36, SI
	ADDQ $96, DI
	DECQ CX
	JNZ  q81vprep
	VZEROUPPER
	RET

// Q80VW puts the biased quants (w+128) of the weight block at (ptr) in wu and its dw,
// broadcast, in dw. Needs Y16 = q80vbias; X15 is clobbered.
#define Q80VW(ptr, wu, dw) \
	VMOVDQU      2(ptr), wu; \
	VPXORD       Y16, wu, wu; \
	VPBROADCASTW (ptr), X15; \
	VCVTPH2PS    X15, dw

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

// Q80VMACX adds the prepared activation block in registers (quants xq, corrections
// xc, dx xd) to acc, for the weight block in wu, dw. Y14 and Y15 are clobbered.
#define Q80VMACX(xq, xc, xd, wu, dw, acc) \
	VMOVDQA64   xc, Y14; \
	VPDPBUSD    xq, wu, Y14; \
	VCVTDQ2PS   Y14, Y14; \
	VMULPS      xd, dw, Y15; \
	VFMADD231PS Y15, Y14, acc

// func q80TileR2X4VNNI(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)
// q80TileR2X4 over activation rows prepared by q80XPrepVNNI, their blocks loaded once
// for the two weight rows.
TEXT ·q80TileR2X4VNNI(SB), NOSPLIT, $0-64
	VMOVDQU64 q80vbias<>(SB), Y16
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

q80v2x4pair:
	MOVQ R9, SI
	LEAQ (R9)(BX*1), R8
	MOVQ nb+40(FP), CX
	ZERO8

q80v2x4:
	VMOVDQU64 0(DI), Y17
	VMOVDQU64 32(DI), Y18
	VMOVUPS   64(DI), Y19
	VMOVDQU64 0(R12), Y20
	VMOVDQU64 32(R12), Y21
	VMOVUPS   64(R12), Y22
	VMOVDQU64 0(R13), Y23
	VMOVDQU64 32(R13), Y24
	VMOVUPS   64(R13), Y25
	VMOVDQU64 0(R14), Y26
	VMOVDQU64 32(R14), Y27
	VMOVUPS   64(R14), Y28
	Q80VW(SI, Y8, Y12)
	Q80VW(R8, Y10, Y13)
	Q80VMACX(Y17, Y18, Y19, Y8, Y12, Y0)
	Q80VMACX(Y20, Y21, Y22, Y8, Y12, Y1)
	Q80VMACX(Y23, Y24, Y25, Y8, Y12, Y2)
	Q80VMACX(Y26, Y27, Y28, Y8, Y12, Y3)
	Q80VMACX(Y17, Y18, Y19, Y10, Y13, Y4)
	Q80VMACX(Y20, Y21, Y22, Y10, Y13, Y5)
	Q80VMACX(Y23, Y24, Y25, Y10, Y13, Y6)
	Q80VMACX(Y26, Y27, Y28, Y10, Y13, Y7)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $96, DI
	ADDQ $96, R12
	ADDQ $96, R13
	ADDQ $96, R14
	DECQ CX
	JNZ  q80v2x4

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
	JNZ  q80v2x4pair
	VZEROUPPER
	RET

// func q80TileR4X1VNNI(w *byte, wstride, nquads int, xp *byte, nb int, dst *float32)
// q80TileR4X1 over an activation row prepared by q80XPrepVNNI, its block loaded once
// for the four weight rows.
TEXT ·q80TileR4X1VNNI(SB), NOSPLIT, $0-48
	VMOVDQU64 q80vbias<>(SB), Y16
	MOVQ  w+0(FP), R11
	MOVQ  wstride+8(FP), BX
	MOVQ  nquads+16(FP), R12
	MOVQ  xp+24(FP), DI
	MOVQ  nb+32(FP), R13
	IMULQ $96, R13
	MOVQ  dst+40(FP), AX

q80v4x1quad:
	MOVQ   R11, SI
	LEAQ   (R11)(BX*1), R8
	LEAQ   (R11)(BX*2), R9
	LEAQ   (R8)(BX*2), R10
	MOVQ   nb+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q80v4x1:
	VMOVDQU64 0(DI), Y17
	VMOVDQU64 32(DI), Y18
	VMOVUPS   64(DI), Y19
	Q80VW(SI, Y4, Y6)
	Q80VW(R8, Y7, Y9)
	Q80VMACX(Y17, Y18, Y19, Y4, Y6, Y0)
	Q80VMACX(Y17, Y18, Y19, Y7, Y9, Y1)
	Q80VW(R9, Y4, Y6)
	Q80VW(R10, Y7, Y9)
	Q80VMACX(Y17, Y18, Y19, Y4, Y6, Y2)
	Q80VMACX(Y17, Y18, Y19, Y7, Y9, Y3)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $34, R9
	ADDQ $34, R10
	ADDQ $96, DI
	DECQ CX
	JNZ  q80v4x1
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
	JNZ  q80v4x1quad
	VZEROUPPER
	RET
