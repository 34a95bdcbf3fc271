#include "textflag.h"

// AVX-512 kernels of the row-wise elementwise operations (rmsScaleRow, addRow), with
// the bits of their Go code: one float32 operation an element, sixteen lanes a
// register, the last elements under a mask.

// ROWMASK sets K1 to the lowest CX lanes (0 < CX < 16); AX is clobbered.
#define ROWMASK \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, K1

// func rmsScaleRowAVX512(dst, x, w *float32, scale float32, n int)
// dst[i] = (x[i]·scale)·w[i] for i < n.
TEXT ·rmsScaleRowAVX512(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         w+16(FP), DX
	VBROADCASTSS scale+24(FP), Z31
	MOVQ         n+32(FP), CX

rs32:
	CMPQ    CX, $32
	JLT     rs16
	VMULPS  (SI), Z31, Z0
	VMULPS  64(SI), Z31, Z1
	VMULPS  (DX), Z0, Z0
	VMULPS  64(DX), Z1, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     rs32

rs16:
	CMPQ    CX, $16
	JLT     rstail
	VMULPS  (SI), Z31, Z0
	VMULPS  (DX), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX

rstail:
	TESTQ     CX, CX
	JEQ       rsdone
	ROWMASK
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DX), K1, Z1
	VMULPS    Z31, Z0, Z0
	VMULPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)

rsdone:
	VZEROUPPER
	RET

// func addRowAVX512(dst, x *float32, n int)
// dst[i] += x[i] for i < n.
TEXT ·addRowAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX

ad32:
	CMPQ    CX, $32
	JLT     ad16
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VADDPS  (SI), Z0, Z0
	VADDPS  64(SI), Z1, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     ad32

ad16:
	CMPQ    CX, $16
	JLT     adtail
	VMOVUPS (DI), Z0
	VADDPS  (SI), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX

adtail:
	TESTQ     CX, CX
	JEQ       addone
	ROWMASK
	VMOVUPS.Z (DI), K1, Z0
	VMOVUPS.Z (SI), K1, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)

addone:
	VZEROUPPER
	RET
