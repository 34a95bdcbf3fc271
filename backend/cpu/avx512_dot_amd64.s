#include "textflag.h"

// AVX-512 matrix-vector kernels (decoding's F32 and F16 matmuls): simd.go's vecDotF32
// and vecDotF16 order, one ZMM register a 16-lane accumulator, four weight rows at a
// time. Every fma32 is a true float32 fused multiply-add (VFMADD231PS, as llama.cpp's
// _mm512_fmadd_ps; see avx2_amd64.s on the rare double-rounding ties where fma32
// differs). The tails after the blocks of 64 are avx2_amd64.s's, jumped to with the
// arguments in place. Strides are in bytes.

// ROWSUM(a0, a1, a2, a3): a0 = (a0+a2) + (a1+a3), vecDotF32's four accumulators combined.
#define ROWSUM(a0, a1, a2, a3) \
	VADDPS a2, a0, a0; \
	VADDPS a3, a1, a1; \
	VADDPS a1, a0, a0

// REDUCE4(a, b, c, d, x): lanes 0, 4, 8 and 12 of Z20 = reduce16 of a, b, c, d (GCC's
// _mm512_reduce_add_ps tree: halves (i, i+8), then (i, i+4), then (0+2)+(1+3)), the
// four rows' trees run side by side; then x (Z20's X register) = those four lanes,
// gathered by the index vector Z31 (0, 4, 8, 12). Clobbers Z20-Z23.
#define REDUCE4(a, b, c, d, x) \
	VSHUFF64X2 $0x44, b, a, Z20; \
	VSHUFF64X2 $0xee, b, a, Z21; \
	VADDPS     Z21, Z20, Z20; \
	VSHUFF64X2 $0x44, d, c, Z22; \
	VSHUFF64X2 $0xee, d, c, Z23; \
	VADDPS     Z23, Z22, Z22; \
	VSHUFF32X4 $0x88, Z22, Z20, Z21; \
	VSHUFF32X4 $0xdd, Z22, Z20, Z23; \
	VADDPS     Z23, Z21, Z20; \
	VPERMILPS  $0x4e, Z20, Z21; \
	VADDPS     Z21, Z20, Z20; \
	VMOVSHDUP  Z20, Z21; \
	VADDPS     Z21, Z20, Z20; \
	VPERMPS    Z20, Z31, Z20

// REDUCE1(a, y, x, t): lane 0 of x = reduce16 of a (y and x its Y and X registers).
#define REDUCE1(a, y, x, t) \
	VEXTRACTF64X4 $1, a, Y21; \
	VADDPS        Y21, y, y; \
	VEXTRACTF128  $1, y, t; \
	VADDPS        t, x, x; \
	VMOVHLPS      x, x, t; \
	VADDPS        t, x, x; \
	VMOVSHDUP     x, t; \
	VADDSS        t, x, x

// lane4 is 0, 4, 8, 12 (then zeros): REDUCE4's index vector.
DATA lane4<>+0(SB)/4, $0
DATA lane4<>+4(SB)/4, $4
DATA lane4<>+8(SB)/4, $8
DATA lane4<>+12(SB)/4, $12
DATA lane4<>+16(SB)/8, $0
DATA lane4<>+24(SB)/8, $0
DATA lane4<>+32(SB)/8, $0
DATA lane4<>+40(SB)/8, $0
DATA lane4<>+48(SB)/8, $0
DATA lane4<>+56(SB)/8, $0
GLOBL lane4<>(SB), RODATA|NOPTR, $64

#define ZERO16 \
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

// FMA4ROWS(off, load): the 64 elements at off of four weight rows (AX, AX+R8, AX+2·R8,
// AX+R13) times x's (Z16-Z19) into the rows' accumulators Z0-Z3, Z4-Z7, Z8-Z11,
// Z12-Z15; load widens 16 weights into a register (VMOVUPS, or VCVTPH2PS for F16).
#define FMA4ROWS(o0, o1, o2, o3, load) \
	load o0(AX), Z24; \
	load o1(AX), Z25; \
	load o2(AX), Z26; \
	load o3(AX), Z27; \
	VFMADD231PS Z16, Z24, Z0; \
	VFMADD231PS Z17, Z25, Z1; \
	VFMADD231PS Z18, Z26, Z2; \
	VFMADD231PS Z19, Z27, Z3; \
	load o0(AX)(R8*1), Z24; \
	load o1(AX)(R8*1), Z25; \
	load o2(AX)(R8*1), Z26; \
	load o3(AX)(R8*1), Z27; \
	VFMADD231PS Z16, Z24, Z4; \
	VFMADD231PS Z17, Z25, Z5; \
	VFMADD231PS Z18, Z26, Z6; \
	VFMADD231PS Z19, Z27, Z7; \
	load o0(AX)(R8*2), Z24; \
	load o1(AX)(R8*2), Z25; \
	load o2(AX)(R8*2), Z26; \
	load o3(AX)(R8*2), Z27; \
	VFMADD231PS Z16, Z24, Z8; \
	VFMADD231PS Z17, Z25, Z9; \
	VFMADD231PS Z18, Z26, Z10; \
	VFMADD231PS Z19, Z27, Z11; \
	load o0(AX)(R13*1), Z24; \
	load o1(AX)(R13*1), Z25; \
	load o2(AX)(R13*1), Z26; \
	load o3(AX)(R13*1), Z27; \
	VFMADD231PS Z16, Z24, Z12; \
	VFMADD231PS Z17, Z25, Z13; \
	VFMADD231PS Z18, Z26, Z14; \
	VFMADD231PS Z19, Z27, Z15

// FMAROW(o0, o1, o2, o3, load, a0, a1, a2, a3): FMA4ROWS for the one row at AX, into
// the accumulators a0-a3.
#define FMAROW(o0, o1, o2, o3, load, a0, a1, a2, a3) \
	load o0(AX), Z24; \
	load o1(AX), Z25; \
	load o2(AX), Z26; \
	load o3(AX), Z27; \
	VFMADD231PS Z16, Z24, a0; \
	VFMADD231PS Z17, Z25, a1; \
	VFMADD231PS Z18, Z26, a2; \
	VFMADD231PS Z19, Z27, a3

// FMA1ROW(o0, o1, o2, o3, load): FMA4ROWS for the one row at AX.
#define FMA1ROW(o0, o1, o2, o3, load) \
	load o0(AX), Z24; \
	load o1(AX), Z25; \
	load o2(AX), Z26; \
	load o3(AX), Z27; \
	VFMADD231PS Z16, Z24, Z0; \
	VFMADD231PS Z17, Z25, Z1; \
	VFMADD231PS Z18, Z26, Z2; \
	VFMADD231PS Z19, Z27, Z3

// LOADX: x's 64 elements at BX into Z16-Z19.
#define LOADX \
	VMOVUPS (BX), Z16; \
	VMOVUPS 64(BX), Z17; \
	VMOVUPS 128(BX), Z18; \
	VMOVUPS 192(BX), Z19

// func vecDotF32RowsAVX512(w *float32, ws int, x *float32, n, rows int, dst *float32)
// dst[r] = vecDotF32(w+r·ws, x, n) for r < rows: blocks of 64 into four 16-lane
// accumulators per row, (0+2)+(1+3), reduce16, four rows at a time (each row's blocks
// in turn where it has several: weights streamed from memory in order, not four
// streams, which the hardware prefetchers follow less well); then the n%64 tail one
// FMA at a time (vecDotF32TailsAVX2).
TEXT ·vecDotF32RowsAVX512(SB), NOSPLIT, $0-48
	MOVQ  w+0(FP), SI
	MOVQ  ws+8(FP), R8
	MOVQ  x+16(FP), DI
	MOVQ  n+24(FP), R12
	MOVQ  rows+32(FP), R10
	MOVQ  dst+40(FP), DX
	SHRQ  $6, R12         // blocks of 64
	LEAQ  (R8)(R8*2), R13 // 3·ws
	TESTQ R10, R10
	JEQ   f5done
	TESTQ R12, R12
	JNE   f5blocks

f5zero: // no block: the sums start at zero
	MOVL $0, (DX)
	ADDQ $4, DX
	DECQ R10
	JNE  f5zero
	JMP  f5tails

f5blocks:
	VMOVDQU32 lane4<>(SB), Z31

f5row4:
	CMPQ R10, $4
	JLT  f5row1
	ZERO16
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R12, CX
	CMPQ R12, $1
	JNE  f5seq4

f5blk4: // one block: the four rows' 1 KiB read in order
	LOADX
	FMA4ROWS(0, 64, 128, 192, VMOVUPS)
	JMP  f5red4

f5seq4: // blocks of one row after the other, so that the weights stream in order
	LOADX
	FMAROW(0, 64, 128, 192, VMOVUPS, Z0, Z1, Z2, Z3)
	ADDQ $256, AX
	ADDQ $256, BX
	DECQ CX
	JNE  f5seq4
	LEAQ (SI)(R8*1), AX
	MOVQ DI, BX
	MOVQ R12, CX

f5seq4b:
	LOADX
	FMAROW(0, 64, 128, 192, VMOVUPS, Z4, Z5, Z6, Z7)
	ADDQ $256, AX
	ADDQ $256, BX
	DECQ CX
	JNE  f5seq4b
	LEAQ (SI)(R8*2), AX
	MOVQ DI, BX
	MOVQ R12, CX

f5seq4c:
	LOADX
	FMAROW(0, 64, 128, 192, VMOVUPS, Z8, Z9, Z10, Z11)
	ADDQ $256, AX
	ADDQ $256, BX
	DECQ CX
	JNE  f5seq4c
	LEAQ (SI)(R13*1), AX
	MOVQ DI, BX
	MOVQ R12, CX

f5seq4d:
	LOADX
	FMAROW(0, 64, 128, 192, VMOVUPS, Z12, Z13, Z14, Z15)
	ADDQ $256, AX
	ADDQ $256, BX
	DECQ CX
	JNE  f5seq4d

f5red4:
	ROWSUM(Z0, Z1, Z2, Z3)
	ROWSUM(Z4, Z5, Z6, Z7)
	ROWSUM(Z8, Z9, Z10, Z11)
	ROWSUM(Z12, Z13, Z14, Z15)
	REDUCE4(Z0, Z4, Z8, Z12, X20)
	VMOVUPS X20, (DX)
	ADDQ    $16, DX
	LEAQ    (SI)(R8*4), SI
	SUBQ    $4, R10
	JMP     f5row4

f5row1:
	TESTQ R10, R10
	JEQ   f5tails
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R12, CX

f5blk1:
	LOADX
	FMA1ROW(0, 64, 128, 192, VMOVUPS)
	ADDQ $256, AX
	ADDQ $256, BX
	DECQ CX
	JNE  f5blk1
	ROWSUM(Z0, Z1, Z2, Z3)
	REDUCE1(Z0, Y0, X0, X2)
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   R8, SI
	DECQ   R10
	JMP    f5row1

f5tails:
	VZEROUPPER
	JMP ·vecDotF32TailsAVX2(SB)

f5done:
	RET

// func vecDotF16F32RowsAVX512(w *uint16, ws int, x *float32, n, rows int, dst *float32)
// dst[r] = vecDotF16(w+r·ws, x) over n elements for r < rows, x holding F16 values
// widened to float32: blocks of 64 as vecDotF32RowsAVX512, then the tail's exact
// float32 products added to the float64 sum in order (vecDotF16F32TailsAVX2).
TEXT ·vecDotF16F32RowsAVX512(SB), NOSPLIT, $0-48
	MOVQ  w+0(FP), SI
	MOVQ  ws+8(FP), R8
	MOVQ  x+16(FP), DI
	MOVQ  n+24(FP), R12
	MOVQ  rows+32(FP), R10
	MOVQ  dst+40(FP), DX
	SHRQ  $6, R12         // blocks of 64
	LEAQ  (R8)(R8*2), R13 // 3·ws
	TESTQ R10, R10
	JEQ   h5done
	TESTQ R12, R12
	JNE   h5blocks

h5zero: // no block: the sums start at zero
	MOVL $0, (DX)
	ADDQ $4, DX
	DECQ R10
	JNE  h5zero
	JMP  h5tails

h5blocks:
	VMOVDQU32 lane4<>(SB), Z31

h5row4:
	CMPQ R10, $4
	JLT  h5row1
	ZERO16
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R12, CX
	CMPQ R12, $1
	JNE  h5seq4

h5blk4: // one block: the four rows' 512 bytes read in order
	LOADX
	FMA4ROWS(0, 32, 64, 96, VCVTPH2PS)
	JMP  h5red4

h5seq4: // blocks of one row after the other (vecDotF32RowsAVX512)
	LOADX
	FMAROW(0, 32, 64, 96, VCVTPH2PS, Z0, Z1, Z2, Z3)
	ADDQ $128, AX
	ADDQ $256, BX
	DECQ CX
	JNE  h5seq4
	LEAQ (SI)(R8*1), AX
	MOVQ DI, BX
	MOVQ R12, CX

h5seq4b:
	LOADX
	FMAROW(0, 32, 64, 96, VCVTPH2PS, Z4, Z5, Z6, Z7)
	ADDQ $128, AX
	ADDQ $256, BX
	DECQ CX
	JNE  h5seq4b
	LEAQ (SI)(R8*2), AX
	MOVQ DI, BX
	MOVQ R12, CX

h5seq4c:
	LOADX
	FMAROW(0, 32, 64, 96, VCVTPH2PS, Z8, Z9, Z10, Z11)
	ADDQ $128, AX
	ADDQ $256, BX
	DECQ CX
	JNE  h5seq4c
	LEAQ (SI)(R13*1), AX
	MOVQ DI, BX
	MOVQ R12, CX

h5seq4d:
	LOADX
	FMAROW(0, 32, 64, 96, VCVTPH2PS, Z12, Z13, Z14, Z15)
	ADDQ $128, AX
	ADDQ $256, BX
	DECQ CX
	JNE  h5seq4d

h5red4:
	ROWSUM(Z0, Z1, Z2, Z3)
	ROWSUM(Z4, Z5, Z6, Z7)
	ROWSUM(Z8, Z9, Z10, Z11)
	ROWSUM(Z12, Z13, Z14, Z15)
	REDUCE4(Z0, Z4, Z8, Z12, X20)
	VMOVUPS X20, (DX)
	ADDQ    $16, DX
	LEAQ    (SI)(R8*4), SI
	SUBQ    $4, R10
	JMP     h5row4

h5row1:
	TESTQ R10, R10
	JEQ   h5tails
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R12, CX

h5blk1:
	LOADX
	FMA1ROW(0, 32, 64, 96, VCVTPH2PS)
	ADDQ $128, AX
	ADDQ $256, BX
	DECQ CX
	JNE  h5blk1
	ROWSUM(Z0, Z1, Z2, Z3)
	REDUCE1(Z0, Y0, X0, X2)
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   R8, SI
	DECQ   R10
	JMP    h5row1

h5tails:
	VZEROUPPER
	JMP ·vecDotF16F32TailsAVX2(SB)

h5done:
	RET

// LANEMASK(g, k): k = the lanes of the g-th group of sixteen below m (R11): bits
// 0..min(16, max(0, m-16g))-1. Clobbers AX, CX.
#define LANEMASK(g, k) \
	MOVQ  R11, CX; \
	SUBQ  $(16*g), CX; \
	MOVQ  $0, AX; \
	CMPQ  CX, $0; \
	CMOVQLT AX, CX; \
	MOVQ  $16, AX; \
	CMPQ  CX, AX; \
	CMOVQGT AX, CX; \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, k

// func vecDotTailsT64AVX512(wt *float32, t int, x *float32, m int, dst *float32)
// dst[o] = the fma32 chain over k < t of wt[64k+o]·x[k], from dst[o], for o < m ≤ 64:
// vecDotF32's tails of m weight rows at once, from the tails transposed (wt: t rows of
// 64), one weight row a lane, four chains of sixteen side by side; the lanes at or past
// m are neither read from dst nor stored.
TEXT ·vecDotTailsT64AVX512(SB), NOSPLIT, $0-40
	MOVQ wt+0(FP), SI
	MOVQ t+8(FP), R10
	MOVQ x+16(FP), DI
	MOVQ m+24(FP), R11
	MOVQ dst+32(FP), DX
	LANEMASK(0, K1)
	LANEMASK(1, K2)
	LANEMASK(2, K3)
	LANEMASK(3, K4)
	VMOVUPS.Z (DX), K1, Z0
	VMOVUPS.Z 64(DX), K2, Z1
	VMOVUPS.Z 128(DX), K3, Z2
	VMOVUPS.Z 192(DX), K4, Z3
	TESTQ R10, R10
	JEQ   ttstore

ttk:
	VBROADCASTSS (DI), Z4
	VFMADD231PS  (SI), Z4, Z0
	VFMADD231PS  64(SI), Z4, Z1
	VFMADD231PS  128(SI), Z4, Z2
	VFMADD231PS  192(SI), Z4, Z3
	ADDQ         $256, SI
	ADDQ         $4, DI
	DECQ         R10
	JNE          ttk

ttstore:
	VMOVUPS Z0, K1, (DX)
	VMOVUPS Z1, K2, 64(DX)
	VMOVUPS Z2, K3, 128(DX)
	VMOVUPS Z3, K4, 192(DX)
	VZEROUPPER
	RET
