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

// func sgemm2x2F16AVX2(w *uint16, ws int, x *float32, xs int, nx2, nblk int, dst *float32, ds int)
// sgemm2x2F32AVX2 over F16 weight rows and activation rows of F16 values widened to
// float32 (sgemmF16).
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
	VMOVUPS     (BX), Y8
	VMOVUPS     32(BX), Y9
	VMOVUPS     (R14), Y10
	VMOVUPS     32(R14), Y11
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
	ADDQ        $64, BX
	ADDQ        $32, R13
	ADDQ        $64, R14
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

// func sgemmF16F32BlocksAVX2(a *uint16, b *float32, nblk int) float32
// sgemmF16 of an F16 row and a row of F16 values widened to float32, nblk ≥ 1 blocks.
TEXT ·sgemmF16F32BlocksAVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   nblk+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

hf11k:
	VCVTPH2PS   (SI), Y8
	VCVTPH2PS   16(SI), Y9
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y9, Y1
	ADDQ        $32, SI
	ADDQ        $64, DI
	DECQ        CX
	JNE         hf11k

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
// accumulators, (0+2)+(1+3), reduce16, then the n%64 tail one FMA at a time, eight
// rows' tails interleaved.
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
	TESTQ R12, R12
	JNE   fvrow

fvzero:                // no block: the sums start at zero
	MOVL $0, (DX)
	ADDQ $4, DX
	DECQ R10
	JNE  fvzero
	JMP  fvtails

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
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   R8, SI
	DECQ   R10
	JNE    fvrow

fvtails:
	VZEROUPPER
	JMP ·vecDotF32TailsAVX2(SB)

fvdone:
	VZEROUPPER
	RET

// func vecDotF32TailsAVX2(w *float32, ws int, x *float32, n, rows int, dst *float32)
// The end of vecDotF32RowsAVX2 (and of vecDotF32RowsAVX512), which jump to it with their
// arguments in place once dst[r] holds row r's reduced blocks of 64: dst[r] = the fma
// chain over the last n%64 elements, from dst[r], eight rows' chains interleaved.
TEXT ·vecDotF32TailsAVX2(SB), NOSPLIT, $0-48
	MOVQ  ws+8(FP), R8
	MOVQ  x+16(FP), DI
	MOVQ  n+24(FP), R11
	MOVQ  R11, R12
	SHRQ  $6, R12         // blocks of 64
	ANDQ  $63, R11        // tail
	TESTQ R11, R11
	JEQ   fvdone
	MOVQ  w+0(FP), SI
	MOVQ  R12, AX
	SHLQ  $8, AX
	ADDQ  AX, SI          // row 0's tail
	ADDQ  AX, DI          // x's tail
	MOVQ  rows+32(FP), R10
	MOVQ  dst+40(FP), DX
	LEAQ  (R8)(R8*2), R13 // 3·ws

fvt8:
	CMPQ   R10, $8
	JLT    fvt1
	VMOVSS (DX), X0
	VMOVSS 4(DX), X1
	VMOVSS 8(DX), X2
	VMOVSS 12(DX), X3
	VMOVSS 16(DX), X4
	VMOVSS 20(DX), X5
	VMOVSS 24(DX), X6
	VMOVSS 28(DX), X7
	MOVQ   SI, AX
	LEAQ   (SI)(R8*4), BX
	MOVQ   DI, R9
	MOVQ   R11, CX

fvt8e:
	VMOVSS      (R9), X8
	VFMADD231SS (AX), X8, X0
	VFMADD231SS (AX)(R8*1), X8, X1
	VFMADD231SS (AX)(R8*2), X8, X2
	VFMADD231SS (AX)(R13*1), X8, X3
	VFMADD231SS (BX), X8, X4
	VFMADD231SS (BX)(R8*1), X8, X5
	VFMADD231SS (BX)(R8*2), X8, X6
	VFMADD231SS (BX)(R13*1), X8, X7
	ADDQ        $4, AX
	ADDQ        $4, BX
	ADDQ        $4, R9
	DECQ        CX
	JNE         fvt8e
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	VMOVSS X4, 16(DX)
	VMOVSS X5, 20(DX)
	VMOVSS X6, 24(DX)
	VMOVSS X7, 28(DX)
	ADDQ   $32, DX
	LEAQ   (SI)(R8*8), SI
	SUBQ   $8, R10
	JMP    fvt8

fvt1:
	TESTQ  R10, R10
	JEQ    fvdone
	VMOVSS (DX), X0
	MOVQ   SI, AX
	MOVQ   DI, R9
	MOVQ   R11, CX

fvt1e:
	VMOVSS      (R9), X8
	VFMADD231SS (AX), X8, X0
	ADDQ        $4, AX
	ADDQ        $4, R9
	DECQ        CX
	JNE         fvt1e
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   R8, SI
	DECQ   R10
	JMP    fvt1

fvdone:
	VZEROUPPER
	RET

// func vecDotF16RowsAVX2(w *uint16, ws int, x *uint16, n, rows int, dst *float32)
// dst[r] = vecDotF16(w+r·ws, x) over n elements for r < rows: blocks of 64 as
// vecDotF32RowsAVX2, then the tail's exact float32 products added to the float64 sum
// in order.
TEXT ·vecDotF16RowsAVX2(SB), NOSPLIT, $0-48
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
	VCVTPH2PS    (AX), Y1
	VCVTPH2PS    (BX), Y2
	VMULPS       Y2, Y1, Y1
	VCVTPS2PD    X1, Y2
	VEXTRACTF128 $1, Y1, X1
	VCVTPS2PD    X1, Y3
	VUNPCKHPD    X2, X2, X4
	VADDSD       X2, X0, X0
	VADDSD       X4, X0, X0
	VEXTRACTF128 $1, Y2, X2
	VUNPCKHPD    X2, X2, X4
	VADDSD       X2, X0, X0
	VADDSD       X4, X0, X0
	VUNPCKHPD    X3, X3, X4
	VADDSD       X3, X0, X0
	VADDSD       X4, X0, X0
	VEXTRACTF128 $1, Y3, X3
	VUNPCKHPD    X3, X3, X4
	VADDSD       X3, X0, X0
	VADDSD       X4, X0, X0
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

// func scoresF16SeqAVX2(k *uint16, ks int, q *float32, hd, nkeys int, scale float32, s *float32)
// s[j] = float32(Σ float64(F16(k_j[d])·q[d]) added in order d = 0, 1, ..., hd-1) · scale
// for the nkeys rows k_j = k + j·ks (hd a multiple of 8): attendOneChunk's scores.
TEXT ·scoresF16SeqAVX2(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), SI
	MOVQ ks+8(FP), R8
	MOVQ q+16(FP), DI
	MOVQ hd+24(FP), R11
	SHRQ $3, R11
	MOVQ nkeys+32(FP), R10
	VMOVSS scale+40(FP), X14
	MOVQ s+48(FP), DX
	TESTQ R10, R10
	JEQ   sqdone

sqkey:
	VXORPD X0, X0, X0
	MOVQ   SI, AX
	MOVQ   DI, BX
	MOVQ   R11, CX
	TESTQ  CX, CX
	JEQ    sqstore

sqd:
	VCVTPH2PS    (AX), Y1
	VMULPS       (BX), Y1, Y1
	VCVTPS2PD    X1, Y2
	VEXTRACTF128 $1, Y1, X3
	VCVTPS2PD    X3, Y3
	VEXTRACTF128 $1, Y2, X4
	VEXTRACTF128 $1, Y3, X5
	VUNPCKHPD    X2, X2, X6
	VUNPCKHPD    X4, X4, X7
	VUNPCKHPD    X3, X3, X8
	VUNPCKHPD    X5, X5, X9
	VADDSD       X2, X0, X0
	VADDSD       X6, X0, X0
	VADDSD       X4, X0, X0
	VADDSD       X7, X0, X0
	VADDSD       X3, X0, X0
	VADDSD       X8, X0, X0
	VADDSD       X5, X0, X0
	VADDSD       X9, X0, X0
	ADDQ         $16, AX
	ADDQ         $32, BX
	DECQ         CX
	JNE          sqd

sqstore:
	VCVTSD2SS X0, X0, X0
	VMULSS    X14, X0, X0
	VMOVSS    X0, (DX)
	ADDQ      $4, DX
	ADDQ      R8, SI
	DECQ      R10
	JNE       sqkey

sqdone:
	VZEROUPPER
	RET

// func fmaRowF16AVX2(acc *float32, v *uint16, p float32, n int)
// acc[d] = fma(p, F16(v[d]), acc[d]) for d < n (a multiple of 8): attendTiled's V
// accumulation.
TEXT ·fmaRowF16AVX2(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), SI
	MOVQ         v+8(FP), DI
	VBROADCASTSS p+16(FP), Y2
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	TESTQ        CX, CX
	JEQ          frdone

frloop:
	VCVTPH2PS   (DI), Y0
	VFMADD213PS (SI), Y2, Y0
	VMOVUPS     Y0, (SI)
	ADDQ        $32, SI
	ADDQ        $16, DI
	DECQ        CX
	JNE         frloop

frdone:
	VZEROUPPER
	RET

// func scores8F16AVX2(k *uint16, idx *[8]int32, q *float32, hd int, scale float32, s *float32)
// s[j] = (fma chain over d < hd of q[d]·F16(key j, element d)) · scale for the eight
// keys whose rows start idx[j] bytes after k (hd even): attendTiled's score loop for
// eight keys at once, each lane one key's chain in order.
TEXT ·scores8F16AVX2(SB), NOSPLIT, $0-48
	MOVQ     k+0(FP), SI
	MOVQ     idx+8(FP), AX
	VMOVDQU  (AX), Y15
	MOVQ     q+16(FP), DI
	MOVQ     hd+24(FP), CX
	SHRQ     $1, CX
	VXORPS   Y0, Y0, Y0
	VPCMPEQD Y14, Y14, Y14
	VPSRLD   $16, Y14, Y13 // 0x0000ffff
	TESTQ    CX, CX
	JEQ      t8done

t8loop:
	VPCMPEQD     Y2, Y2, Y2
	VPGATHERDD   Y2, (SI)(Y15*1), Y1 // elements d (low words), d+1 (high words)
	VPAND        Y13, Y1, Y3
	VPSRLD       $16, Y1, Y4
	VPACKUSDW    Y4, Y3, Y5          // [d 0-3, d+1 0-3 | d 4-7, d+1 4-7]
	VPERMQ       $0xd8, Y5, Y5       // [d 0-7 | d+1 0-7]
	VCVTPH2PS    X5, Y6
	VEXTRACTI128 $1, Y5, X5
	VCVTPH2PS    X5, Y7
	VBROADCASTSS (DI), Y8
	VFMADD231PS  Y8, Y6, Y0
	VBROADCASTSS 4(DI), Y8
	VFMADD231PS  Y8, Y7, Y0
	ADDQ         $8, DI
	ADDQ         $4, SI
	DECQ         CX
	JNE          t8loop

t8done:
	VBROADCASTSS scale+32(FP), Y5
	VMULPS       Y5, Y0, Y0
	MOVQ         s+40(FP), DX
	VMOVUPS      Y0, (DX)
	VZEROUPPER
	RET

// Constants of ggml_v_expf (simd.go's vexpf), eight lanes each.
#define C8(off, v) \
	DATA expc<>+(off+0)(SB)/4, v; \
	DATA expc<>+(off+4)(SB)/4, v; \
	DATA expc<>+(off+8)(SB)/4, v; \
	DATA expc<>+(off+12)(SB)/4, v; \
	DATA expc<>+(off+16)(SB)/4, v; \
	DATA expc<>+(off+20)(SB)/4, v; \
	DATA expc<>+(off+24)(SB)/4, v; \
	DATA expc<>+(off+28)(SB)/4, v

C8(0, $0x3fb8aa3b)   // 0x1.715476p+0
C8(32, $0x4b400000)  // 0x1.8p23
C8(64, $0x3f317200)  // 0x1.62e4p-1
C8(96, $0x35bfbe8e)  // 0x1.7f7d1cp-20
C8(128, $0x3c072010) // 0x1.0e4020p-7
C8(160, $0x3d2b9f17) // 0x1.573e2ep-5
C8(192, $0x3e2aaf33) // 0x1.555e66p-3
C8(224, $0x3efffedb) // 0x1.fffdb6p-2
C8(256, $0x3f7ffff6) // 0x1.ffffecp-1
C8(288, $0x3f800000) // 1
C8(320, $0x43400000) // 192
C8(352, $0x7fffffff) // |.| mask
C8(384, $0x7f800000) // +Inf
C8(416, $127)        // float32 exponent bias
GLOBL expc<>(SB), RODATA|NOPTR, $448

// VEXPF(x, r): r = ggml_v_expf(x) lane by lane, as simd.go's vexpf with true float32
// FMAs; the scaling by 2^n is done as two exact-range multiplications by 2^(n>>1) and
// 2^(n-(n>>1)), so that a subnormal result is rounded once, as _mm512_scalef_ps rounds
// it. Y15 must be zero. Clobbers Y8-Y14.
#define VEXPF(x, r) \
	VMOVUPS      expc<>+32(SB), Y8; \
	VFMADD231PS  expc<>+0(SB), x, Y8; \
	VSUBPS       expc<>+32(SB), Y8, Y8; \
	VMOVAPS      x, Y9; \
	VFNMADD231PS expc<>+64(SB), Y8, Y9; \
	VFNMADD231PS expc<>+96(SB), Y8, Y9; \
	VMULPS       Y9, Y9, Y10; \
	VMOVUPS      expc<>+160(SB), Y11; \
	VFMADD231PS  expc<>+128(SB), Y9, Y11; \
	VMOVUPS      expc<>+224(SB), Y12; \
	VFMADD231PS  expc<>+192(SB), Y9, Y12; \
	VFMADD213PS  Y12, Y10, Y11; \
	VMOVUPS      expc<>+288(SB), Y12; \
	VFMADD231PS  expc<>+256(SB), Y9, Y12; \
	VFMADD213PS  Y12, Y10, Y11; \
	VCVTPS2DQ    Y8, Y9; \
	VPSRAD       $1, Y9, Y10; \
	VPSUBD       Y10, Y9, Y9; \
	VPADDD       expc<>+416(SB), Y10, Y10; \
	VPSLLD       $23, Y10, Y10; \
	VMULPS       Y10, Y11, Y11; \
	VPADDD       expc<>+416(SB), Y9, Y9; \
	VPSLLD       $23, Y9, Y9; \
	VMULPS       Y9, Y11, r; \
	VANDPS       expc<>+352(SB), Y8, Y9; \
	VCMPPS       $0x1e, expc<>+320(SB), Y9, Y9; \
	VCMPPS       $0x1e, Y15, Y8, Y10; \
	VANDPS       expc<>+384(SB), Y10, Y10; \
	VBLENDVPS    Y9, Y10, r, r

// func swigluF32AVX2(dst, gate, up *float32, n8 int)
// dst[i] = vsilu(gate[i]) · up[i] for i < 8·n8.
TEXT ·swigluF32AVX2(SB), NOSPLIT, $0-32
	MOVQ   dst+0(FP), DX
	MOVQ   gate+8(FP), SI
	MOVQ   up+16(FP), DI
	MOVQ   n8+24(FP), CX
	VXORPS Y15, Y15, Y15
	TESTQ  CX, CX
	JEQ    sgdone

sgloop:
	VMOVUPS (SI), Y0
	VSUBPS  Y0, Y15, Y1 // 0 - x
	VEXPF(Y1, Y2)
	VADDPS  expc<>+288(SB), Y2, Y2
	VDIVPS  Y2, Y0, Y2
	VMULPS  (DI), Y2, Y2
	VMOVUPS Y2, (DX)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	DECQ    CX
	JNE     sgloop

sgdone:
	VZEROUPPER
	RET

// iota8 is 0, 1, ..., 7: softmaxExpAVX2's lane numbers.
DATA iota8<>+0(SB)/4, $0
DATA iota8<>+4(SB)/4, $1
DATA iota8<>+8(SB)/4, $2
DATA iota8<>+12(SB)/4, $3
DATA iota8<>+16(SB)/4, $4
DATA iota8<>+20(SB)/4, $5
DATA iota8<>+24(SB)/4, $6
DATA iota8<>+28(SB)/4, $7
GLOBL iota8<>(SB), RODATA|NOPTR, $32

// func softmaxExpAVX2(s *float32, n int, m float32) float64
// softmaxExp: s[j] = vexpf(s[j] - m) for j < n, in groups of 16 lanes (the last one
// padded with zeros), each group reduced as reduce16 and added to a float64 sum.
TEXT ·softmaxExpAVX2(SB), NOSPLIT, $0-32
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Y7
	VXORPS       Y15, Y15, Y15
	VXORPD       X6, X6, X6
	TESTQ        CX, CX
	JLE          sxdone

sxloop:
	// masks of the lanes j < n in each half (all ones for a full group)
	MOVQ         CX, AX
	CMPQ         AX, $16
	JLE          sxmask
	MOVQ         $16, AX

sxmask:
	VMOVQ        AX, X0
	VPBROADCASTD X0, Y0
	VMOVDQU      iota8<>(SB), Y1
	VPCMPGTD     Y1, Y0, Y4 // lanes 0-7: j < n
	MOVQ         AX, BX
	SUBQ         $8, BX
	VMOVQ        BX, X0
	VPBROADCASTD X0, Y0
	VPCMPGTD     Y1, Y0, Y5 // lanes 8-15: j-8 < n-8
	VMASKMOVPS   (SI), Y4, Y0
	VMASKMOVPS   32(SI), Y5, Y1
	VSUBPS       Y7, Y0, Y0
	VSUBPS       Y7, Y1, Y1
	VEXPF(Y0, Y2)
	VEXPF(Y1, Y3)
	VANDPS       Y4, Y2, Y2
	VANDPS       Y5, Y3, Y3
	VMASKMOVPS   Y2, Y4, (SI)
	VMASKMOVPS   Y3, Y5, 32(SI)
	VADDPS       Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VADDPS       X3, X2, X2
	VMOVHLPS     X2, X2, X3
	VADDPS       X3, X2, X2
	VMOVSHDUP    X2, X3
	VADDSS       X3, X2, X2
	VCVTSS2SD    X2, X2, X2
	VADDSD       X2, X6, X6
	ADDQ         $64, SI
	SUBQ         $16, CX
	JG           sxloop

sxdone:
	VMOVSD X6, ret+24(FP)
	VZEROUPPER
	RET

// Constants of glibc's expf (libm.go), four float64 lanes each.
#define D4(off, v) \
	DATA expfc<>+(off+0)(SB)/8, v; \
	DATA expfc<>+(off+8)(SB)/8, v; \
	DATA expfc<>+(off+16)(SB)/8, v; \
	DATA expfc<>+(off+24)(SB)/8, v

D4(0, $0x40471547652b82fe)   // 32/ln 2
D4(32, $0x4338000000000000)  // shift 0x1.8p52
D4(64, $0x3ebc6af84b912394)  // c0
D4(96, $0x3f2ebfce50fac4f3)  // c1
D4(128, $0x3f962e42ff0c52d6) // c2
D4(160, $0x3ff0000000000000) // 1
D4(192, $31)                 // table index mask
GLOBL expfc<>(SB), RODATA|NOPTR, $224

// func expfRowAVX2(dst, src *float32, n4 int) bool
// dst[j] = expf(src[j]) for j < 4·n4, four float64 lanes at a time, as libm.go's expf
// computes an argument below 88 in magnitude (and -Inf, whose exponential is 0). It
// reports whether some other argument was seen (|x| ≥ 88, +Inf, NaNs): the caller
// recomputes those.
TEXT ·expfRowAVX2(SB), NOSPLIT, $0-25
	MOVQ     dst+0(FP), DX
	MOVQ     src+8(FP), SI
	MOVQ     n4+16(FP), CX
	VPXOR    X7, X7, X7             // special lanes seen
	MOVL     $0x7fffffff, AX
	VMOVD    AX, X6
	VPBROADCASTD X6, X6             // |.| mask
	MOVL     $0x42afffff, AX
	VMOVD    AX, X5
	VPBROADCASTD X5, X5             // bits below 88's top
	MOVL     $0xff800000, AX
	VMOVD    AX, X10
	VPBROADCASTD X10, X10           // -Inf
	TESTQ    CX, CX
	JEQ      exdone

exloop:
	VMOVDQU      (SI), X0
	VPCMPEQD     X10, X0, X9                 // -Inf: e^x = 0
	VPAND        X6, X0, X1
	VPCMPGTD     X5, X1, X1
	VPANDN       X1, X9, X1
	VPOR         X1, X7, X7
	VCVTPS2PD    X0, Y0                      // xd
	VMOVUPD      expfc<>+32(SB), Y1
	VFMADD231PD  expfc<>+0(SB), Y0, Y1       // kd = invLn2N·xd + shift
	VSUBPD       expfc<>+32(SB), Y1, Y2      // kd - shift
	VFMSUB231PD  expfc<>+0(SB), Y0, Y2       // r = invLn2N·xd - kd
	VPAND        expfc<>+192(SB), Y1, Y3     // ki % 32
	VPCMPEQQ     Y4, Y4, Y4
	LEAQ         ·exp2fTab(SB), AX
	VPGATHERQQ   Y4, (AX)(Y3*8), Y8          // tab[ki%32]
	VPSLLQ       $47, Y1, Y1
	VPADDQ       Y1, Y8, Y8                  // s
	VMOVUPD      expfc<>+96(SB), Y3
	VFMADD231PD  expfc<>+64(SB), Y2, Y3      // c0·r + c1
	VMOVUPD      expfc<>+160(SB), Y4
	VFMADD231PD  expfc<>+128(SB), Y2, Y4     // c2·r + 1
	VMULPD       Y2, Y2, Y2                  // r·r
	VFMADD213PD  Y4, Y2, Y3                  // y
	VMULPD       Y8, Y3, Y3
	VCVTPD2PSY   Y3, X3
	VANDNPS      X3, X9, X3
	VMOVUPS      X3, (DX)
	ADDQ         $16, SI
	ADDQ         $16, DX
	DECQ         CX
	JNE          exloop

exdone:
	VPTEST   X7, X7
	SETNE    ret+24(FP)
	VZEROUPPER
	RET

// ROUND16(y, t): y = F16(y), widened back.
#define ROUND16(y, t) \
	VCVTPS2PH $0, y, t; \
	VCVTPH2PS t, y

// func chunkAccF16AVX2(acc, v *uint16, vstride int, e *float32, raised *bool, nkeys, hd int) float32
// attendOneChunk's V accumulation and softmax sum: for each key j in order, with
// (ms, vs) = (e[j], 1) where raised[j], else (1, e[j]): acc = F16(acc·ms) where ms ≠ 1
// (ggml_vec_scale_f16), acc[d] = F16(fma(F16(v_j[d]), vs, acc[d]))
// (ggml_vec_mad_f16, contracted by GCC) and sum = fma(sum, ms, vs), for the V rows
// v_j = v + j·vstride bytes and an F16 accumulator of hd elements (a multiple of 8),
// kept in registers 32 elements at a time. It returns sum.
TEXT ·chunkAccF16AVX2(SB), NOSPLIT, $0-60
	MOVQ   acc+0(FP), SI
	MOVQ   v+8(FP), DI
	MOVQ   vstride+16(FP), R8
	MOVQ   e+24(FP), R9
	MOVQ   raised+32(FP), R10
	MOVQ   nkeys+40(FP), R11
	MOVQ   hd+48(FP), R12
	SHRQ   $3, R12        // chunks of 8 left
	MOVL   $0x3f800000, AX
	VMOVD  AX, X15        // 1
	VXORPS X14, X14, X14  // sum
	TESTQ  R11, R11
	JEQ    cadone
	TESTQ  R12, R12
	JEQ    cadone

cagroup:
	VXORPS X14, X14, X14
	CMPQ   R12, $4
	JLT    casingle
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VCVTPH2PS 32(SI), Y2
	VCVTPH2PS 48(SI), Y3
	MOVQ      DI, AX
	XORQ      BX, BX

cakey4:
	VMOVSS       (R9)(BX*4), X4
	CMPB         (R10)(BX*1), $0
	JNE          caraise4
	VADDSS       X4, X14, X14
	VBROADCASTSS X4, Y5

camad4:
	VCVTPH2PS    (AX), Y6
	VCVTPH2PS    16(AX), Y7
	VCVTPH2PS    32(AX), Y8
	VCVTPH2PS    48(AX), Y9
	VFMADD231PS  Y5, Y6, Y0
	VFMADD231PS  Y5, Y7, Y1
	VFMADD231PS  Y5, Y8, Y2
	VFMADD231PS  Y5, Y9, Y3
	ROUND16(Y0, X10)
	ROUND16(Y1, X11)
	ROUND16(Y2, X12)
	ROUND16(Y3, X13)
	ADDQ         R8, AX
	INCQ         BX
	CMPQ         BX, R11
	JLT          cakey4
	VCVTPS2PH    $0, Y0, (SI)
	VCVTPS2PH    $0, Y1, 16(SI)
	VCVTPS2PH    $0, Y2, 32(SI)
	VCVTPS2PH    $0, Y3, 48(SI)
	ADDQ         $64, SI
	ADDQ         $64, DI
	SUBQ         $4, R12
	JNE          cagroup
	JMP          cadone

caraise4:
	VFMADD213SS  X15, X4, X14
	VBROADCASTSS X15, Y5
	VUCOMISS     X15, X4
	JNE          cascale4
	JPS          cascale4
	JMP          camad4

cascale4:
	VBROADCASTSS X4, Y4
	VMULPS       Y4, Y0, Y0
	VMULPS       Y4, Y1, Y1
	VMULPS       Y4, Y2, Y2
	VMULPS       Y4, Y3, Y3
	ROUND16(Y0, X10)
	ROUND16(Y1, X11)
	ROUND16(Y2, X12)
	ROUND16(Y3, X13)
	JMP          camad4

casingle:
	VCVTPH2PS (SI), Y0
	MOVQ      DI, AX
	XORQ      BX, BX

cakey1:
	VMOVSS       (R9)(BX*4), X4
	CMPB         (R10)(BX*1), $0
	JNE          caraise1
	VADDSS       X4, X14, X14
	VBROADCASTSS X4, Y5

camad1:
	VCVTPH2PS    (AX), Y6
	VFMADD231PS  Y5, Y6, Y0
	ROUND16(Y0, X10)
	ADDQ         R8, AX
	INCQ         BX
	CMPQ         BX, R11
	JLT          cakey1
	VCVTPS2PH    $0, Y0, (SI)
	ADDQ         $16, SI
	ADDQ         $16, DI
	DECQ         R12
	JNE          cagroup
	JMP          cadone

caraise1:
	VFMADD213SS  X15, X4, X14
	VBROADCASTSS X15, Y5
	VUCOMISS     X15, X4
	JNE          cascale1
	JPS          cascale1
	JMP          camad1

cascale1:
	VBROADCASTSS X4, Y4
	VMULPS       Y4, Y0, Y0
	ROUND16(Y0, X10)
	JMP          camad1

cadone:
	VMOVSS X14, ret+56(FP)
	VZEROUPPER
	RET

// TRADD(p0, p1, p2, p3, x0, x1, x2, x3, acc): the products of four rows (p0-p3, eight
// elements each; x0-x3 their X registers) added to acc (four float64 lanes, one per
// row) element by element in order: the rows transposed so that each addition takes
// one element of all four. Clobbers Y6-Y9.
#define TRADD(p0, p1, p2, p3, x0, x1, x2, x3, acc) \
	VUNPCKLPS    p1, p0, Y6; \
	VUNPCKHPS    p1, p0, Y7; \
	VUNPCKLPS    p3, p2, Y8; \
	VUNPCKHPS    p3, p2, Y9; \
	VSHUFPS      $0x44, Y8, Y6, p0; \
	VSHUFPS      $0xee, Y8, Y6, p1; \
	VSHUFPS      $0x44, Y9, Y7, p2; \
	VSHUFPS      $0xee, Y9, Y7, p3; \
	VCVTPS2PD    x0, Y6; \
	VADDPD       Y6, acc, acc; \
	VCVTPS2PD    x1, Y7; \
	VADDPD       Y7, acc, acc; \
	VCVTPS2PD    x2, Y8; \
	VADDPD       Y8, acc, acc; \
	VCVTPS2PD    x3, Y9; \
	VADDPD       Y9, acc, acc; \
	VEXTRACTF128 $1, p0, x0; \
	VCVTPS2PD    x0, Y6; \
	VADDPD       Y6, acc, acc; \
	VEXTRACTF128 $1, p1, x1; \
	VCVTPS2PD    x1, Y7; \
	VADDPD       Y7, acc, acc; \
	VEXTRACTF128 $1, p2, x2; \
	VCVTPS2PD    x2, Y8; \
	VADDPD       Y8, acc, acc; \
	VEXTRACTF128 $1, p3, x3; \
	VCVTPS2PD    x3, Y9; \
	VADDPD       Y9, acc, acc

// func vecDotF16F32RowsAVX2(w *uint16, ws int, x *float32, n, rows int, dst *float32)
// dst[r] = vecDotF16(w+r·ws, x) over n elements for r < rows, x holding F16 values
// widened to float32: blocks of 64 as vecDotF32RowsAVX2, then the tail's exact float32
// products added to the float64 sum in order, eight rows' tails interleaved.
TEXT ·vecDotF16F32RowsAVX2(SB), NOSPLIT, $0-48
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
	JEQ   gvdone
	TESTQ R12, R12
	JNE   gvrow

gvzero:                // no block: the sums start at zero
	MOVL $0, (DX)
	ADDQ $4, DX
	DECQ R10
	JNE  gvzero
	JMP  gvtails

gvrow:
	ZERO8
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R12, CX
	TESTQ CX, CX
	JEQ   gvred

gvblk:
	VCVTPH2PS   (AX), Y8
	VCVTPH2PS   16(AX), Y9
	VCVTPH2PS   32(AX), Y10
	VCVTPH2PS   48(AX), Y11
	VFMADD231PS (BX), Y8, Y0
	VFMADD231PS 32(BX), Y9, Y1
	VFMADD231PS 64(BX), Y10, Y2
	VFMADD231PS 96(BX), Y11, Y3
	VCVTPH2PS   64(AX), Y8
	VCVTPH2PS   80(AX), Y9
	VCVTPH2PS   96(AX), Y10
	VCVTPH2PS   112(AX), Y11
	VFMADD231PS 128(BX), Y8, Y4
	VFMADD231PS 160(BX), Y9, Y5
	VFMADD231PS 192(BX), Y10, Y6
	VFMADD231PS 224(BX), Y11, Y7
	ADDQ        $128, AX
	ADDQ        $256, BX
	DECQ        CX
	JNE         gvblk

gvred:
	VECREDUCE
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   R8, SI
	DECQ   R10
	JNE    gvrow

gvtails:
	VZEROUPPER
	JMP ·vecDotF16F32TailsAVX2(SB)

gvdone:
	VZEROUPPER
	RET

// func vecDotF16F32TailsAVX2(w *uint16, ws int, x *float32, n, rows int, dst *float32)
// The end of vecDotF16F32RowsAVX2 (and of vecDotF16F32RowsAVX512), which jump to it with
// their arguments in place once dst[r] holds row r's reduced blocks of 64: sum =
// float64(dst[r]), then += float64(F16(w[i])·x[i]) over the last n%64 elements in
// order, eight rows' tails interleaved.
TEXT ·vecDotF16F32TailsAVX2(SB), NOSPLIT, $0-48
	MOVQ  ws+8(FP), R8
	MOVQ  x+16(FP), DI
	MOVQ  n+24(FP), R11
	MOVQ  R11, R12
	SHRQ  $6, R12         // blocks of 64
	ANDQ  $63, R11        // tail
	TESTQ R11, R11
	JEQ   gvdone
	MOVQ  w+0(FP), SI
	MOVQ  R12, AX
	SHLQ  $7, AX
	ADDQ  AX, SI          // row 0's tail
	SHLQ  $1, AX
	ADDQ  AX, DI          // x's tail
	MOVQ  rows+32(FP), R10
	MOVQ  dst+40(FP), DX
	LEAQ  (R8)(R8*2), R13 // 3·ws

gvt8:
	CMPQ R10, $8
	JLT  gvt1
	VCVTPS2PD (DX), Y0    // rows 0-3's sums, float64
	VCVTPS2PD 16(DX), Y1  // rows 4-7's
	MOVQ SI, AX
	LEAQ (SI)(R8*4), BX
	MOVQ DI, R9
	MOVQ R11, CX
	CMPQ CX, $8
	JLT  gvt8s

gvt8v:
	VMOVUPS (R9), Y14
	VCVTPH2PS (AX), Y2
	VMULPS    Y14, Y2, Y2
	VCVTPH2PS (AX)(R8*1), Y3
	VMULPS    Y14, Y3, Y3
	VCVTPH2PS (AX)(R8*2), Y4
	VMULPS    Y14, Y4, Y4
	VCVTPH2PS (AX)(R13*1), Y5
	VMULPS    Y14, Y5, Y5
	TRADD(Y2, Y3, Y4, Y5, X2, X3, X4, X5, Y0)
	VCVTPH2PS (BX), Y2
	VMULPS    Y14, Y2, Y2
	VCVTPH2PS (BX)(R8*1), Y3
	VMULPS    Y14, Y3, Y3
	VCVTPH2PS (BX)(R8*2), Y4
	VMULPS    Y14, Y4, Y4
	VCVTPH2PS (BX)(R13*1), Y5
	VMULPS    Y14, Y5, Y5
	TRADD(Y2, Y3, Y4, Y5, X2, X3, X4, X5, Y1)
	ADDQ $16, AX
	ADDQ $16, BX
	ADDQ $32, R9
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  gvt8v

gvt8s:
	TESTQ CX, CX
	JEQ   gvt8end

gvt8se:
	VBROADCASTSS (R9), X14
	VPXOR     X2, X2, X2
	VPINSRW   $0, (AX), X2, X2
	VPINSRW   $1, (AX)(R8*1), X2, X2
	VPINSRW   $2, (AX)(R8*2), X2, X2
	VPINSRW   $3, (AX)(R13*1), X2, X2
	VCVTPH2PS X2, X2
	VMULPS    X14, X2, X2
	VCVTPS2PD X2, Y2
	VADDPD    Y2, Y0, Y0
	VPXOR     X2, X2, X2
	VPINSRW   $0, (BX), X2, X2
	VPINSRW   $1, (BX)(R8*1), X2, X2
	VPINSRW   $2, (BX)(R8*2), X2, X2
	VPINSRW   $3, (BX)(R13*1), X2, X2
	VCVTPH2PS X2, X2
	VMULPS    X14, X2, X2
	VCVTPS2PD X2, Y2
	VADDPD    Y2, Y1, Y1
	ADDQ $2, AX
	ADDQ $2, BX
	ADDQ $4, R9
	DECQ CX
	JNE  gvt8se

gvt8end:
	VCVTPD2PSY Y0, X0
	VMOVUPS    X0, (DX)
	VCVTPD2PSY Y1, X1
	VMOVUPS    X1, 16(DX)
	ADDQ       $32, DX
	LEAQ       (SI)(R8*8), SI
	SUBQ       $8, R10
	JMP        gvt8

gvt1:
	TESTQ R10, R10
	JEQ   gvdone
	VMOVSS    (DX), X0
	VCVTSS2SD X0, X0, X0
	MOVQ      SI, AX
	MOVQ      DI, R9
	MOVQ      R11, CX

gvt1e:
	VMOVSS    (R9), X8
	MOVWLZX   (AX), R14
	VMOVD     R14, X9
	VCVTPH2PS X9, X9
	VMULSS    X8, X9, X9
	VCVTSS2SD X9, X9, X9
	VADDSD    X9, X0, X0
	ADDQ      $2, AX
	ADDQ      $4, R9
	DECQ      CX
	JNE       gvt1e
	VCVTSD2SS X0, X0, X0
	VMOVSS    X0, (DX)
	ADDQ      $4, DX
	ADDQ      R8, SI
	DECQ      R10
	JMP       gvt1

gvdone:
	VZEROUPPER
	RET

// func f32ToF16RowAVX2(dst *uint16, src *float32, n8 int) bool
// dst[i] = F16(src[i]) rounded to nearest even for i < 8·n8 (VCVTPS2PH). It reports
// whether src held a NaN, whose F16 bits tensor.F32ToF16 sets differently: the caller
// converts such a row again.
TEXT ·f32ToF16RowAVX2(SB), NOSPLIT, $0-25
	MOVQ   dst+0(FP), DX
	MOVQ   src+8(FP), SI
	MOVQ   n8+16(FP), CX
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JEQ    cvdone

cvloop:
	VMOVUPS   (SI), Y0
	VCMPPS    $3, Y0, Y0, Y1
	VORPS     Y1, Y7, Y7
	VCVTPS2PH $0, Y0, (DX)
	ADDQ      $32, SI
	ADDQ      $16, DX
	DECQ      CX
	JNE       cvloop

cvdone:
	VPTEST Y7, Y7
	SETNE  ret+24(FP)
	VZEROUPPER
	RET

// func roundF16RowAVX2(dst, src *float32, n8 int) bool
// dst[i] = float32(F16(src[i])) for i < 8·n8: the F16 activations of an F16 matmul,
// widened once. It reports whether src held a NaN (see f32ToF16RowAVX2).
TEXT ·roundF16RowAVX2(SB), NOSPLIT, $0-25
	MOVQ   dst+0(FP), DX
	MOVQ   src+8(FP), SI
	MOVQ   n8+16(FP), CX
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JEQ    rfdone

rfloop:
	VMOVUPS   (SI), Y0
	VCMPPS    $3, Y0, Y0, Y1
	VORPS     Y1, Y7, Y7
	VCVTPS2PH $0, Y0, X0
	VCVTPH2PS X0, Y0
	VMOVUPS   Y0, (DX)
	ADDQ      $32, SI
	ADDQ      $32, DX
	DECQ      CX
	JNE       rfloop

rfdone:
	VPTEST Y7, Y7
	SETNE  ret+24(FP)
	VZEROUPPER
	RET

// func chunkAccF16x4AVX2(acc, v *uint16, vstride int, offs *[4]int, e *float32, raised *bool, nkeys int, sums *[4]float32)
// chunkAccF16AVX2 for four heads of eight elements over the same keys, their chains
// interleaved: head g's accumulator is acc[8g:8g+8], its V row j at v + j·vstride +
// offs[g] bytes, its exponential and flag of key j at e[4j+g] and raised[4j+g]; its sum
// is stored in sums[g].
TEXT ·chunkAccF16x4AVX2(SB), NOSPLIT, $0-64
	MOVQ   acc+0(FP), SI
	MOVQ   v+8(FP), AX
	MOVQ   vstride+16(FP), R12
	MOVQ   offs+24(FP), BX
	MOVQ   0(BX), DX
	MOVQ   8(BX), DI
	MOVQ   16(BX), R8
	MOVQ   24(BX), R11
	MOVQ   e+32(FP), R9
	MOVQ   raised+40(FP), R10
	MOVQ   nkeys+48(FP), R13
	MOVL   $0x3f800000, BX
	VMOVD  BX, X15        // 1
	VXORPS X4, X4, X4     // sums
	VXORPS X5, X5, X5
	VXORPS X6, X6, X6
	VXORPS X7, X7, X7
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VCVTPH2PS 32(SI), Y2
	VCVTPH2PS 48(SI), Y3
	TESTQ  R13, R13
	JEQ    c4done

c4key:
	VMOVSS       0(R9), X8
	CMPB         0(R10), $0
	JNE          c4raise0
	VADDSS       X8, X4, X4
	VBROADCASTSS X8, Y9

c4mad0:
	VCVTPH2PS    (AX)(DX*1), Y10
	VFMADD231PS  Y9, Y10, Y0
	ROUND16(Y0, X11)
	VMOVSS       4(R9), X8
	CMPB         1(R10), $0
	JNE          c4raise1
	VADDSS       X8, X5, X5
	VBROADCASTSS X8, Y9

c4mad1:
	VCVTPH2PS    (AX)(DI*1), Y10
	VFMADD231PS  Y9, Y10, Y1
	ROUND16(Y1, X11)
	VMOVSS       8(R9), X8
	CMPB         2(R10), $0
	JNE          c4raise2
	VADDSS       X8, X6, X6
	VBROADCASTSS X8, Y9

c4mad2:
	VCVTPH2PS    (AX)(R8*1), Y10
	VFMADD231PS  Y9, Y10, Y2
	ROUND16(Y2, X11)
	VMOVSS       12(R9), X8
	CMPB         3(R10), $0
	JNE          c4raise3
	VADDSS       X8, X7, X7
	VBROADCASTSS X8, Y9

c4mad3:
	VCVTPH2PS    (AX)(R11*1), Y10
	VFMADD231PS  Y9, Y10, Y3
	ROUND16(Y3, X11)
	ADDQ         R12, AX
	ADDQ         $16, R9
	ADDQ         $4, R10
	DECQ         R13
	JNE          c4key

c4done:
	VCVTPS2PH $0, Y0, (SI)
	VCVTPS2PH $0, Y1, 16(SI)
	VCVTPS2PH $0, Y2, 32(SI)
	VCVTPS2PH $0, Y3, 48(SI)
	MOVQ      sums+56(FP), BX
	VMOVSS    X4, 0(BX)
	VMOVSS    X5, 4(BX)
	VMOVSS    X6, 8(BX)
	VMOVSS    X7, 12(BX)
	VZEROUPPER
	RET

c4raise0:
	VFMADD213SS  X15, X8, X4
	VBROADCASTSS X15, Y9
	VUCOMISS     X15, X8
	JNE          c4scale0
	JPS          c4scale0
	JMP          c4mad0

c4scale0:
	VBROADCASTSS X8, Y12
	VMULPS       Y12, Y0, Y0
	ROUND16(Y0, X13)
	JMP          c4mad0

c4raise1:
	VFMADD213SS  X15, X8, X5
	VBROADCASTSS X15, Y9
	VUCOMISS     X15, X8
	JNE          c4scale1
	JPS          c4scale1
	JMP          c4mad1

c4scale1:
	VBROADCASTSS X8, Y12
	VMULPS       Y12, Y1, Y1
	ROUND16(Y1, X13)
	JMP          c4mad1

c4raise2:
	VFMADD213SS  X15, X8, X6
	VBROADCASTSS X15, Y9
	VUCOMISS     X15, X8
	JNE          c4scale2
	JPS          c4scale2
	JMP          c4mad2

c4scale2:
	VBROADCASTSS X8, Y12
	VMULPS       Y12, Y2, Y2
	ROUND16(Y2, X13)
	JMP          c4mad2

c4raise3:
	VFMADD213SS  X15, X8, X7
	VBROADCASTSS X15, Y9
	VUCOMISS     X15, X8
	JNE          c4scale3
	JPS          c4scale3
	JMP          c4mad3

c4scale3:
	VBROADCASTSS X8, Y12
	VMULPS       Y12, Y3, Y3
	ROUND16(Y3, X13)
	JMP          c4mad3
