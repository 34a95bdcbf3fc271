#include "textflag.h"

// AVX2 + FMA + F16C forms of simd.go's float32 kernels, for CPUs without AVX-512. They
// keep the lane structure of the AVX-512 order that simd.go defines (16-lane
// accumulators as pairs of 8-lane registers, the same reductions), with one difference:
// every fma32 is a true float32 fused multiply-add (VFMADD231PS, as llama.cpp's
// _mm512_fmadd_ps), where simd.go's fma32 rounds through float64; the two differ only
// when the float64 sum falls exactly halfway between two float32 values (about once in
// 2^29 operations). Strides are in bytes.

// REDUCE2X2: the four 16-lane accumulators (Y0,Y1) w0·x0, (Y2,Y3) w0·x1, (Y4,Y5) w1·x0,
// (Y6,Y7) w1·x1, each reduced as reduce16, stored as dst[x0][w0], dst[x0][w1] at (DX)
// and dst[x1][w0], dst[x1][w1] at (DX)(R12*1). Clobbers Y8-Y13.
#define REDUCE2X2 \
	VADDPS       Y1, Y0, Y0; \
	VADDPS       Y3, Y2, Y2; \
	VADDPS       Y5, Y4, Y4; \
	VADDPS       Y7, Y6, Y6; \
	VPERM2F128   $0x20, Y2, Y0, Y8; \
	VPERM2F128   $0x31, Y2, Y0, Y9; \
	VADDPS       Y9, Y8, Y8; \
	VPERM2F128   $0x20, Y6, Y4, Y10; \
	VPERM2F128   $0x31, Y6, Y4, Y11; \
	VADDPS       Y11, Y10, Y10; \
	VSHUFPS      $0x44, Y10, Y8, Y12; \
	VSHUFPS      $0xee, Y10, Y8, Y13; \
	VADDPS       Y13, Y12, Y12; \
	VHADDPS      Y12, Y12, Y12; \
	VMOVLPS      X12, (DX); \
	VEXTRACTF128 $1, Y12, X13; \
	VMOVLPS      X13, (DX)(R12*1)

// REDUCE16(lo, hi, xlo, t): lane 0 of xlo (lo as an X register) = reduce16 of the accumulator (lo, hi).
#define REDUCE16(lo, hi, xlo, t) \
	VADDPS       hi, lo, lo; \
	VEXTRACTF128 $1, lo, t; \
	VADDPS       t, xlo, xlo; \
	VMOVHLPS     xlo, xlo, t; \
	VADDPS       t, xlo, xlo; \
	VMOVSHDUP    xlo, t; \
	VADDSS       t, xlo, xlo

// func sgemm2x2F32AVX2(w *float32, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int)
// sgemmF32 of weight rows w, w+ws against the activation rows x+2i·xs, x+(2i+1)·xs for
// i < nx2, over nblk blocks of 16: a 2×2 tile of outputs at a time, dst advanced by
// 2·ds per pair of activation rows.
TEXT ·sgemm2x2F32AVX2(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ xs+24(FP), R9
	MOVQ nx2+32(FP), R10
	MOVQ nblk+40(FP), R11
	MOVQ dst+48(FP), DX
	MOVQ ds+56(FP), R12
	TESTQ R10, R10
	JEQ   f22done

f22x:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   SI, AX
	LEAQ   (SI)(R8*1), R13
	MOVQ   DI, BX
	LEAQ   (DI)(R9*1), R14
	MOVQ   R11, CX

f22k:
	VMOVUPS     (BX), Y8
	VMOVUPS     32(BX), Y9
	VMOVUPS     (R14), Y10
	VMOVUPS     32(R14), Y11
	VMOVUPS     (AX), Y12
	VMOVUPS     32(AX), Y13
	VFMADD231PS Y12, Y8, Y0
	VFMADD231PS Y13, Y9, Y1
	VFMADD231PS Y12, Y10, Y2
	VFMADD231PS Y13, Y11, Y3
	VMOVUPS     (R13), Y12
	VMOVUPS     32(R13), Y13
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y13, Y9, Y5
	VFMADD231PS Y12, Y10, Y6
	VFMADD231PS Y13, Y11, Y7
	ADDQ        $64, AX
	ADDQ        $64, BX
	ADDQ        $64, R13
	ADDQ        $64, R14
	DECQ        CX
	JNE         f22k

	REDUCE2X2
	LEAQ (DI)(R9*2), DI
	LEAQ (DX)(R12*2), DX
	DECQ R10
	JNE  f22x

f22done:
	VZEROUPPER
	RET

// func sgemm2x2F16AVX2(w *uint16, ws int, x *uint16, xs int, nx2, nblk int, dst *float32, ds int)
// sgemm2x2F32AVX2 over F16 rows (sgemmF16).
TEXT ·sgemm2x2F16AVX2(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ xs+24(FP), R9
	MOVQ nx2+32(FP), R10
	MOVQ nblk+40(FP), R11
	MOVQ dst+48(FP), DX
	MOVQ ds+56(FP), R12
	TESTQ R10, R10
	JEQ   h22done

h22x:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   SI, AX
	LEAQ   (SI)(R8*1), R13
	MOVQ   DI, BX
	LEAQ   (DI)(R9*1), R14
	MOVQ   R11, CX

h22k:
	VCVTPH2PS   (BX), Y8
	VCVTPH2PS   16(BX), Y9
	VCVTPH2PS   (R14), Y10
	VCVTPH2PS   16(R14), Y11
	VCVTPH2PS   (AX), Y12
	VCVTPH2PS   16(AX), Y13
	VFMADD231PS Y12, Y8, Y0
	VFMADD231PS Y13, Y9, Y1
	VFMADD231PS Y12, Y10, Y2
	VFMADD231PS Y13, Y11, Y3
	VCVTPH2PS   (R13), Y12
	VCVTPH2PS   16(R13), Y13
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y13, Y9, Y5
	VFMADD231PS Y12, Y10, Y6
	VFMADD231PS Y13, Y11, Y7
	ADDQ        $32, AX
	ADDQ        $32, BX
	ADDQ        $32, R13
	ADDQ        $32, R14
	DECQ        CX
	JNE         h22k

	REDUCE2X2
	LEAQ (DI)(R9*2), DI
	LEAQ (DX)(R12*2), DX
	DECQ R10
	JNE  h22x

h22done:
	VZEROUPPER
	RET

// func sgemmF32BlocksAVX2(a, b *float32, nblk int) float32
// sgemmF32 of one pair of rows over nblk ≥ 1 blocks of 16.
TEXT ·sgemmF32BlocksAVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   nblk+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

f11k:
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y9, Y1
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNE         f11k

	REDUCE16(Y0, Y1, X0, X2)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func sgemmF16BlocksAVX2(a, b *uint16, nblk int) float32
// sgemmF16 of one pair of rows over nblk ≥ 1 blocks of 16.
TEXT ·sgemmF16BlocksAVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   nblk+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

h11k:
	VCVTPH2PS   (SI), Y8
	VCVTPH2PS   16(SI), Y9
	VCVTPH2PS   (DI), Y10
	VCVTPH2PS   16(DI), Y11
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y11, Y9, Y1
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JNE         h11k

	REDUCE16(Y0, Y1, X0, X2)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// VECREDUCE: the four 16-lane accumulators (Y0,Y1) (Y2,Y3) (Y4,Y5) (Y6,Y7) combined as
// (0+2)+(1+3) and reduced as reduce16 into lane 0 of X0.
#define VECREDUCE \
	VADDPS Y4, Y0, Y0; \
	VADDPS Y5, Y1, Y1; \
	VADDPS Y6, Y2, Y2; \
	VADDPS Y7, Y3, Y3; \
	VADDPS Y2, Y0, Y0; \
	VADDPS Y3, Y1, Y1; \
	REDUCE16(Y0, Y1, X0, X2)

#define ZERO8 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// func vecDotF32RowsAVX2(w *float32, ws int, x *float32, n, rows int, dst *float32)
// dst[r] = vecDotF32(w+r·ws, x, n) for r < rows: blocks of 64 into four 16-lane
// accumulators, (0+2)+(1+3), reduce16, then the n%64 tail one FMA at a time.
TEXT ·vecDotF32RowsAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ n+24(FP), R11
	MOVQ rows+32(FP), R10
	MOVQ dst+40(FP), DX
	MOVQ R11, R12
	SHRQ $6, R12          // blocks of 64
	ANDQ $63, R11         // tail
	TESTQ R10, R10
	JEQ   fvdone

fvrow:
	ZERO8
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R12, CX
	TESTQ CX, CX
	JEQ   fvred

fvblk:
	VMOVUPS     (AX), Y8
	VMOVUPS     32(AX), Y9
	VMOVUPS     64(AX), Y10
	VMOVUPS     96(AX), Y11
	VFMADD231PS (BX), Y8, Y0
	VFMADD231PS 32(BX), Y9, Y1
	VFMADD231PS 64(BX), Y10, Y2
	VFMADD231PS 96(BX), Y11, Y3
	VMOVUPS     128(AX), Y8
	VMOVUPS     160(AX), Y9
	VMOVUPS     192(AX), Y10
	VMOVUPS     224(AX), Y11
	VFMADD231PS 128(BX), Y8, Y4
	VFMADD231PS 160(BX), Y9, Y5
	VFMADD231PS 192(BX), Y10, Y6
	VFMADD231PS 224(BX), Y11, Y7
	ADDQ        $256, AX
	ADDQ        $256, BX
	DECQ        CX
	JNE         fvblk

fvred:
	VECREDUCE
	MOVQ  R11, CX
	TESTQ CX, CX
	JEQ   fvstore

fvtail:
	VMOVSS      (AX), X1
	VFMADD231SS (BX), X1, X0
	ADDQ        $4, AX
	ADDQ        $4, BX
	DECQ        CX
	JNE         fvtail

fvstore:
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   R8, SI
	DECQ   R10
	JNE    fvrow

fvdone:
	VZEROUPPER
	RET

// func vecDotF16RowsAVX2(w *uint16, ws int, x *uint16, n, rows int, dst *float32)
// dst[r] = vecDotF16(w+r·ws, x) over n elements for r < rows: blocks of 64 as
// vecDotF32RowsAVX2, then the tail's exact float32 products added to the float64 sum
// in order.
TEXT ·vecDotF16RowsAVX2(SB), NOSPLIT, $32-48
	MOVQ w+0(FP), SI
	MOVQ ws+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ n+24(FP), R11
	MOVQ rows+32(FP), R10
	MOVQ dst+40(FP), DX
	MOVQ R11, R12
	SHRQ $6, R12          // blocks of 64
	ANDQ $63, R11         // tail
	TESTQ R10, R10
	JEQ   hvdone

hvrow:
	ZERO8
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R12, CX
	TESTQ CX, CX
	JEQ   hvred

hvblk:
	VCVTPH2PS   (AX), Y8
	VCVTPH2PS   16(AX), Y9
	VCVTPH2PS   (BX), Y10
	VCVTPH2PS   16(BX), Y11
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y11, Y9, Y1
	VCVTPH2PS   32(AX), Y8
	VCVTPH2PS   48(AX), Y9
	VCVTPH2PS   32(BX), Y10
	VCVTPH2PS   48(BX), Y11
	VFMADD231PS Y10, Y8, Y2
	VFMADD231PS Y11, Y9, Y3
	VCVTPH2PS   64(AX), Y8
	VCVTPH2PS   80(AX), Y9
	VCVTPH2PS   64(BX), Y10
	VCVTPH2PS   80(BX), Y11
	VFMADD231PS Y10, Y8, Y4
	VFMADD231PS Y11, Y9, Y5
	VCVTPH2PS   96(AX), Y8
	VCVTPH2PS   112(AX), Y9
	VCVTPH2PS   96(BX), Y10
	VCVTPH2PS   112(BX), Y11
	VFMADD231PS Y10, Y8, Y6
	VFMADD231PS Y11, Y9, Y7
	ADDQ        $128, AX
	ADDQ        $128, BX
	DECQ        CX
	JNE         hvblk

hvred:
	VECREDUCE
	VCVTSS2SD X0, X0, X0
	MOVQ      R11, CX
	CMPQ      CX, $8
	JLT       hvtail1

hvtail8:
	VCVTPH2PS (AX), Y1
	VCVTPH2PS (BX), Y2
	VMULPS    Y2, Y1, Y1
	VCVTPS2PD X1, Y2
	VEXTRACTF128 $1, Y1, X1
	VCVTPS2PD X1, Y3
	VMOVUPD   Y2, 0(SP)
	VADDSD    0(SP), X0, X0
	VADDSD    8(SP), X0, X0
	VADDSD    16(SP), X0, X0
	VADDSD    24(SP), X0, X0
	VMOVUPD   Y3, 0(SP)
	VADDSD    0(SP), X0, X0
	VADDSD    8(SP), X0, X0
	VADDSD    16(SP), X0, X0
	VADDSD    24(SP), X0, X0
	ADDQ      $16, AX
	ADDQ      $16, BX
	SUBQ      $8, CX
	CMPQ      CX, $8
	JGE       hvtail8

hvtail1:
	TESTQ CX, CX
	JEQ   hvstore

hvtail1l:
	MOVWLZX   (AX), R13
	MOVWLZX   (BX), R14
	VMOVD     R13, X1
	VMOVD     R14, X2
	VCVTPH2PS X1, X1
	VCVTPH2PS X2, X2
	VMULSS    X2, X1, X1
	VCVTSS2SD X1, X1, X1
	VADDSD    X1, X0, X0
	ADDQ      $2, AX
	ADDQ      $2, BX
	DECQ      CX
	JNE       hvtail1l

hvstore:
	VCVTSD2SS X0, X0, X0
	VMOVSS    X0, (DX)
	ADDQ      $4, DX
	ADDQ      R8, SI
	DECQ      R10
	JNE       hvrow

hvdone:
	VZEROUPPER
	RET
