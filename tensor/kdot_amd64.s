#include "textflag.h"

// AVX2 kernels of the k-quant dot products: for each block they compute the exact
// integer sums the Go code computes (isum, and summs for the formats with minimums) and
// store them as int32; the Go wrappers (kdot_amd64.go) combine them in float32 exactly
// as the Go code does. All products are taken as unsigned weight levels (at most 6 bits)
// times int8 activations with VPMADDUBSW, whose pair sums stay below 2^15 (or, in the
// AVX512-VNNI kernel of Q6_K, with VPDPBUSD, which sums four products straight into
// int32), so every integer here is exact for any input bytes, and int32 sums wrap as
// Go's do.

DATA knib4<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA knib4<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA knib4<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA knib4<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL knib4<>(SB), RODATA|NOPTR, $32

DATA kbit4<>+0(SB)/8, $0x1010101010101010
DATA kbit4<>+8(SB)/8, $0x1010101010101010
DATA kbit4<>+16(SB)/8, $0x1010101010101010
DATA kbit4<>+24(SB)/8, $0x1010101010101010
GLOBL kbit4<>(SB), RODATA|NOPTR, $32

DATA kbits45<>+0(SB)/8, $0x3030303030303030
DATA kbits45<>+8(SB)/8, $0x3030303030303030
DATA kbits45<>+16(SB)/8, $0x3030303030303030
DATA kbits45<>+24(SB)/8, $0x3030303030303030
GLOBL kbits45<>(SB), RODATA|NOPTR, $32

// kscale16 holds, for i < 8, a VPSHUFB pattern taking byte 2i into bytes 0-7 and byte
// 2i+1 into bytes 8-15 (llama.cpp's get_scale_shuffle).
DATA kscale16<>+0(SB)/8, $0x0000000000000000
DATA kscale16<>+8(SB)/8, $0x0101010101010101
DATA kscale16<>+16(SB)/8, $0x0202020202020202
DATA kscale16<>+24(SB)/8, $0x0303030303030303
DATA kscale16<>+32(SB)/8, $0x0404040404040404
DATA kscale16<>+40(SB)/8, $0x0505050505050505
DATA kscale16<>+48(SB)/8, $0x0606060606060606
DATA kscale16<>+56(SB)/8, $0x0707070707070707
DATA kscale16<>+64(SB)/8, $0x0808080808080808
DATA kscale16<>+72(SB)/8, $0x0909090909090909
DATA kscale16<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA kscale16<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA kscale16<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA kscale16<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA kscale16<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA kscale16<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL kscale16<>(SB), RODATA|NOPTR, $128

// SCALEMINK4 decodes the packed 6-bit scales and mins at 4(SI) of a Q4_K/Q5_K block
// (get_scale_min_k4 for all eight at once, llama.cpp's utmp shuffle): the scales as
// eight int16 at 0(SP), the mins, each twice, as sixteen int16 in Y13.
#define SCALEMINK4 \
	MOVL        4(SI), AX; \
	MOVL        8(SI), BX; \
	MOVL        12(SI), DX; \
	MOVL        AX, R9; \
	ANDL        $0x3f3f3f3f, R9; \
	MOVL        DX, R10; \
	ANDL        $0x0f0f0f0f, R10; \
	SHRL        $6, AX; \
	ANDL        $0x03030303, AX; \
	SHLL        $4, AX; \
	ORL         AX, R10; \
	SHLQ        $32, R10; \
	ORQ         R10, R9; \
	MOVL        BX, R11; \
	ANDL        $0x3f3f3f3f, R11; \
	SHRL        $4, DX; \
	ANDL        $0x0f0f0f0f, DX; \
	SHRL        $6, BX; \
	ANDL        $0x03030303, BX; \
	SHLL        $4, BX; \
	ORL         BX, DX; \
	SHLQ        $32, DX; \
	ORQ         DX, R11; \
	VMOVQ       R9, X12; \
	VPMOVZXBW   X12, X12; \
	VMOVDQU     X12, 0(SP); \
	VMOVQ       R11, X13; \
	VPMOVZXBW   X13, X13; \
	VPUNPCKHWD  X13, X13, X12; \
	VPUNPCKLWD  X13, X13, X13; \
	VINSERTI128 $1, X12, Y13, Y13

// STORESUMS2 stores the int32 totals of the lanes of Y0 and of Y13 at 0(R8) and 4(R8).
// Y0, Y1 are clobbered.
#define STORESUMS2 \
	VPHADDD      Y13, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD       X1, X0, X0; \
	VPHADDD      X0, X0, X0; \
	VMOVQ        X0, 0(R8)

// Q4KSUB adds to Y0 the scaled sums of the two sub-blocks 2c, 2c+1 of a Q4_K block:
// the 32 bytes at 16+32c(SI), low nibbles against the activations at 4+64c(DI), high
// ones against those at 36+64c(DI). Needs Y15 = knib4; Y1..Y3 are clobbered.
#define Q4KSUB(c) \
	VMOVDQU      (16+32*c)(SI), Y1; \
	VPSRLW       $4, Y1, Y2; \
	VPAND        Y15, Y1, Y1; \
	VPAND        Y15, Y2, Y2; \
	VPMADDUBSW   (4+64*c)(DI), Y1, Y1; \
	VPMADDUBSW   (36+64*c)(DI), Y2, Y2; \
	VPBROADCASTW (4*c)(SP), Y3; \
	VPMADDWD     Y3, Y1, Y1; \
	VPBROADCASTW (4*c+2)(SP), Y3; \
	VPMADDWD     Y3, Y2, Y2; \
	VPADDD       Y1, Y0, Y0; \
	VPADDD       Y2, Y0, Y0

// func q4KSumsAVX2(w, x *byte, nb int, out *int32)
// Stores isum and summs of dotQ4KGo for each of nb blocks at out[2i], out[2i+1].
TEXT ·q4KSumsAVX2(SB), NOSPLIT, $16-32
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    out+24(FP), R8
	TESTQ   CX, CX
	JZ      q4kdone
	VMOVDQU knib4<>(SB), Y15

q4kloop:
	SCALEMINK4
	VPMADDWD 260(DI), Y13, Y13 // bsums·mins
	VPXOR    Y0, Y0, Y0
	Q4KSUB(0)
	Q4KSUB(1)
	Q4KSUB(2)
	Q4KSUB(3)
	STORESUMS2
	ADDQ     $144, SI
	ADDQ     $292, DI
	ADDQ     $8, R8
	DECQ     CX
	JNZ      q4kloop

q4kdone:
	VZEROUPPER
	RET

// Q5KSUB is Q4KSUB for Q5_K (quants at 48+32c(SI)), with the fifth bits: bits 0 and 1
// of the bytes of Y14 (the 32 qh bytes shifted right by 2c) moved to bit 4. Needs
// Y15 = knib4, Y11 = kbit4; Y1..Y3 are clobbered and Y14 is shifted on by 2.
#define Q5KSUB(c) \
	VMOVDQU      (48+32*c)(SI), Y1; \
	VPSRLW       $4, Y1, Y2; \
	VPAND        Y15, Y1, Y1; \
	VPAND        Y15, Y2, Y2; \
	VPSLLW       $4, Y14, Y3; \
	VPAND        Y11, Y3, Y3; \
	VPOR         Y3, Y1, Y1; \
	VPSLLW       $3, Y14, Y3; \
	VPAND        Y11, Y3, Y3; \
	VPOR         Y3, Y2, Y2; \
	VPSRLW       $2, Y14, Y14; \
	VPMADDUBSW   (4+64*c)(DI), Y1, Y1; \
	VPMADDUBSW   (36+64*c)(DI), Y2, Y2; \
	VPBROADCASTW (4*c)(SP), Y3; \
	VPMADDWD     Y3, Y1, Y1; \
	VPBROADCASTW (4*c+2)(SP), Y3; \
	VPMADDWD     Y3, Y2, Y2; \
	VPADDD       Y1, Y0, Y0; \
	VPADDD       Y2, Y0, Y0

// func q5KSumsAVX2(w, x *byte, nb int, out *int32)
// Stores isum and summs of dotQ5KGo for each of nb blocks at out[2i], out[2i+1].
TEXT ·q5KSumsAVX2(SB), NOSPLIT, $16-32
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    out+24(FP), R8
	TESTQ   CX, CX
	JZ      q5kdone
	VMOVDQU knib4<>(SB), Y15
	VMOVDQU kbit4<>(SB), Y11

q5kloop:
	SCALEMINK4
	VPMADDWD 260(DI), Y13, Y13 // bsums·mins
	VMOVDQU  16(SI), Y14
	VPXOR    Y0, Y0, Y0
	Q5KSUB(0)
	Q5KSUB(1)
	Q5KSUB(2)
	Q5KSUB(3)
	STORESUMS2
	ADDQ     $176, SI
	ADDQ     $292, DI
	ADDQ     $8, R8
	DECQ     CX
	JNZ      q5kloop

q5kdone:
	VZEROUPPER
	RET

// Q6KPART adds to Y0 the scaled sums of bit field k (sub-blocks 2k, 2k+1 of the half)
// of a Q6_K half h (k here counting on from 4h): Y1 holds the levels+32 (0..63) of its
// 32 elements, against the activations at q8off(DI); X14 holds the 16 int8 scales of
// the block. Y1, Y2 are clobbered.
#define Q6KPART(k, q8off) \
	VPMADDUBSW (q8off)(DI), Y1, Y1; \
	VPSHUFB    kscale16<>+(16*(k))(SB), X14, X2; \
	VPMOVSXBW  X2, Y2; \
	VPMADDWD   Y2, Y1, Y1; \
	VPADDD     Y1, Y0, Y0

// Q6KHALF adds to Y0 the scaled sums of half h of a Q6_K block, X14 holding all 16
// scales. Needs Y15 = knib4, Y12 = kbits45; Y1..Y5 are clobbered.
#define Q6KHALF(h) \
	VMOVDQU (64*h)(SI), Y4; \
	VMOVDQU (64*h+32)(SI), Y5; \
	VMOVDQU (128+32*h)(SI), Y3; \
	VPAND   Y15, Y4, Y1; \
	VPSLLW  $4, Y3, Y2; \
	VPAND   Y12, Y2, Y2; \
	VPOR    Y2, Y1, Y1; \
	Q6KPART(4*h, 4+128*h); \
	VPAND   Y15, Y5, Y1; \
	VPSLLW  $2, Y3, Y2; \
	VPAND   Y12, Y2, Y2; \
	VPOR    Y2, Y1, Y1; \
	Q6KPART(4*h+1, 36+128*h); \
	VPSRLW  $4, Y4, Y1; \
	VPAND   Y15, Y1, Y1; \
	VPAND   Y12, Y3, Y2; \
	VPOR    Y2, Y1, Y1; \
	Q6KPART(4*h+2, 68+128*h); \
	VPSRLW  $4, Y5, Y1; \
	VPAND   Y15, Y1, Y1; \
	VPSRLW  $2, Y3, Y2; \
	VPAND   Y12, Y2, Y2; \
	VPOR    Y2, Y1, Y1; \
	Q6KPART(4*h+3, 100+128*h)

// func q6KSumsAVX2(w, x *byte, nb int, out *int32)
// Stores isum of dotQ6KGo for each of nb blocks at out[i]: Σ sc·Σ q8·(level+32) over
// the 16 sub-blocks, less 32·Σ sc·bsums.
TEXT ·q6KSumsAVX2(SB), NOSPLIT, $0-32
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    out+24(FP), R8
	TESTQ   CX, CX
	JZ      q6kdone
	VMOVDQU knib4<>(SB), Y15
	VMOVDQU kbits45<>(SB), Y12

q6kloop:
	VMOVDQU   192(SI), X14
	VPMOVSXBW X14, Y13
	VPMADDWD  260(DI), Y13, Y13 // sc·bsums
	VPSLLD    $5, Y13, Y13
	VPXOR     Y0, Y0, Y0
	Q6KHALF(0)
	Q6KHALF(1)
	VPSUBD       Y13, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPHADDD      X0, X0, X0
	VPHADDD      X0, X0, X0
	VMOVD        X0, 0(R8)
	ADDQ         $210, SI
	ADDQ         $292, DI
	ADDQ         $4, R8
	DECQ         CX
	JNZ          q6kloop

q6kdone:
	VZEROUPPER
	RET

DATA kcrumb<>+0(SB)/8, $0x0303030303030303
DATA kcrumb<>+8(SB)/8, $0x0303030303030303
DATA kcrumb<>+16(SB)/8, $0x0303030303030303
DATA kcrumb<>+24(SB)/8, $0x0303030303030303
GLOBL kcrumb<>(SB), RODATA|NOPTR, $32

DATA kbit2<>+0(SB)/8, $0x0404040404040404
DATA kbit2<>+8(SB)/8, $0x0404040404040404
DATA kbit2<>+16(SB)/8, $0x0404040404040404
DATA kbit2<>+24(SB)/8, $0x0404040404040404
GLOBL kbit2<>(SB), RODATA|NOPTR, $32

DATA k32<>+0(SB)/8, $0x2020202020202020
DATA k32<>+8(SB)/8, $0x2020202020202020
GLOBL k32<>(SB), RODATA|NOPTR, $16

// Q2KPART adds to Y0 the scaled sums of the crumbs 2k..2k+1 of the 32 bytes in Y4 (half
// h of a Q2_K block), sub-blocks 8h+2k and 8h+2k+1, against the activations at
// 4+128h+32k(DI). X14 holds the 16 scales (0..15). Needs Y15 = kcrumb; Y1, Y2 are
// clobbered.
#define Q2KPART(h, k) \
	VPSRLW     $(2*(k)), Y4, Y1; \
	VPAND      Y15, Y1, Y1; \
	VPMADDUBSW (4+128*(h)+32*(k))(DI), Y1, Y1; \
	VPSHUFB    kscale16<>+(16*(4*(h)+(k)))(SB), X14, X2; \
	VPMOVZXBW  X2, Y2; \
	VPMADDWD   Y2, Y1, Y1; \
	VPADDD     Y1, Y0, Y0

#define Q2KHALF(h) \
	VMOVDQU (16+32*(h))(SI), Y4; \
	Q2KPART(h, 0); \
	Q2KPART(h, 1); \
	Q2KPART(h, 2); \
	Q2KPART(h, 3)

// func q2KSumsAVX2(w, x *byte, nb int, out *int32)
// Stores isum and summs of dotQ2KGo for each of nb blocks at out[2i], out[2i+1].
TEXT ·q2KSumsAVX2(SB), NOSPLIT, $0-32
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    out+24(FP), R8
	TESTQ   CX, CX
	JZ      q2kdone
	VMOVDQU kcrumb<>(SB), Y15
	VMOVDQU knib4<>(SB), X12

q2kloop:
	VMOVDQU   0(SI), X13
	VPAND     X12, X13, X14 // scales
	VPSRLW    $4, X13, X13
	VPAND     X12, X13, X13 // mins
	VPMOVZXBW X13, Y13
	VPMADDWD  260(DI), Y13, Y13 // bsums·mins
	VPXOR     Y0, Y0, Y0
	Q2KHALF(0)
	Q2KHALF(1)
	STORESUMS2
	ADDQ      $84, SI
	ADDQ      $292, DI
	ADDQ      $8, R8
	DECQ      CX
	JNZ       q2kloop

q2kdone:
	VZEROUPPER
	RET

// Q3KPART adds to Y0 the scaled sums of bit field k of half h of a Q3_K block: u =
// crumb k of the 32 bytes in Y4 | bit 4h+k of the hmask bytes (bit 0 of Y5, which is
// shifted on by one) << 2, against the activations at 4+128h+32k(DI). X14 holds the 16
// scales less 32 (int8). Needs Y15 = kcrumb, Y11 = kbit2; Y1, Y2 are clobbered.
#define Q3KPART(h, k) \
	VPSRLW     $(2*(k)), Y4, Y1; \
	VPAND      Y15, Y1, Y1; \
	VPSLLW     $2, Y5, Y2; \
	VPAND      Y11, Y2, Y2; \
	VPOR       Y2, Y1, Y1; \
	VPSRLW     $1, Y5, Y5; \
	VPMADDUBSW (4+128*(h)+32*(k))(DI), Y1, Y1; \
	VPSHUFB    kscale16<>+(16*(4*(h)+(k)))(SB), X14, X2; \
	VPMOVSXBW  X2, Y2; \
	VPMADDWD   Y2, Y1, Y1; \
	VPADDD     Y1, Y0, Y0

#define Q3KHALF(h) \
	VMOVDQU (32+32*(h))(SI), Y4; \
	Q3KPART(h, 0); \
	Q3KPART(h, 1); \
	Q3KPART(h, 2); \
	Q3KPART(h, 3)

// func q3KSumsAVX2(w, x *byte, nb int, out *int32)
// Stores isum of dotQ3KGo for each of nb blocks at out[i]: Σ (sc−32)·Σ q8·u over the 16
// sub-blocks, less 4·Σ (sc−32)·bsums.
TEXT ·q3KSumsAVX2(SB), NOSPLIT, $0-32
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    out+24(FP), R8
	TESTQ   CX, CX
	JZ      q3kdone
	VMOVDQU kcrumb<>(SB), Y15
	VMOVDQU kbit2<>(SB), Y11

q3kloop:
	// The 6-bit scales (q3KScale for j = 0..15), as llama.cpp unpacks them.
	MOVL    96(SI), AX  // aux0
	MOVL    100(SI), BX // aux1
	MOVL    104(SI), DX // aux2
	MOVL    AX, R9
	ANDL    $0x0f0f0f0f, R9
	MOVL    DX, R10
	ANDL    $0x03030303, R10
	SHLL    $4, R10
	ORL     R10, R9     // scales 0-3
	MOVL    BX, R10
	ANDL    $0x0f0f0f0f, R10
	MOVL    DX, R11
	SHRL    $2, R11
	ANDL    $0x03030303, R11
	SHLL    $4, R11
	ORL     R11, R10    // scales 4-7
	SHLQ    $32, R10
	ORQ     R10, R9
	SHRL    $4, AX
	ANDL    $0x0f0f0f0f, AX
	MOVL    DX, R11
	SHRL    $4, R11
	ANDL    $0x03030303, R11
	SHLL    $4, R11
	ORL     R11, AX     // scales 8-11
	SHRL    $4, BX
	ANDL    $0x0f0f0f0f, BX
	SHRL    $6, DX
	ANDL    $0x03030303, DX
	SHLL    $4, DX
	ORL     DX, BX      // scales 12-15
	SHLQ    $32, BX
	ORQ     BX, AX
	VMOVQ   R9, X14
	VPINSRQ $1, AX, X14, X14
	VPSUBB  k32<>(SB), X14, X14

	VPMOVSXBW X14, Y13
	VPMADDWD  260(DI), Y13, Y13 // (sc-32)·bsums
	VPSLLD    $2, Y13, Y13
	VMOVDQU   0(SI), Y5
	VPXOR     Y0, Y0, Y0
	Q3KHALF(0)
	Q3KHALF(1)
	VPSUBD       Y13, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPHADDD      X0, X0, X0
	VPHADDD      X0, X0, X0
	VMOVD        X0, 0(R8)
	ADDQ         $110, SI
	ADDQ         $292, DI
	ADDQ         $4, R8
	DECQ         CX
	JNZ          q3kloop

q3kdone:
	VZEROUPPER
	RET

// kq6order: VPSHUFB pattern putting the scales of the even sub-blocks of each half before
// the odd ones, the order q6KSumsVNNI leaves the sub-block sums in.
DATA kq6order<>+0(SB)/8, $0x0705030106040200
DATA kq6order<>+8(SB)/8, $0x0f0d0b090e0c0a08
GLOBL kq6order<>(SB), RODATA|NOPTR, $16

// Q6KVNNI puts in Y the partial sums of bit field k of half h of a Q6_K block (lanes 0-3:
// sub-block 8h+2k, lanes 4-7: 8h+2k+1) against the activations at 4+128h+32k(DI): the
// levels+32 are the nibbles at bits 0-3 of Ylo or'ed with the top bits at bits 4-5 of
// Ytop (the qh bytes, shifted by the caller). Needs Y15 = knib4, Y12 = kbits45; Y11 is
// clobbered and Ytop masked.
#define Q6KVNNI(h, k, Ylo, Ytop, Y) \
	VPAND    Y15, Ylo, Y11; \
	VPAND    Y12, Ytop, Ytop; \
	VPOR     Ytop, Y11, Y11; \
	VPXOR    Y, Y, Y; \
	VPDPBUSD (4+128*(h)+32*(k))(DI), Y11, Y

// Q6KVHALF puts in Y0..Y3 (h = 0) or Y4..Y7 (h = 1) the partial sums of the four bit
// fields of half h. Needs Y15 = knib4, Y12 = kbits45; Y8..Y11, Y14 are clobbered.
#define Q6KVHALF(h, Ya, Yb, Yc, Yd) \
	VMOVDQU (64*(h))(SI), Y8; \
	VMOVDQU (64*(h)+32)(SI), Y9; \
	VMOVDQU (128+32*(h))(SI), Y10; \
	VPSLLW  $4, Y10, Y14; \
	Q6KVNNI(h, 0, Y8, Y14, Ya); \
	VPSLLW  $2, Y10, Y14; \
	Q6KVNNI(h, 1, Y9, Y14, Yb); \
	VPSRLW  $4, Y8, Y8; \
	VMOVDQA Y10, Y14; \
	Q6KVNNI(h, 2, Y8, Y14, Yc); \
	VPSRLW  $4, Y9, Y9; \
	VPSRLW  $2, Y10, Y14; \
	Q6KVNNI(h, 3, Y9, Y14, Yd)

// func q6KSumsVNNI(w, x *byte, nb int, out *int32)
// q6KSumsAVX2 with AVX512-VNNI: the sixteen sub-block sums are reduced together and then
// multiplied by their scales (VPMULLD keeps the low 32 bits, as Go's int32 product).
TEXT ·q6KSumsVNNI(SB), NOSPLIT, $0-32
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVQ    out+24(FP), R8
	TESTQ   CX, CX
	JZ      q6kvdone
	VMOVDQU knib4<>(SB), Y15
	VMOVDQU kbits45<>(SB), Y12

q6kvloop:
	Q6KVHALF(0, Y0, Y1, Y2, Y3)
	Q6KVHALF(1, Y4, Y5, Y6, Y7)
	// Per half, lanes 0-3 hold the even sub-blocks 0, 2, 4, 6 (of the half), lanes 4-7
	// the odd ones.
	VPHADDD   Y1, Y0, Y0
	VPHADDD   Y3, Y2, Y2
	VPHADDD   Y2, Y0, Y0
	VPHADDD   Y5, Y4, Y4
	VPHADDD   Y7, Y6, Y6
	VPHADDD   Y6, Y4, Y4
	VMOVDQU   192(SI), X14
	VPMOVSXBW X14, Y13
	VPMADDWD  260(DI), Y13, Y13 // sc·bsums
	VPSLLD    $5, Y13, Y13
	VPSHUFB   kq6order<>(SB), X14, X14
	VPMOVSXBD X14, Y1
	VPMULLD   Y1, Y0, Y0
	VPSHUFD   $0x4e, X14, X14
	VPMOVSXBD X14, Y1
	VPMULLD   Y1, Y4, Y4
	VPADDD    Y4, Y0, Y0
	VPSUBD       Y13, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPHADDD      X0, X0, X0
	VPHADDD      X0, X0, X0
	VMOVD        X0, 0(R8)
	ADDQ         $210, SI
	ADDQ         $292, DI
	ADDQ         $4, R8
	DECQ         CX
	JNZ          q6kvloop

q6kvdone:
	VZEROUPPER
	RET
