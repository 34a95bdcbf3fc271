#include "textflag.h"

// The AVX2 quantizer of Q8_K activations (quantize_row_q8_K_ref, quantizeBlockQ8K):
// the largest |x| (MAXPS in the order that skips NaNs, as the Go loop's strict >), the
// first element that has it, iscale = −127/that element, and every quant computed as
// nearest_int computes it (x·iscale + 1.5·2^23, mantissa bits − 2^22), min 127, low
// byte. The bsums are the caller's.

DATA q8kabs<>+0(SB)/4, $0x7fffffff
GLOBL q8kabs<>(SB), RODATA|NOPTR, $4

DATA q8kmagic<>+0(SB)/4, $0x4b400000
GLOBL q8kmagic<>(SB), RODATA|NOPTR, $4

DATA q8kmant<>+0(SB)/4, $0x007fffff
GLOBL q8kmant<>(SB), RODATA|NOPTR, $4

DATA q8khalf<>+0(SB)/4, $0x00400000
GLOBL q8khalf<>(SB), RODATA|NOPTR, $4

DATA q8k127<>+0(SB)/4, $127
GLOBL q8k127<>(SB), RODATA|NOPTR, $4

DATA q8kff<>+0(SB)/4, $0xff
GLOBL q8kff<>(SB), RODATA|NOPTR, $4

DATA q8kneg127<>+0(SB)/4, $0xc2fe0000
GLOBL q8kneg127<>(SB), RODATA|NOPTR, $4

DATA q8kone<>+0(SB)/4, $0x3f800000
GLOBL q8kone<>(SB), RODATA|NOPTR, $4

// q8kperm: VPERMD indices undoing the lane interleaving of VPACKUSDW + VPACKUSWB.
DATA q8kperm<>+0(SB)/8, $0x0000000400000000
DATA q8kperm<>+8(SB)/8, $0x0000000500000001
DATA q8kperm<>+16(SB)/8, $0x0000000600000002
DATA q8kperm<>+24(SB)/8, $0x0000000700000003
GLOBL q8kperm<>(SB), RODATA|NOPTR, $32

// Q8KQ quantizes the 32 floats at off(SI) with the iscale in Y15 into 32 bytes at
// 4+off/4(DI). Y0..Y5 are clobbered; Y8..Y14 hold the constants.
#define Q8KQ(off, qoff) \
	VMULPS      off(SI), Y15, Y0; \
	VMULPS      off+32(SI), Y15, Y1; \
	VMULPS      off+64(SI), Y15, Y2; \
	VMULPS      off+96(SI), Y15, Y3; \
	VADDPS      Y9, Y0, Y0; \
	VADDPS      Y9, Y1, Y1; \
	VADDPS      Y9, Y2, Y2; \
	VADDPS      Y9, Y3, Y3; \
	VPAND       Y10, Y0, Y0; \
	VPAND       Y10, Y1, Y1; \
	VPAND       Y10, Y2, Y2; \
	VPAND       Y10, Y3, Y3; \
	VPSUBD      Y11, Y0, Y0; \
	VPSUBD      Y11, Y1, Y1; \
	VPSUBD      Y11, Y2, Y2; \
	VPSUBD      Y11, Y3, Y3; \
	VPMINSD     Y12, Y0, Y0; \
	VPMINSD     Y12, Y1, Y1; \
	VPMINSD     Y12, Y2, Y2; \
	VPMINSD     Y12, Y3, Y3; \
	VPAND       Y13, Y0, Y0; \
	VPAND       Y13, Y1, Y1; \
	VPAND       Y13, Y2, Y2; \
	VPAND       Y13, Y3, Y3; \
	VPACKUSDW   Y1, Y0, Y0; \
	VPACKUSDW   Y3, Y2, Y2; \
	VPACKUSWB   Y2, Y0, Y0; \
	VPERMD      Y0, Y14, Y0; \
	VMOVDQU     Y0, qoff(DI)

// func quantizeQ8KAVX2(dst *byte, src *float32) bool
// Quantizes one block of 256 floats to dst's d and qs; false (nothing written) when the
// block's largest |x| is 0, which the caller handles.
TEXT ·quantizeQ8KAVX2(SB), NOSPLIT, $0-17
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	VBROADCASTSS q8kabs<>(SB), Y8
	VXORPS       Y7, Y7, Y7
	XORQ         AX, AX

q8kmax:
	VANDPS  (SI)(AX*4), Y8, Y0
	VMAXPS  Y7, Y0, Y7
	ADDQ    $8, AX
	CMPQ    AX, $256
	JLT     q8kmax

	VEXTRACTF128 $1, Y7, X0
	VMAXPS       X7, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VXORPS       X1, X1, X1
	VUCOMISS     X1, X0
	JNE          q8knonzero
	MOVB         $0, ret+16(FP)
	VZEROUPPER
	RET

q8knonzero:
	// The first element whose |x| is the maximum.
	VBROADCASTSS X0, Y7
	XORQ         AX, AX

q8kfind:
	VANDPS    (SI)(AX*4), Y8, Y0
	VCMPPS    $0, Y7, Y0, Y0
	VMOVMSKPS Y0, BX
	TESTL     BX, BX
	JNZ       q8kfound
	ADDQ      $8, AX
	JMP       q8kfind

q8kfound:
	BSFL         BX, BX
	ADDQ         BX, AX
	VMOVSS       (SI)(AX*4), X1
	VMOVSS       q8kneg127<>(SB), X0
	VDIVSS       X1, X0, X0
	VMOVSS       q8kone<>(SB), X1
	VDIVSS       X0, X1, X1
	VMOVSS       X1, (DI)
	VBROADCASTSS X0, Y15
	VBROADCASTSS q8kmagic<>(SB), Y9
	VBROADCASTSS q8kmant<>(SB), Y10
	VBROADCASTSS q8khalf<>(SB), Y11
	VPBROADCASTD q8k127<>(SB), Y12
	VPBROADCASTD q8kff<>(SB), Y13
	VMOVDQU      q8kperm<>(SB), Y14
	Q8KQ(0, 4)
	Q8KQ(128, 36)
	Q8KQ(256, 68)
	Q8KQ(384, 100)
	Q8KQ(512, 132)
	Q8KQ(640, 164)
	Q8KQ(768, 196)
	Q8KQ(896, 228)
	MOVB         $1, ret+16(FP)
	VZEROUPPER
	RET
