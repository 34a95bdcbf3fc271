#include "textflag.h"

// Kernels of x86repack.go for Q4_0 (AVX512-VNNI integer sums, FMA float32 sums): the
// lane order of ggml_vec_dot_q4_0_q8_0 (AVX2) and the one-accumulator order of the
// repacked ggml_gemv/gemm_q4_0_8x8_q8_0. The integer sums are exact, so the float32
// operations alone decide the bits, and they are the Go code's, one for one.

DATA rnib4<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA rnib4<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA rnib4<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA rnib4<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL rnib4<>(SB), RODATA|NOPTR, $32

DATA reights<>+0(SB)/8, $0x0808080808080808
DATA reights<>+8(SB)/8, $0x0808080808080808
DATA reights<>+16(SB)/8, $0x0808080808080808
DATA reights<>+24(SB)/8, $0x0808080808080808
GLOBL reights<>(SB), RODATA|NOPTR, $32

// rhishift4: VPSRLVD counts, 0 for the low 128 bits (low nibbles, elements 0..15) and
// 4 for the high 128 bits (high nibbles, elements 16..31).
DATA rhishift4<>+0(SB)/8, $0
DATA rhishift4<>+8(SB)/8, $0
DATA rhishift4<>+16(SB)/8, $0x0000000400000004
DATA rhishift4<>+24(SB)/8, $0x0000000400000004
GLOBL rhishift4<>(SB), RODATA|NOPTR, $32

// Q4LANES leaves in Y0 the eight exact sums Σ_{k<4} (q−8)·x of elements 4l..4l+3 of
// the Q4_0 block at (SI) and the Q8_0 block at (DI): Σ q·x − Σ 8·x by VPDPBUSD. Y8 and
// Y9 are clobbered; Y11..Y13 hold rhishift4, rnib4, reights.
#define Q4LANES \
	VBROADCASTI128 2(SI), Y8; \
	VPSRLVD        Y11, Y8, Y8; \
	VPAND          Y12, Y8, Y8; \
	VPXOR          Y0, Y0, Y0; \
	VPXOR          Y9, Y9, Y9; \
	VPDPBUSD       2(DI), Y8, Y0; \
	VPDPBUSD       2(DI), Y13, Y9; \
	VPSUBD         Y9, Y0, Y0

// func dotQ4_0x86VNNI(w, x *byte, nb int) float32
// dotQ4_0x86Go over nb ≥ 1 blocks.
TEXT ·dotQ4_0x86VNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  Y15, Y15, Y15
	VMOVDQU rhishift4<>(SB), Y11
	VMOVDQU rnib4<>(SB), Y12
	VMOVDQU reights<>(SB), Y13

q40xloop:
	Q4LANES
	VCVTDQ2PS    Y0, Y0
	VPBROADCASTW (SI), X1
	VPBROADCASTW (DI), X2
	VCVTPH2PS    X1, Y1
	VCVTPH2PS    X2, Y2
	VMULPS       Y2, Y1, Y1
	VFMADD231PS  Y1, Y0, Y15
	ADDQ         $18, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q40xloop

	// hsum_float_8: (l+4)+l, then (0+2)+(1+3).
	VEXTRACTF128 $1, Y15, X0
	VADDPS       X15, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func dotQ4_0RepackVNNI(w, x *byte, nb int) float32
// dotQ4_0RepackGo over nb ≥ 1 blocks: the block's eight lane sums added up exactly,
// converted, then acc = fma(float(Σ), dw·dx, acc).
TEXT ·dotQ4_0RepackVNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  X15, X15, X15
	VMOVDQU rhishift4<>(SB), Y11
	VMOVDQU rnib4<>(SB), Y12
	VMOVDQU reights<>(SB), Y13

q40rloop:
	Q4LANES
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VCVTDQ2PS    X0, X0
	MOVWQZX      (SI), AX
	VMOVQ        AX, X1
	VCVTPH2PS    X1, X1
	MOVWQZX      (DI), AX
	VMOVQ        AX, X2
	VCVTPH2PS    X2, X2
	VMULSS       X2, X1, X1
	VFMADD231SS  X1, X0, X15
	ADDQ         $18, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q40rloop

	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// func dotQ4_1x86VNNI(w, x *byte, nb int) float32
// The lanes of dotQ4_1x86Go over nb ≥ 1 blocks (Σ q·x of the unsigned nibbles by one
// VPDPBUSD, scale dw·dx), and hsum_float_8 of them; summs is added by the caller.
TEXT ·dotQ4_1x86VNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  Y15, Y15, Y15
	VMOVDQU rhishift4<>(SB), Y11
	VMOVDQU rnib4<>(SB), Y12

q41xloop:
	VBROADCASTI128 4(SI), Y8
	VPSRLVD        Y11, Y8, Y8
	VPAND          Y12, Y8, Y8
	VPXOR          Y0, Y0, Y0
	VPDPBUSD       4(DI), Y8, Y0
	VCVTDQ2PS      Y0, Y0
	VPBROADCASTW   (SI), X1
	VPBROADCASTW   (DI), X2
	VCVTPH2PS      X1, Y1
	VCVTPH2PS      X2, Y2
	VMULPS         Y2, Y1, Y1
	VFMADD231PS    Y1, Y0, Y15
	ADDQ           $20, SI
	ADDQ           $36, DI
	DECQ           CX
	JNZ            q41xloop

	VEXTRACTF128 $1, Y15, X0
	VADDPS       X15, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func q4KSubSumsVNNI(w, x *byte, nb int, out *int32)
// For each of nb ≥ 1 Q4_K·Q8_K block pairs, the eight exact sub-block sums
// S_j = Σ_{k<32} q[32j+k]·q8[32j+k] (levels 0..15, no scales) to out[8i+j].
TEXT ·q4KSubSumsVNNI(SB), NOSPLIT, $0-32
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    out+24(FP), DX
	VMOVDQU rnib4<>(SB), Y12

q4ksloop:
	VMOVDQU   16(SI), Y8
	VPSRLW    $4, Y8, Y9
	VPAND     Y12, Y8, Y8
	VPAND     Y12, Y9, Y9
	VPXOR     Y0, Y0, Y0
	VPXOR     Y1, Y1, Y1
	VPDPBUSD  4(DI), Y8, Y0
	VPDPBUSD  36(DI), Y9, Y1
	VMOVDQU   48(SI), Y8
	VPSRLW    $4, Y8, Y9
	VPAND     Y12, Y8, Y8
	VPAND     Y12, Y9, Y9
	VPXOR     Y2, Y2, Y2
	VPXOR     Y3, Y3, Y3
	VPDPBUSD  68(DI), Y8, Y2
	VPDPBUSD  100(DI), Y9, Y3
	VMOVDQU   80(SI), Y8
	VPSRLW    $4, Y8, Y9
	VPAND     Y12, Y8, Y8
	VPAND     Y12, Y9, Y9
	VPXOR     Y4, Y4, Y4
	VPXOR     Y5, Y5, Y5
	VPDPBUSD  132(DI), Y8, Y4
	VPDPBUSD  164(DI), Y9, Y5
	VMOVDQU   112(SI), Y8
	VPSRLW    $4, Y8, Y9
	VPAND     Y12, Y8, Y8
	VPAND     Y12, Y9, Y9
	VPXOR     Y6, Y6, Y6
	VPXOR     Y7, Y7, Y7
	VPDPBUSD  196(DI), Y8, Y6
	VPDPBUSD  228(DI), Y9, Y7

	// Reduce the eight vectors to one of their eight sums.
	VPHADDD    Y1, Y0, Y0
	VPHADDD    Y3, Y2, Y2
	VPHADDD    Y5, Y4, Y4
	VPHADDD    Y7, Y6, Y6
	VPHADDD    Y2, Y0, Y0 // lanes: S0 S1 S2 S3 (low halves) | S0 S1 S2 S3 (high halves)
	VPHADDD    Y6, Y4, Y4 // S4..S7 likewise
	VPERM2I128 $0x20, Y4, Y0, Y1
	VPERM2I128 $0x31, Y4, Y0, Y2
	VPADDD     Y2, Y1, Y1
	VMOVDQU    Y1, (DX)

	ADDQ $144, SI
	ADDQ $292, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  q4ksloop
	VZEROUPPER
	RET

DATA rbit0<>+0(SB)/8, $0x0101010101010101
DATA rbit0<>+8(SB)/8, $0x0101010101010101
DATA rbit0<>+16(SB)/8, $0x0101010101010101
DATA rbit0<>+24(SB)/8, $0x0101010101010101
GLOBL rbit0<>(SB), RODATA|NOPTR, $32

// Q5KPAIR adds to Y10 the lanes of sub-blocks 2c and 2c+1 of the Q5_K block at (SI)
// against the Q8_K block at (DI): 5-bit levels nibble | (bit of qh)<<4, four-element
// sums by VPDPBUSD, times the sub-block scales sc[2c], sc[2c+1] at (DX). Y14 holds qh,
// Y12 rnib4, Y13 rbit0; the high bits, bits B0 = 2c and B1 = 2c+1 of qh, are moved to
// bit 4 by
// shifting the words of qh right by B0 (B1), keeping bit 0 of each byte, shifting left
// by 4 (bits that cross into a byte land outside the bit kept).
#define Q5KPAIR(c, B0, B1) \
	VMOVDQU       (48+32*c)(SI), Y8; \
	VPSRLW        $4, Y8, Y9; \
	VPAND         Y12, Y8, Y8; \
	VPAND         Y12, Y9, Y9; \
	VPSRLW        $B0, Y14, Y6; \
	VPAND         Y13, Y6, Y6; \
	VPSLLW        $4, Y6, Y6; \
	VPOR          Y6, Y8, Y8; \
	VPSRLW        $B1, Y14, Y7; \
	VPAND         Y13, Y7, Y7; \
	VPSLLW        $4, Y7, Y7; \
	VPOR          Y7, Y9, Y9; \
	VPXOR         Y0, Y0, Y0; \
	VPXOR         Y1, Y1, Y1; \
	VPDPBUSD      (4+64*c)(DI), Y8, Y0; \
	VPDPBUSD      (36+64*c)(DI), Y9, Y1; \
	VPBROADCASTD  (8*c)(DX), Y2; \
	VPBROADCASTD  (8*c+4)(DX), Y3; \
	VPMULLD       Y2, Y0, Y0; \
	VPMULLD       Y3, Y1, Y1; \
	VPADDD        Y0, Y10, Y10; \
	VPADDD        Y1, Y10, Y10

// func q5KLanesVNNI(w, x *byte, sc *[8]int32, acc *[8]float32, d float32)
// One block of dotQ5Kx86Go's lanes: the eight int32 sums of kLanes8 given the block's
// unpacked sub-block scales, converted and fused-multiply-added with d into acc.
TEXT ·q5KLanesVNNI(SB), NOSPLIT, $0-36
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    sc+16(FP), DX
	MOVQ    acc+24(FP), R8
	VMOVDQU rnib4<>(SB), Y12
	VMOVDQU rbit0<>(SB), Y13
	VMOVDQU 16(SI), Y14
	VPXOR   Y10, Y10, Y10
	Q5KPAIR(0, 0, 1)
	Q5KPAIR(1, 2, 3)
	Q5KPAIR(2, 4, 5)
	Q5KPAIR(3, 6, 7)
	VCVTDQ2PS    Y10, Y10
	VBROADCASTSS d+32(FP), Y1
	VMOVUPS      (R8), Y0
	VFMADD231PS  Y1, Y10, Y0
	VMOVUPS      Y0, (R8)
	VZEROUPPER
	RET

DATA rthirtytwo<>+0(SB)/8, $0x2020202020202020
DATA rthirtytwo<>+8(SB)/8, $0x2020202020202020
DATA rthirtytwo<>+16(SB)/8, $0x2020202020202020
DATA rthirtytwo<>+24(SB)/8, $0x2020202020202020
GLOBL rthirtytwo<>(SB), RODATA|NOPTR, $32

DATA rthree<>+0(SB)/8, $0x0303030303030303
DATA rthree<>+8(SB)/8, $0x0303030303030303
DATA rthree<>+16(SB)/8, $0x0303030303030303
DATA rthree<>+24(SB)/8, $0x0303030303030303
GLOBL rthree<>(SB), RODATA|NOPTR, $32

// rpair: VPERMD indices 0 0 0 0 1 1 1 1.
DATA rpair<>+0(SB)/8, $0
DATA rpair<>+8(SB)/8, $0
DATA rpair<>+16(SB)/8, $0x0000000100000001
DATA rpair<>+24(SB)/8, $0x0000000100000001
GLOBL rpair<>(SB), RODATA|NOPTR, $32

// Q6KGROUP adds to Y10 the lanes of the 32 levels+32 in U against the Q8_K quants at
// xoff(DI): Σ u·x − Σ 32·x per four elements, times the scales sc[G] (lanes 0..3) and
// sc[G+1] (lanes 4..7), the int8 pair at scoff(SI).
#define Q6KGROUP(U, xoff, scoff) \
	VPXOR        Y0, Y0, Y0; \
	VPXOR        Y1, Y1, Y1; \
	VPDPBUSD     xoff(DI), U, Y0; \
	VPDPBUSD     xoff(DI), Y11, Y1; \
	VPSUBD       Y1, Y0, Y0; \
	VPMOVSXBD    scoff(SI), Y2; \
	VPERMD       Y2, Y15, Y2; \
	VPMULLD      Y2, Y0, Y0; \
	VPADDD       Y0, Y10, Y10

// Q6KHALF does the four groups of 32 of half h of the block.
#define Q6KHALF(h) \
	VMOVDQU   (64*h)(SI), Y4; \
	VMOVDQU   (64*h+32)(SI), Y5; \
	VMOVDQU   (128+32*h)(SI), Y6; \
	VPAND     Y12, Y4, Y8; \
	VPAND     Y13, Y6, Y9; \
	VPSLLW    $4, Y9, Y9; \
	VPOR      Y9, Y8, Y8; \
	Q6KGROUP(Y8, 4+128*h, 192+8*h); \
	VPAND     Y12, Y5, Y8; \
	VPSRLW    $2, Y6, Y9; \
	VPAND     Y13, Y9, Y9; \
	VPSLLW    $4, Y9, Y9; \
	VPOR      Y9, Y8, Y8; \
	Q6KGROUP(Y8, 4+128*h+32, 192+8*h+2); \
	VPSRLW    $4, Y4, Y8; \
	VPAND     Y12, Y8, Y8; \
	VPSRLW    $4, Y6, Y9; \
	VPAND     Y13, Y9, Y9; \
	VPSLLW    $4, Y9, Y9; \
	VPOR      Y9, Y8, Y8; \
	Q6KGROUP(Y8, 4+128*h+64, 192+8*h+4); \
	VPSRLW    $4, Y5, Y8; \
	VPAND     Y12, Y8, Y8; \
	VPSRLW    $6, Y6, Y9; \
	VPAND     Y13, Y9, Y9; \
	VPSLLW    $4, Y9, Y9; \
	VPOR      Y9, Y8, Y8; \
	Q6KGROUP(Y8, 4+128*h+96, 192+8*h+6)

// func dotQ6Kx86VNNI(w, x *byte, nb int, d *float32, acc *[8]float32)
// Continues the lanes acc of dotQ6Kx86Go over nb ≥ 1 blocks, d[i] = d8·d of block i.
TEXT ·dotQ6Kx86VNNI(SB), NOSPLIT, $0-40
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    d+24(FP), DX
	MOVQ    acc+32(FP), R8
	VMOVDQU rthirtytwo<>(SB), Y11
	VMOVDQU rnib4<>(SB), Y12
	VMOVDQU rthree<>(SB), Y13
	VMOVDQU rpair<>(SB), Y15
	VMOVUPS (R8), Y14

q6kxloop:
	VPXOR        Y10, Y10, Y10
	Q6KHALF(0)
	Q6KHALF(1)
	VCVTDQ2PS    Y10, Y10
	VBROADCASTSS (DX), Y1
	VFMADD231PS  Y10, Y1, Y14
	ADDQ         $210, SI
	ADDQ         $292, DI
	ADDQ         $4, DX
	DECQ         CX
	JNZ          q6kxloop

	VMOVUPS Y14, (R8)
	VZEROUPPER
	RET

// func q4KGemmFMA(v *int32, d *float32, nb int, acc *[2]float32)
// The float32 part of dotQ4KRepackGemmGo over nb ≥ 1 blocks: for block i and pair c,
// acc[0] = fma(float(v[8i+c]), d[2i], acc[0]) and acc[1] = fma(float(v[8i+4+c]),
// d[2i+1], acc[1]), c = 0..3 in order.
TEXT ·q4KGemmFMA(SB), NOSPLIT, $0-32
	MOVQ  v+0(FP), SI
	MOVQ  d+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  acc+24(FP), DX
	MOVSS (DX), X14
	MOVSS 4(DX), X15

q4kfloop:
	MOVSS       (DI), X12
	MOVSS       4(DI), X13
	CVTSL2SS    (SI), X0
	VFMADD231SS X12, X0, X14
	CVTSL2SS    16(SI), X1
	VFMADD231SS X13, X1, X15
	CVTSL2SS    4(SI), X0
	VFMADD231SS X12, X0, X14
	CVTSL2SS    20(SI), X1
	VFMADD231SS X13, X1, X15
	CVTSL2SS    8(SI), X0
	VFMADD231SS X12, X0, X14
	CVTSL2SS    24(SI), X1
	VFMADD231SS X13, X1, X15
	CVTSL2SS    12(SI), X0
	VFMADD231SS X12, X0, X14
	CVTSL2SS    28(SI), X1
	VFMADD231SS X13, X1, X15
	ADDQ        $32, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         q4kfloop

	MOVSS X14, (DX)
	MOVSS X15, 4(DX)
	RET
