#include "textflag.h"

// Kernels of x86order.go: the Q8_0·Q8_0 and Q5_0·Q8_0 dot products in the order of
// llama.cpp's AVX2 ggml_vec_dot_q{8,5}_0_q8_0 (per block eight exact int32 sums of four
// consecutive products, converted to float32, one VFMADD231PS with the broadcast block
// scale dw·dx into eight lanes; hsum_float_8 at the end), and the AVX2
// quantize_row_q8_0/q8_1. The integer sums are exact for any quant bytes (-128
// included), so the float32 operations alone decide the bits, and they are the Go
// code's, lane for lane.

DATA xbias80<>+0(SB)/8, $0x8080808080808080
DATA xbias80<>+8(SB)/8, $0x8080808080808080
DATA xbias80<>+16(SB)/8, $0x8080808080808080
DATA xbias80<>+24(SB)/8, $0x8080808080808080
GLOBL xbias80<>(SB), RODATA|NOPTR, $32

DATA xnib4<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA xnib4<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA xnib4<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA xnib4<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL xnib4<>(SB), RODATA|NOPTR, $32

DATA xsixteens<>+0(SB)/8, $0x1010101010101010
DATA xsixteens<>+8(SB)/8, $0x1010101010101010
DATA xsixteens<>+16(SB)/8, $0x1010101010101010
DATA xsixteens<>+24(SB)/8, $0x1010101010101010
GLOBL xsixteens<>(SB), RODATA|NOPTR, $32

DATA xones16<>+0(SB)/8, $0x0001000100010001
DATA xones16<>+8(SB)/8, $0x0001000100010001
DATA xones16<>+16(SB)/8, $0x0001000100010001
DATA xones16<>+24(SB)/8, $0x0001000100010001
GLOBL xones16<>(SB), RODATA|NOPTR, $32

// xbitspread: VPSHUFB pattern copying byte k/8 of a (lane-broadcast) dword into byte k.
DATA xbitspread<>+0(SB)/8, $0x0000000000000000
DATA xbitspread<>+8(SB)/8, $0x0101010101010101
DATA xbitspread<>+16(SB)/8, $0x0202020202020202
DATA xbitspread<>+24(SB)/8, $0x0303030303030303
GLOBL xbitspread<>(SB), RODATA|NOPTR, $32

// xbitclear: every bit of byte k set except bit k%8.
DATA xbitclear<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA xbitclear<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA xbitclear<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA xbitclear<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL xbitclear<>(SB), RODATA|NOPTR, $32

DATA xallones<>+0(SB)/8, $0xffffffffffffffff
DATA xallones<>+8(SB)/8, $0xffffffffffffffff
DATA xallones<>+16(SB)/8, $0xffffffffffffffff
DATA xallones<>+24(SB)/8, $0xffffffffffffffff
GLOBL xallones<>(SB), RODATA|NOPTR, $32

// xqperm: the VPERMD indices that undo the lane interleaving of the packs.
DATA xqperm<>+0(SB)/8, $0x0000000400000000
DATA xqperm<>+8(SB)/8, $0x0000000500000001
DATA xqperm<>+16(SB)/8, $0x0000000600000002
DATA xqperm<>+24(SB)/8, $0x0000000700000003
GLOBL xqperm<>(SB), RODATA|NOPTR, $32

DATA xabsmask<>+0(SB)/4, $0x7fffffff
GLOBL xabsmask<>(SB), RODATA|NOPTR, $4

DATA x127<>+0(SB)/4, $0x42fe0000
GLOBL x127<>(SB), RODATA|NOPTR, $4

// SCALE puts dw·dx in every lane of Y1: the f16 scales at (SI) and (DI), broadcast and
// widened (VCVTPH2PS is exact), multiplied in float32. Y2 is clobbered.
#define SCALE \
	VPBROADCASTW (SI), X1; \
	VPBROADCASTW (DI), X2; \
	VCVTPH2PS    X1, Y1; \
	VCVTPH2PS    X2, Y2; \
	VMULPS       Y2, Y1, Y1

// HSUM8F is hsum_float_8 of Y15 into X0: (l+4)+l, then (0+2)+(1+3). X1 is clobbered.
#define HSUM8F \
	VEXTRACTF128 $1, Y15, X0; \
	VADDPS       X15, X0, X0; \
	VMOVHLPS     X0, X0, X1; \
	VADDPS       X1, X0, X0; \
	VMOVSHDUP    X0, X1; \
	VADDSS       X1, X0, X0

// func dotQ8_0x86VNNI(w, x *byte, nb int) float32
// dotQ8_0x86Go over nb ≥ 1 blocks. Lane l of VPDPBUSD sums the four products of bytes
// 4l..4l+3, as Σ(w+128)·x − Σ128·x (each exact).
TEXT ·dotQ8_0x86VNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  Y15, Y15, Y15
	VMOVDQU xbias80<>(SB), Y13

q80xvloop:
	VPXOR       2(SI), Y13, Y8
	VPXOR       Y0, Y0, Y0
	VPXOR       Y9, Y9, Y9
	VPDPBUSD    2(DI), Y8, Y0
	VPDPBUSD    2(DI), Y13, Y9
	VPSUBD      Y9, Y0, Y0
	VCVTDQ2PS   Y0, Y0
	SCALE
	VFMADD231PS Y1, Y0, Y15
	ADDQ        $34, SI
	ADDQ        $34, DI
	DECQ        CX
	JNZ         q80xvloop

	HSUM8F
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ8_0x86AVX2(w, x *byte, nb int) float32
// dotQ8_0x86Go over nb ≥ 1 blocks with AVX2 integer sums: sign-extended to words,
// pairs summed by VPMADDWD, then the pairs of pairs by VPHADDD, which leaves the eight
// four-element sums in the lane order 0 1 4 5 2 3 6 7; the accumulator keeps that order
// and is put back in place by one VPERMQ before the reduction.
TEXT ·dotQ8_0x86AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y15, Y15, Y15

q80xloop:
	VPMOVSXBW   2(SI), Y8
	VPMOVSXBW   2(DI), Y9
	VPMOVSXBW   18(SI), Y10
	VPMOVSXBW   18(DI), Y11
	VPMADDWD    Y9, Y8, Y8
	VPMADDWD    Y11, Y10, Y10
	VPHADDD     Y10, Y8, Y0
	VCVTDQ2PS   Y0, Y0
	SCALE
	VFMADD231PS Y1, Y0, Y15
	ADDQ        $34, SI
	ADDQ        $34, DI
	DECQ        CX
	JNZ         q80xloop

	VPERMQ $0xd8, Y15, Y15
	HSUM8F
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// NIBBLES5 puts in Y8 the 32 nibbles of the 16 bytes at 6(SI) in element order (low
// nibbles, then high nibbles). Needs Y12 = xnib4; Y9 is clobbered.
#define NIBBLES5 \
	VMOVDQU     6(SI), X8; \
	VPSRLW      $4, X8, X9; \
	VINSERTI128 $1, X9, Y8, Y8; \
	VPAND       Y12, Y8, Y8

// func dotQ5_0x86VNNI(w, x *byte, nb int) float32
// dotQ5_0x86Go over nb ≥ 1 blocks: the fifth bits, loaded as the opmask K1, add 16 to
// their bytes; lane l of VPDPBUSD then sums q·x − 16·x over bytes 4l..4l+3.
TEXT ·dotQ5_0x86VNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  Y15, Y15, Y15
	VMOVDQU xnib4<>(SB), Y12
	VMOVDQU xsixteens<>(SB), Y13

q50xvloop:
	NIBBLES5
	KMOVD       2(SI), K1
	VPADDB      Y13, Y8, K1, Y8
	VPXOR       Y0, Y0, Y0
	VPXOR       Y9, Y9, Y9
	VPDPBUSD    2(DI), Y8, Y0
	VPDPBUSD    2(DI), Y13, Y9
	VPSUBD      Y9, Y0, Y0
	VCVTDQ2PS   Y0, Y0
	SCALE
	VFMADD231PS Y1, Y0, Y15
	ADDQ        $22, SI
	ADDQ        $34, DI
	DECQ        CX
	JNZ         q50xvloop

	HSUM8F
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_0x86AVX2(w, x *byte, nb int) float32
// dotQ5_0x86Go over nb ≥ 1 blocks with AVX2 integer sums: the fifth bits spread to bit
// 4 of their bytes, q·x and 16·x summed in pairs by VPMADDUBSW (no saturation: at most
// 2·31·128), subtracted, and the pairs of pairs summed by VPMADDWD, which leaves lane l
// with bytes 4l..4l+3.
TEXT ·dotQ5_0x86AVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  Y15, Y15, Y15
	VMOVDQU xnib4<>(SB), Y12
	VMOVDQU xsixteens<>(SB), Y13
	VMOVDQU xones16<>(SB), Y14
	VMOVDQU xbitspread<>(SB), Y10
	VMOVDQU xbitclear<>(SB), Y11
	VMOVDQU xallones<>(SB), Y7

q50xloop:
	NIBBLES5
	VPBROADCASTD 2(SI), Y9
	VPSHUFB      Y10, Y9, Y9
	VPOR         Y11, Y9, Y9
	VPCMPEQB     Y7, Y9, Y9
	VPAND        Y13, Y9, Y9
	VPOR         Y9, Y8, Y8
	VPMADDUBSW   2(DI), Y8, Y8
	VPMADDUBSW   2(DI), Y13, Y9
	VPSUBW       Y9, Y8, Y8
	VPMADDWD     Y14, Y8, Y0
	VCVTDQ2PS    Y0, Y0
	SCALE
	VFMADD231PS  Y1, Y0, Y15
	ADDQ         $22, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q50xloop

	HSUM8F
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// QBLOCK quantizes the 32 floats at (SI) as quantize_row_q8_0 (AVX2) does, leaving the
// int32 quants in Y0..Y3 (elements 0-7, 8-15, 16-23, 24-31) and d = amax/127 in X6.
// The maxima follow the intrinsics' operand order (MAXPS returns its second source when
// either is a NaN). Needs Y13 = abs mask, X12 = 127; Y4, Y5, X7, X8 are clobbered.
#define QBLOCK \
	VMOVUPS      (SI), Y0; \
	VMOVUPS      32(SI), Y1; \
	VMOVUPS      64(SI), Y2; \
	VMOVUPS      96(SI), Y3; \
	VANDPS       Y13, Y0, Y4; \
	VANDPS       Y13, Y1, Y5; \
	VMAXPS       Y5, Y4, Y4; \
	VANDPS       Y13, Y2, Y5; \
	VMAXPS       Y5, Y4, Y4; \
	VANDPS       Y13, Y3, Y5; \
	VMAXPS       Y5, Y4, Y4; \
	VEXTRACTF128 $1, Y4, X5; \
	VMAXPS       X4, X5, X4; \
	VMOVHLPS     X4, X4, X5; \
	VMAXPS       X5, X4, X4; \
	VMOVSHDUP    X4, X5; \
	VMAXSS       X5, X4, X4; \
	VDIVSS       X12, X4, X6; \
	VDIVSS       X4, X12, X7; \
	VXORPS       X8, X8, X8; \
	VCMPSS       $4, X8, X4, X8; \
	VANDPS       X8, X7, X7; \
	VBROADCASTSS X7, Y7; \
	VMULPS       Y7, Y0, Y0; \
	VMULPS       Y7, Y1, Y1; \
	VMULPS       Y7, Y2, Y2; \
	VMULPS       Y7, Y3, Y3; \
	VCVTPS2DQ    Y0, Y0; \
	VCVTPS2DQ    Y1, Y1; \
	VCVTPS2DQ    Y2, Y2; \
	VCVTPS2DQ    Y3, Y3

// QPACK packs the int32 quants Y0..Y3 to 32 int8 in element order in Y0 (saturating).
// Needs Y14 = xqperm; Y2 is clobbered.
#define QPACK \
	VPACKSSDW Y1, Y0, Y0; \
	VPACKSSDW Y3, Y2, Y2; \
	VPACKSSWB Y2, Y0, Y0; \
	VPERMD    Y0, Y14, Y0

// func quantizeQ8_0x86AVX2(dst *byte, src *float32, nb int)
// quantizeQ8_0x86Go over nb ≥ 1 blocks. VCVTPS2DQ rounds half to even (Go keeps MXCSR
// at its default), VCVTPS2PH $0 too.
TEXT ·quantizeQ8_0x86AVX2(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         nb+16(FP), CX
	VBROADCASTSS xabsmask<>(SB), Y13
	VMOVSS       x127<>(SB), X12
	VMOVDQU      xqperm<>(SB), Y14

qq80loop:
	QBLOCK
	VCVTPS2PH $0, X6, X6
	VMOVD     X6, AX
	MOVW      AX, (DI)
	QPACK
	VMOVDQU   Y0, 2(DI)
	ADDQ      $128, SI
	ADDQ      $34, DI
	DECQ      CX
	JNZ       qq80loop

	VZEROUPPER
	RET

// func quantizeQ8_1x86AVX2(dst *byte, src *float32, nb int)
// quantizeQ8_1x86Go over nb ≥ 1 blocks: also s = fp16(d·Σq), the int32 sum of the
// quants before the packs.
TEXT ·quantizeQ8_1x86AVX2(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         nb+16(FP), CX
	VBROADCASTSS xabsmask<>(SB), Y13
	VMOVSS       x127<>(SB), X12
	VMOVDQU      xqperm<>(SB), Y14

qq81loop:
	QBLOCK
	VPADDD       Y1, Y0, Y8
	VPADDD       Y3, Y2, Y9
	VPADDD       Y9, Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPADDD       X9, X8, X8
	VPSHUFD      $0x4e, X8, X9
	VPADDD       X9, X8, X8
	VPSHUFD      $0xb1, X8, X9
	VPADDD       X9, X8, X8
	VCVTDQ2PS    X8, X8
	VMULSS       X8, X6, X8
	VCVTPS2PH    $0, X6, X6
	VMOVD        X6, AX
	MOVW         AX, (DI)
	VCVTPS2PH    $0, X8, X8
	VMOVD        X8, AX
	MOVW         AX, 2(DI)
	QPACK
	VMOVDQU      Y0, 4(DI)
	ADDQ         $128, SI
	ADDQ         $36, DI
	DECQ         CX
	JNZ          qq81loop

	VZEROUPPER
	RET

// HSUMTO stores hsum_float_8 of Y at off(R9). X0, X1 are clobbered.
#define HSUMTO(Y, X, off) \
	VEXTRACTF128 $1, Y, X0; \
	VADDPS       X, X0, X0; \
	VMOVHLPS     X0, X0, X1; \
	VADDPS       X1, X0, X0; \
	VMOVSHDUP    X0, X1; \
	VADDSS       X1, X0, X0; \
	VMOVSS       X0, off(R9)

// The four-weight-row kernel computes the dots of four Q5_0 weight rows with one
// activation row, each lane for lane as the one-row kernel: per block the activation
// quants X and C = −Σ16·X per lane are formed once; each weight row then adds Σq·X to a
// copy of C with VPDPBUSD, q = 0..31 (its offset being 16) as unsigned bytes, which is
// Σ(q−16)·X exactly.

// XCORR sets Y14 = X (the 32 quants at 2(DI)), Y13 = −Σk·X per lane with k (16) in Y15, and
// Y12 = dx broadcast. Y0 is clobbered.
#define XCORR \
	VMOVDQU      2(DI), Y14; \
	VPXOR        Y13, Y13, Y13; \
	VPDPBUSD     Y14, Y15, Y13; \
	VPXOR        Y0, Y0, Y0; \
	VPSUBD       Y13, Y0, Y13; \
	VPBROADCASTW (DI), X12; \
	VCVTPH2PS    X12, Y12

// WACC adds to ACC the block whose unsigned quants are in U and whose f16 scale is at
// (P). Needs Y12 = dx, Y13 = C, Y14 = X; Y1, Y2 are clobbered.
#define WACC(P, ACC, U) \
	VMOVDQA      Y13, Y1; \
	VPDPBUSD     Y14, U, Y1; \
	VCVTDQ2PS    Y1, Y1; \
	VPBROADCASTW (P), X2; \
	VCVTPH2PS    X2, Y2; \
	VMULPS       Y12, Y2, Y2; \
	VFMADD231PS  Y2, Y1, ACC

// W5ROW: one Q5_0 weight block at (P) into ACC. Needs Y6 = xnib4, Y15 = xsixteens; Y4,
// Y5, K1 are clobbered.
#define W5ROW(P, ACC) \
	VMOVDQU     6(P), X4; \
	VPSRLW      $4, X4, X5; \
	VINSERTI128 $1, X5, Y4, Y4; \
	VPAND       Y6, Y4, Y4; \
	KMOVD       2(P), K1; \
	VPADDB      Y15, Y4, K1, Y4; \
	WACC(P, ACC, Y4)

// func dotQ5_0x86VNNIw4(w *byte, wstride int, x *byte, nb int, dst *float32)
// dst[r] = dotQ5_0x86VNNI(w+r*wstride, x, nb) for r < 4, nb ≥ 1.
TEXT ·dotQ5_0x86VNNIw4(SB), NOSPLIT, $0-40
	MOVQ   w+0(FP), SI
	MOVQ   wstride+8(FP), R8
	MOVQ   x+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   dst+32(FP), R9
	LEAQ   (SI)(R8*1), DX
	LEAQ   (SI)(R8*2), R10
	LEAQ   (DX)(R8*2), R11
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VMOVDQU xsixteens<>(SB), Y15
	VMOVDQU xnib4<>(SB), Y6

q50w4loop:
	XCORR
	W5ROW(SI, Y8)
	W5ROW(DX, Y9)
	W5ROW(R10, Y10)
	W5ROW(R11, Y11)
	ADDQ  $22, SI
	ADDQ  $22, DX
	ADDQ  $22, R10
	ADDQ  $22, R11
	ADDQ  $34, DI
	DECQ  CX
	JNZ   q50w4loop

	HSUMTO(Y8, X8, 0)
	HSUMTO(Y9, X9, 4)
	HSUMTO(Y10, X10, 8)
	HSUMTO(Y11, X11, 12)
	VZEROUPPER
	RET
