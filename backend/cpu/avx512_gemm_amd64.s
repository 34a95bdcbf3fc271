#include "textflag.h"

// AVX-512 matrix-matrix kernels (prompt batches' F32 and F16 matmuls, llamafile's
// tinyBLAS<16, __m512> order: one 16-lane FMA accumulator per output, reduced as
// reduce16): 4×4 tiles of outputs, sixteen ZMM accumulators reduced together. Every
// fma32 is a true float32 FMA, as in avx512_dot_amd64.s. Strides are in bytes.

// ZEROACC zeroes the accumulators Z0-Z15.
#define ZEROACC \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15

// HALVES(a, b, s): s = [a's lanes i+8 added to lanes i | b's likewise]: reduce16's
// first step for two accumulators. Clobbers Z24, Z25.
#define HALVES(a, b, s) \
	VSHUFF64X2 $0x44, b, a, Z24; \
	VSHUFF64X2 $0xee, b, a, Z25; \
	VADDPS     Z25, Z24, s

// QUARTERS(s, t, u): u's 128-bit lane g = lanes i+4 added to lanes i (i < 4) of the g-th
// of the four halves in s, t: reduce16's second step. Clobbers Z24, Z25.
#define QUARTERS(s, t, u) \
	VSHUFF32X4 $0x88, t, s, Z24; \
	VSHUFF32X4 $0xdd, t, s, Z25; \
	VADDPS     Z25, Z24, u

// PAIRS(a, b, imm0, imm1, g): g = VSHUFPS imm0 of (a, b) plus VSHUFPS imm1 of (a, b),
// lane by lane: reduce16's last steps, (0+2) and (1+3), then their sum. Clobbers Z24, Z25.
#define PAIRS(a, b, imm0, imm1, g) \
	VSHUFPS $imm0, b, a, Z24; \
	VSHUFPS $imm1, b, a, Z25; \
	VADDPS  Z25, Z24, g

// REDUCE16X16: Z6 lane 4g+j = reduce16 of accumulator Z(g+4j), for the sixteen
// accumulators Z0-Z15 at once (the same additions as reduce16 for each, in transposed
// order). Clobbers Z0-Z5, Z16-Z25.
#define REDUCE16X16 \
	HALVES(Z0, Z1, Z16); \
	HALVES(Z2, Z3, Z17); \
	HALVES(Z4, Z5, Z18); \
	HALVES(Z6, Z7, Z19); \
	HALVES(Z8, Z9, Z20); \
	HALVES(Z10, Z11, Z21); \
	HALVES(Z12, Z13, Z22); \
	HALVES(Z14, Z15, Z23); \
	QUARTERS(Z16, Z17, Z0); \
	QUARTERS(Z18, Z19, Z1); \
	QUARTERS(Z20, Z21, Z2); \
	QUARTERS(Z22, Z23, Z3); \
	PAIRS(Z0, Z1, 0x44, 0xee, Z4); \
	PAIRS(Z2, Z3, 0x44, 0xee, Z5); \
	PAIRS(Z4, Z5, 0x88, 0xdd, Z6)

// STORE4X4: the four outputs of activation row g (Z6's 128-bit lane g) at DX + g·R12.
// Clobbers AX.
#define STORE4X4 \
	VMOVUPS       X6, (DX); \
	VEXTRACTF32X4 $1, Z6, (DX)(R12*1); \
	VEXTRACTF32X4 $2, Z6, (DX)(R12*2); \
	LEAQ          (DX)(R12*2), AX; \
	VEXTRACTF32X4 $3, Z6, (AX)(R12*1)

// QUADX: the next 16 elements of the four activation rows (BX, BX+R9, BX+2·R9, BX+R14).
#define QUADX \
	VMOVUPS (BX), Z16; \
	VMOVUPS (BX)(R9*1), Z17; \
	VMOVUPS (BX)(R9*2), Z18; \
	VMOVUPS (BX)(R14*1), Z19

// FMAW(wv, a): accumulators a..a+3 += weight vector wv times the four activation vectors.
#define FMAW(wv, a0, a1, a2, a3) \
	VFMADD231PS Z16, wv, a0; \
	VFMADD231PS Z17, wv, a1; \
	VFMADD231PS Z18, wv, a2; \
	VFMADD231PS Z19, wv, a3

// func sgemm4x4F32AVX512(w *float32, ws int, x *float32, xs int, nx4, nblk int, dst *float32, ds int)
// sgemmF32 of the weight rows w+b·ws (b < 4) against the activation rows x+(4i+a)·xs
// for i < nx4, a < 4, over nblk ≥ 1 blocks of 16: the four outputs of activation row
// 4i+a (weight rows 0-3) at dst+(4i+a)·ds.
TEXT ·sgemm4x4F32AVX512(SB), NOSPLIT, $0-64
	MOVQ  w+0(FP), SI
	MOVQ  ws+8(FP), R8
	MOVQ  x+16(FP), DI
	MOVQ  xs+24(FP), R9
	MOVQ  nx4+32(FP), R10
	MOVQ  nblk+40(FP), R11
	MOVQ  dst+48(FP), DX
	MOVQ  ds+56(FP), R12
	LEAQ  (R8)(R8*2), R13 // 3·ws
	LEAQ  (R9)(R9*2), R14 // 3·xs
	TESTQ R10, R10
	JEQ   f44done

f44x:
	ZEROACC
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R11, CX

f44k:
	QUADX
	VMOVUPS (AX), Z20
	VMOVUPS (AX)(R8*1), Z21
	VMOVUPS (AX)(R8*2), Z22
	VMOVUPS (AX)(R13*1), Z23
	FMAW(Z20, Z0, Z1, Z2, Z3)
	FMAW(Z21, Z4, Z5, Z6, Z7)
	FMAW(Z22, Z8, Z9, Z10, Z11)
	FMAW(Z23, Z12, Z13, Z14, Z15)
	ADDQ $64, AX
	ADDQ $64, BX
	DECQ CX
	JNE  f44k

	REDUCE16X16
	STORE4X4
	LEAQ (DI)(R9*4), DI
	LEAQ (DX)(R12*4), DX
	DECQ R10
	JNE  f44x

f44done:
	VZEROUPPER
	RET

// func sgemm4x4F16AVX512(w *uint16, ws int, x *float32, xs int, nx4, nblk int, dst *float32, ds int)
// sgemm4x4F32AVX512 over F16 weight rows and activation rows of F16 values widened to
// float32 (sgemmF16).
TEXT ·sgemm4x4F16AVX512(SB), NOSPLIT, $0-64
	MOVQ  w+0(FP), SI
	MOVQ  ws+8(FP), R8
	MOVQ  x+16(FP), DI
	MOVQ  xs+24(FP), R9
	MOVQ  nx4+32(FP), R10
	MOVQ  nblk+40(FP), R11
	MOVQ  dst+48(FP), DX
	MOVQ  ds+56(FP), R12
	LEAQ  (R8)(R8*2), R13 // 3·ws
	LEAQ  (R9)(R9*2), R14 // 3·xs
	TESTQ R10, R10
	JEQ   h44done

h44x:
	ZEROACC
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R11, CX

h44k:
	QUADX
	VCVTPH2PS (AX), Z20
	VCVTPH2PS (AX)(R8*1), Z21
	VCVTPH2PS (AX)(R8*2), Z22
	VCVTPH2PS (AX)(R13*1), Z23
	FMAW(Z20, Z0, Z1, Z2, Z3)
	FMAW(Z21, Z4, Z5, Z6, Z7)
	FMAW(Z22, Z8, Z9, Z10, Z11)
	FMAW(Z23, Z12, Z13, Z14, Z15)
	ADDQ $32, AX
	ADDQ $64, BX
	DECQ CX
	JNE  h44k

	REDUCE16X16
	STORE4X4
	LEAQ (DI)(R9*4), DI
	LEAQ (DX)(R12*4), DX
	DECQ R10
	JNE  h44x

h44done:
	VZEROUPPER
	RET
