#include "textflag.h"

// AVX2 kernels (no AVX-512) of the x86 lane orders of Q6_K and Q5_K (dotQ6Kx86Go,
// dotQ5Kx86Go): one weight row against four activation rows, or one. Per block the
// weight row's levels are unpacked once to 32 bytes per group of 32 elements (element
// order) and its sub-block scales to one word vector per group (lanes 0-3 and 4-7 of
// a group have their own scale in Q6_K, one scale in Q5_K), on the stack; then for
// each activation row, per group, VPMADDUBSW of the levels against the activations,
// minus 32·x in pairs for Q6_K (prepared per activation row by q8KM32Prep), and
// VPMADDWD with the scales leave eight exact int32 lanes, lane l the scaled sum of
// elements 4l..4l+3 of each group, as kLanes8. Then lane = fma(d8·d, float(lane),
// lane), and for Q5_K summs = fma(−d8·dmin, float(Σ m·bsums), summs): the Go code's
// float32 operations.

DATA kxnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kxnib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kxnib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kxnib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL kxnib<>(SB), RODATA|NOPTR, $32

DATA kx30<>+0(SB)/8, $0x3030303030303030
DATA kx30<>+8(SB)/8, $0x3030303030303030
DATA kx30<>+16(SB)/8, $0x3030303030303030
DATA kx30<>+24(SB)/8, $0x3030303030303030
GLOBL kx30<>(SB), RODATA|NOPTR, $32

DATA kx10<>+0(SB)/8, $0x1010101010101010
DATA kx10<>+8(SB)/8, $0x1010101010101010
DATA kx10<>+16(SB)/8, $0x1010101010101010
DATA kx10<>+24(SB)/8, $0x1010101010101010
GLOBL kx10<>(SB), RODATA|NOPTR, $32

DATA kx32<>+0(SB)/8, $0x2020202020202020
DATA kx32<>+8(SB)/8, $0x2020202020202020
DATA kx32<>+16(SB)/8, $0x2020202020202020
DATA kx32<>+24(SB)/8, $0x2020202020202020
GLOBL kx32<>(SB), RODATA|NOPTR, $32

// kxpair: VPSHUFB controls k < 4 putting word 2k in every word of the low lane and
// word 2k+1 in every word of the high lane.
DATA kxpair<>+0(SB)/8, $0x0100010001000100
DATA kxpair<>+8(SB)/8, $0x0100010001000100
DATA kxpair<>+16(SB)/8, $0x0302030203020302
DATA kxpair<>+24(SB)/8, $0x0302030203020302
DATA kxpair<>+32(SB)/8, $0x0504050405040504
DATA kxpair<>+40(SB)/8, $0x0504050405040504
DATA kxpair<>+48(SB)/8, $0x0706070607060706
DATA kxpair<>+56(SB)/8, $0x0706070607060706
DATA kxpair<>+64(SB)/8, $0x0908090809080908
DATA kxpair<>+72(SB)/8, $0x0908090809080908
DATA kxpair<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kxpair<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kxpair<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kxpair<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kxpair<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kxpair<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kxpair<>(SB), RODATA|NOPTR, $128

// kxbcast: VPSHUFB controls j < 8 broadcasting word j to every word.
DATA kxbcast<>+0(SB)/8, $0x0100010001000100
DATA kxbcast<>+8(SB)/8, $0x0100010001000100
DATA kxbcast<>+16(SB)/8, $0x0100010001000100
DATA kxbcast<>+24(SB)/8, $0x0100010001000100
DATA kxbcast<>+32(SB)/8, $0x0302030203020302
DATA kxbcast<>+40(SB)/8, $0x0302030203020302
DATA kxbcast<>+48(SB)/8, $0x0302030203020302
DATA kxbcast<>+56(SB)/8, $0x0302030203020302
DATA kxbcast<>+64(SB)/8, $0x0504050405040504
DATA kxbcast<>+72(SB)/8, $0x0504050405040504
DATA kxbcast<>+80(SB)/8, $0x0504050405040504
DATA kxbcast<>+88(SB)/8, $0x0504050405040504
DATA kxbcast<>+96(SB)/8, $0x0706070607060706
DATA kxbcast<>+104(SB)/8, $0x0706070607060706
DATA kxbcast<>+112(SB)/8, $0x0706070607060706
DATA kxbcast<>+120(SB)/8, $0x0706070607060706
DATA kxbcast<>+128(SB)/8, $0x0908090809080908
DATA kxbcast<>+136(SB)/8, $0x0908090809080908
DATA kxbcast<>+144(SB)/8, $0x0908090809080908
DATA kxbcast<>+152(SB)/8, $0x0908090809080908
DATA kxbcast<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kxbcast<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kxbcast<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kxbcast<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kxbcast<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kxbcast<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kxbcast<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kxbcast<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kxbcast<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kxbcast<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kxbcast<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kxbcast<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kxbcast<>(SB), RODATA|NOPTR, $256

// Q6KGROUPS unpacks half h of the Q6_K block at (SI) (ql at qo, qh at ho) to groups
// 4h..4h+3 at go(SP), 32 bytes each. Y10..Y15 are clobbered.
#define Q6KGROUPS(qo, ho, go) \
	VMOVDQU kxnib<>(SB), Y14; \
	VMOVDQU kx30<>(SB), Y15; \
	VMOVDQU qo(SI), Y11; \
	VMOVDQU qo+32(SI), Y12; \
	VMOVDQU ho(SI), Y13; \
	VPAND   Y14, Y11, Y10; \
	VPSLLW  $4, Y13, Y9; \
	VPAND   Y15, Y9, Y9; \
	VPOR    Y9, Y10, Y10; \
	VMOVDQU Y10, go(SP); \
	VPAND   Y14, Y12, Y10; \
	VPSLLW  $2, Y13, Y9; \
	VPAND   Y15, Y9, Y9; \
	VPOR    Y9, Y10, Y10; \
	VMOVDQU Y10, go+32(SP); \
	VPSRLW  $4, Y11, Y10; \
	VPAND   Y14, Y10, Y10; \
	VPAND   Y15, Y13, Y9; \
	VPOR    Y9, Y10, Y10; \
	VMOVDQU Y10, go+64(SP); \
	VPSRLW  $4, Y12, Y10; \
	VPAND   Y14, Y10, Y10; \
	VPSRLW  $2, Y13, Y9; \
	VPAND   Y15, Y9, Y9; \
	VPOR    Y9, Y10, Y10; \
	VMOVDQU Y10, go+96(SP)

// Q6KUNPACK unpacks the Q6_K block at (SI): levels of group g at 32g(SP), its scale
// words at 256+32g(SP), d (f32) at 512(SP). Y8..Y15 are clobbered.
#define Q6KUNPACK \
	VPMOVSXBW    192(SI), Y8; \
	VPERMQ       $0x44, Y8, Y9; \
	VPERMQ       $0xee, Y8, Y8; \
	VPSHUFB      kxpair<>+0(SB), Y9, Y10; \
	VMOVDQU      Y10, 256(SP); \
	VPSHUFB      kxpair<>+32(SB), Y9, Y10; \
	VMOVDQU      Y10, 288(SP); \
	VPSHUFB      kxpair<>+64(SB), Y9, Y10; \
	VMOVDQU      Y10, 320(SP); \
	VPSHUFB      kxpair<>+96(SB), Y9, Y10; \
	VMOVDQU      Y10, 352(SP); \
	VPSHUFB      kxpair<>+0(SB), Y8, Y10; \
	VMOVDQU      Y10, 384(SP); \
	VPSHUFB      kxpair<>+32(SB), Y8, Y10; \
	VMOVDQU      Y10, 416(SP); \
	VPSHUFB      kxpair<>+64(SB), Y8, Y10; \
	VMOVDQU      Y10, 448(SP); \
	VPSHUFB      kxpair<>+96(SB), Y8, Y10; \
	VMOVDQU      Y10, 480(SP); \
	Q6KGROUPS(0, 128, 0); \
	Q6KGROUPS(64, 160, 128); \
	VPBROADCASTW 208(SI), X10; \
	VCVTPH2PS    X10, X10; \
	VMOVSS       X10, 512(SP)

// Q6KG adds group g (go = 32g) of the activation block at (xp), prepared 32·x at (mp),
// to the int32 lanes in Y4 (Y5 clobbered).
#define Q6KG(xp, mp, go) \
	VMOVDQU    go(SP), Y5; \
	VPMADDUBSW go+4(xp), Y5, Y5; \
	VPSUBW     go(mp), Y5, Y5; \
	VPMADDWD   go+256(SP), Y5, Y5; \
	VPADDD     Y5, Y4, Y4

// Q6KX adds the block of the activation row at (xp) (32·x at (mp)) to the lanes acc.
// Y4..Y6 are clobbered.
#define Q6KX(xp, mp, acc) \
	VMOVDQU      0(SP), Y4; \
	VPMADDUBSW   4(xp), Y4, Y4; \
	VPSUBW       0(mp), Y4, Y4; \
	VPMADDWD     256(SP), Y4, Y4; \
	Q6KG(xp, mp, 32); \
	Q6KG(xp, mp, 64); \
	Q6KG(xp, mp, 96); \
	Q6KG(xp, mp, 128); \
	Q6KG(xp, mp, 160); \
	Q6KG(xp, mp, 192); \
	Q6KG(xp, mp, 224); \
	VCVTDQ2PS    Y4, Y4; \
	VBROADCASTSS (xp), Y5; \
	VBROADCASTSS 512(SP), Y6; \
	VMULPS       Y6, Y5, Y5; \
	VFMADD231PS  Y5, Y4, acc

// func q8KM32Prep(x *byte, nb int, dst *byte)
// Writes, for each of nb ≥ 1 Q8_K blocks at x, the 256 bytes of 32·x added in pairs
// (VPMADDUBSW of 32 against the quants), group after group.
TEXT ·q8KM32Prep(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    nb+8(FP), CX
	MOVQ    dst+16(FP), DI
	VMOVDQU kx32<>(SB), Y15

kxm32:
	VPMADDUBSW 4(SI), Y15, Y0
	VPMADDUBSW 36(SI), Y15, Y1
	VPMADDUBSW 68(SI), Y15, Y2
	VPMADDUBSW 100(SI), Y15, Y3
	VPMADDUBSW 132(SI), Y15, Y4
	VPMADDUBSW 164(SI), Y15, Y5
	VPMADDUBSW 196(SI), Y15, Y6
	VPMADDUBSW 228(SI), Y15, Y7
	VMOVDQU    Y0, 0(DI)
	VMOVDQU    Y1, 32(DI)
	VMOVDQU    Y2, 64(DI)
	VMOVDQU    Y3, 96(DI)
	VMOVDQU    Y4, 128(DI)
	VMOVDQU    Y5, 160(DI)
	VMOVDQU    Y6, 192(DI)
	VMOVDQU    Y7, 224(DI)
	ADDQ       $292, SI
	ADDQ       $256, DI
	DECQ       CX
	JNZ        kxm32
	VZEROUPPER
	RET

// func q6KLanesX4(w, x *byte, xstride int, m32 *byte, m32stride, nb int, acc *[4][8]float32)
// acc[i] = the lanes of dotQ6Kx86Go over nb ≥ 1 blocks of the weight row at w and the
// activation row x+i·xstride (32·x at m32+i·m32stride), i < 4.
TEXT ·q6KLanesX4(SB), NOSPLIT, $544-56
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   xstride+16(FP), BX
	LEAQ   (DI)(BX*1), R8
	LEAQ   (DI)(BX*2), R9
	LEAQ   (R8)(BX*2), R10
	MOVQ   m32+24(FP), R11
	MOVQ   m32stride+32(FP), DX
	LEAQ   (R11)(DX*1), R12
	LEAQ   (R11)(DX*2), R13
	LEAQ   (R12)(DX*2), R14
	MOVQ   nb+40(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q6kx4:
	Q6KUNPACK
	Q6KX(DI, R11, Y0)
	Q6KX(R8, R12, Y1)
	Q6KX(R9, R13, Y2)
	Q6KX(R10, R14, Y3)
	ADDQ $210, SI
	ADDQ $292, DI
	ADDQ $292, R8
	ADDQ $292, R9
	ADDQ $292, R10
	ADDQ $256, R11
	ADDQ $256, R12
	ADDQ $256, R13
	ADDQ $256, R14
	DECQ CX
	JNZ  q6kx4

	MOVQ    acc+48(FP), AX
	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VMOVUPS Y3, 96(AX)
	VZEROUPPER
	RET

// func q6KLanesX1(w, x, m32 *byte, nb int, acc *[8]float32)
// acc = the lanes of dotQ6Kx86Go over nb ≥ 1 blocks of the weight row at w and the
// activation row at x (32·x at m32).
TEXT ·q6KLanesX1(SB), NOSPLIT, $544-40
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   m32+16(FP), R11
	MOVQ   nb+24(FP), CX
	VXORPS Y0, Y0, Y0

q6kx1:
	Q6KUNPACK
	Q6KX(DI, R11, Y0)
	ADDQ $210, SI
	ADDQ $292, DI
	ADDQ $256, R11
	DECQ CX
	JNZ  q6kx1

	MOVQ    acc+32(FP), AX
	VMOVUPS Y0, 0(AX)
	VZEROUPPER
	RET

// Q5KGROUPS unpacks pair c of the Q5_K block at (SI) (qs at qo, qh bits 2c, 2c+1 in
// Y13) to groups 2c, 2c+1 at go(SP). lo/hi shift bit 2c / 2c+1 to bit 4 (SL/SR
// VPSLLW/VPSRLW by n; a zero shift is a left shift by 0). Y9..Y12 are clobbered;
// Y14 = kxnib, Y15 = kx10.
#define Q5KGROUPS(qo, go, sh0, n0, sh1, n1) \
	VMOVDQU qo(SI), Y11; \
	VPAND   Y14, Y11, Y10; \
	sh0     $n0, Y13, Y9; \
	VPAND   Y15, Y9, Y9; \
	VPOR    Y9, Y10, Y10; \
	VMOVDQU Y10, go(SP); \
	VPSRLW  $4, Y11, Y10; \
	VPAND   Y14, Y10, Y10; \
	sh1     $n1, Y13, Y9; \
	VPAND   Y15, Y9, Y9; \
	VPOR    Y9, Y10, Y10; \
	VMOVDQU Y10, go+32(SP)

// Q5KUNPACK unpacks the Q5_K block at (SI): levels of group g at 32g(SP), scale g
// broadcast to words at 256+32g(SP), the mins as words at 512(SP), d and dmin (f32)
// at 528(SP), 532(SP). R11..R14, DX and Y8..Y15 are clobbered.
#define Q5KUNPACK \
	MOVL         4(SI), R11; \
	MOVL         8(SI), R12; \
	MOVL         12(SI), R13; \
	MOVL         R13, R14; \
	SHRL         $4, R14; \
	ANDL         $0x0f0f0f0f, R14; \
	MOVL         R12, DX; \
	SHRL         $6, DX; \
	ANDL         $0x03030303, DX; \
	SHLL         $4, DX; \
	ORL          DX, R14; \
	ANDL         $0x0f0f0f0f, R13; \
	MOVL         R11, DX; \
	SHRL         $6, DX; \
	ANDL         $0x03030303, DX; \
	SHLL         $4, DX; \
	ORL          DX, R13; \
	ANDL         $0x3f3f3f3f, R12; \
	ANDL         $0x3f3f3f3f, R11; \
	VMOVD        R11, X8; \
	VPINSRD      $1, R13, X8, X8; \
	VPINSRD      $2, R12, X8, X8; \
	VPINSRD      $3, R14, X8, X8; \
	VPMOVZXBW    X8, Y8; \
	VEXTRACTI128 $1, Y8, X9; \
	VMOVDQU      X9, 512(SP); \
	VPERMQ       $0x44, Y8, Y8; \
	VPSHUFB      kxbcast<>+0(SB), Y8, Y9; \
	VMOVDQU      Y9, 256(SP); \
	VPSHUFB      kxbcast<>+32(SB), Y8, Y9; \
	VMOVDQU      Y9, 288(SP); \
	VPSHUFB      kxbcast<>+64(SB), Y8, Y9; \
	VMOVDQU      Y9, 320(SP); \
	VPSHUFB      kxbcast<>+96(SB), Y8, Y9; \
	VMOVDQU      Y9, 352(SP); \
	VPSHUFB      kxbcast<>+128(SB), Y8, Y9; \
	VMOVDQU      Y9, 384(SP); \
	VPSHUFB      kxbcast<>+160(SB), Y8, Y9; \
	VMOVDQU      Y9, 416(SP); \
	VPSHUFB      kxbcast<>+192(SB), Y8, Y9; \
	VMOVDQU      Y9, 448(SP); \
	VPSHUFB      kxbcast<>+224(SB), Y8, Y9; \
	VMOVDQU      Y9, 480(SP); \
	VMOVDQU      kxnib<>(SB), Y14; \
	VMOVDQU      kx10<>(SB), Y15; \
	VMOVDQU      16(SI), Y13; \
	Q5KGROUPS(48, 0, VPSLLW, 4, VPSLLW, 3); \
	Q5KGROUPS(80, 64, VPSLLW, 2, VPSLLW, 1); \
	Q5KGROUPS(112, 128, VPSLLW, 0, VPSRLW, 1); \
	Q5KGROUPS(144, 192, VPSRLW, 2, VPSRLW, 3); \
	VPBROADCASTD (SI), X10; \
	VCVTPH2PS    X10, X10; \
	VMOVQ        X10, 528(SP)

// Q5KG adds group g (go = 32g) of the activation block at (xp) to the lanes in Y4.
#define Q5KG(xp, go) \
	VMOVDQU    go(SP), Y5; \
	VPMADDUBSW go+4(xp), Y5, Y5; \
	VPMADDWD   go+256(SP), Y5, Y5; \
	VPADDD     Y5, Y4, Y4

// Q5KX adds the block of the activation row at (xp) to the lanes acc and its mins to
// the float32 summs at soff(SP). Y4..Y7 are clobbered.
#define Q5KX(xp, acc, soff) \
	VMOVDQU      0(SP), Y4; \
	VPMADDUBSW   4(xp), Y4, Y4; \
	VPMADDWD     256(SP), Y4, Y4; \
	Q5KG(xp, 32); \
	Q5KG(xp, 64); \
	Q5KG(xp, 96); \
	Q5KG(xp, 128); \
	Q5KG(xp, 160); \
	Q5KG(xp, 192); \
	Q5KG(xp, 224); \
	VCVTDQ2PS    Y4, Y4; \
	VBROADCASTSS (xp), Y5; \
	VBROADCASTSS 528(SP), Y6; \
	VMULPS       Y6, Y5, Y6; \
	VFMADD231PS  Y6, Y4, acc; \
	VMOVDQU      260(xp), Y6; \
	VEXTRACTI128 $1, Y6, X7; \
	VPHADDW      X7, X6, X6; \
	VPMADDWD     512(SP), X6, X6; \
	VPSHUFD      $0x4e, X6, X7; \
	VPADDD       X7, X6, X6; \
	VPSHUFD      $0xb1, X6, X7; \
	VPADDD       X7, X6, X6; \
	VCVTDQ2PS    X6, X6; \
	VMULSS       532(SP), X5, X5; \
	VMOVSS       soff(SP), X4; \
	VFNMADD231SS X5, X6, X4; \
	VMOVSS       X4, soff(SP)

// func q5KLanesX4(w, x *byte, xstride, nb int, acc *[4][8]float32, summs *[4]float32)
// acc[i], summs[i] = the lanes and the sum of the mins of dotQ5Kx86Go over nb ≥ 1
// blocks of the weight row at w and the activation row x+i·xstride, i < 4.
TEXT ·q5KLanesX4(SB), NOSPLIT, $576-48
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    xstride+16(FP), BX
	LEAQ    (DI)(BX*1), R8
	LEAQ    (DI)(BX*2), R9
	LEAQ    (R8)(BX*2), R10
	MOVQ    nb+24(FP), CX
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	VMOVUPS X0, 536(SP)

q5kx4:
	Q5KUNPACK
	Q5KX(DI, Y0, 536)
	Q5KX(R8, Y1, 540)
	Q5KX(R9, Y2, 544)
	Q5KX(R10, Y3, 548)
	ADDQ $176, SI
	ADDQ $292, DI
	ADDQ $292, R8
	ADDQ $292, R9
	ADDQ $292, R10
	DECQ CX
	JNZ  q5kx4

	MOVQ    acc+32(FP), AX
	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VMOVUPS Y3, 96(AX)
	MOVQ    summs+40(FP), AX
	VMOVUPS 536(SP), X0
	VMOVUPS X0, (AX)
	VZEROUPPER
	RET

// func q5KLanesX1(w, x *byte, nb int, acc *[8]float32, summs *float32)
// acc, summs = the lanes and the sum of the mins of dotQ5Kx86Go over nb ≥ 1 blocks of
// the weight row at w and the activation row at x.
TEXT ·q5KLanesX1(SB), NOSPLIT, $576-40
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  Y0, Y0, Y0
	VMOVUPS X0, 536(SP)

q5kx1:
	Q5KUNPACK
	Q5KX(DI, Y0, 536)
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q5kx1

	MOVQ    acc+24(FP), AX
	VMOVUPS Y0, 0(AX)
	MOVQ    summs+32(FP), AX
	VMOVSS  536(SP), X0
	VMOVSS  X0, (AX)
	VZEROUPPER
	RET
