#include "textflag.h"

// AVX2 kernels (no AVX-512) of the repacked Q4_K orders, eight weight rows at a time,
// one per float32 lane, against one Q8_K activation row: dotQ4KRepackGo's (the gemv:
// per block isum = Σ sc·Σq·q8 and summs = Σ m·bsums, one FMA each) and
// dotQ4KRepackGemmGo's (the gemm: the same per pair of sub-blocks, four FMAs each).
//
// Per weight row and block, the 6-bit scales and mins are unpacked as llama.cpp's
// AVX2 code does (32-bit masks), the nibbles of each 32-byte pair c go through
// VPMADDUBSW against the activations and VPMADDWD with the sub-block scale broadcast
// to every word, which leaves eight exact int32 partial sums of the pair; the mins
// part is one VPMADDWD of the mins against the bsums added in pairs. The partial sums
// of the eight rows (stored on the stack) are then added up by a VPHADDD tree into
// one lane per row, and the float32 operations are the Go code's, lane for lane.

DATA q4knib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4knib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4knib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4knib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q4knib<>(SB), RODATA|NOPTR, $32

// q4kbcast: VPSHUFB controls, 32 bytes each, broadcasting word j to every word.
DATA q4kbcast<>+0(SB)/8, $0x0100010001000100
DATA q4kbcast<>+8(SB)/8, $0x0100010001000100
DATA q4kbcast<>+16(SB)/8, $0x0100010001000100
DATA q4kbcast<>+24(SB)/8, $0x0100010001000100
DATA q4kbcast<>+32(SB)/8, $0x0302030203020302
DATA q4kbcast<>+40(SB)/8, $0x0302030203020302
DATA q4kbcast<>+48(SB)/8, $0x0302030203020302
DATA q4kbcast<>+56(SB)/8, $0x0302030203020302
DATA q4kbcast<>+64(SB)/8, $0x0504050405040504
DATA q4kbcast<>+72(SB)/8, $0x0504050405040504
DATA q4kbcast<>+80(SB)/8, $0x0504050405040504
DATA q4kbcast<>+88(SB)/8, $0x0504050405040504
DATA q4kbcast<>+96(SB)/8, $0x0706070607060706
DATA q4kbcast<>+104(SB)/8, $0x0706070607060706
DATA q4kbcast<>+112(SB)/8, $0x0706070607060706
DATA q4kbcast<>+120(SB)/8, $0x0706070607060706
DATA q4kbcast<>+128(SB)/8, $0x0908090809080908
DATA q4kbcast<>+136(SB)/8, $0x0908090809080908
DATA q4kbcast<>+144(SB)/8, $0x0908090809080908
DATA q4kbcast<>+152(SB)/8, $0x0908090809080908
DATA q4kbcast<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kbcast<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kbcast<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kbcast<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kbcast<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kbcast<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kbcast<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kbcast<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kbcast<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kbcast<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kbcast<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kbcast<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q4kbcast<>(SB), RODATA|NOPTR, $256

// q4kdsep: VPSHUFB control gathering the low words of four dwords, then the high ones.
DATA q4kdsep<>+0(SB)/8, $0x0d0c090805040100
DATA q4kdsep<>+8(SB)/8, $0x0f0e0b0a07060302
GLOBL q4kdsep<>(SB), RODATA|NOPTR, $16

// Q4KSCALES unpacks the scales and mins of the block at (AX): Y8 = the eight scales
// as words in both 128-bit lanes, X9 = Σ m·B' in pairs (4 dwords; X10 holds the
// bsums B' = bsums[2j]+bsums[2j+1] as words). R11..R14 and DX are clobbered.
#define Q4KSCALES \
	MOVL      4(AX), R11; \
	MOVL      8(AX), R12; \
	MOVL      12(AX), R13; \
	MOVL      R13, R14; \
	SHRL      $4, R14; \
	ANDL      $0x0f0f0f0f, R14; \
	MOVL      R12, DX; \
	SHRL      $6, DX; \
	ANDL      $0x03030303, DX; \
	SHLL      $4, DX; \
	ORL       DX, R14; \
	ANDL      $0x0f0f0f0f, R13; \
	MOVL      R11, DX; \
	SHRL      $6, DX; \
	ANDL      $0x03030303, DX; \
	SHLL      $4, DX; \
	ORL       DX, R13; \
	ANDL      $0x3f3f3f3f, R12; \
	ANDL      $0x3f3f3f3f, R11; \
	VMOVD     R11, X8; \
	VPINSRD   $1, R13, X8, X8; \
	VPINSRD   $2, R12, X8, X8; \
	VPINSRD   $3, R14, X8, X8; \
	VPMOVZXBW X8, Y8; \
	VEXTRACTI128 $1, Y8, X9; \
	VPMADDWD  X10, X9, X9; \
	VPERMQ    $0x44, Y8, Y8

// Q4KPAIR leaves in v the eight int32 partial sums of pair c (sub-blocks 2c, 2c+1) of
// the block at (AX) against the activations at (DI): qoff = 16+32c, xoff = 4+64c,
// s0/s1 = the broadcast controls of scales 2c, 2c+1. Y13..Y15 are clobbered.
#define Q4KPAIR(qoff, xoff, s0, s1, v) \
	VMOVDQU    qoff(AX), Y13; \
	VPSRLW     $4, Y13, Y14; \
	VPAND      q4knib<>(SB), Y14, Y14; \
	VPAND      q4knib<>(SB), Y13, Y13; \
	VPMADDUBSW xoff(DI), Y13, Y13; \
	VPMADDUBSW xoff+32(DI), Y14, Y14; \
	VPSHUFB    q4kbcast<>+s0(SB), Y8, Y15; \
	VPMADDWD   Y15, Y13, Y13; \
	VPSHUFB    q4kbcast<>+s1(SB), Y8, Y15; \
	VPMADDWD   Y15, Y14, Y14; \
	VPADDD     Y14, Y13, v

// Q4KGEMVROW stores at off(SP) the 32 bytes [isum partials (4 dwords) | summs
// partials (4 dwords)] of the block at (AX).
#define Q4KGEMVROW(off) \
	Q4KSCALES; \
	Q4KPAIR(16, 4, 0, 32, Y4); \
	Q4KPAIR(48, 68, 64, 96, Y5); \
	VPADDD Y5, Y4, Y4; \
	Q4KPAIR(80, 132, 128, 160, Y5); \
	VPADDD Y5, Y4, Y4; \
	Q4KPAIR(112, 196, 192, 224, Y5); \
	VPADDD Y5, Y4, Y4; \
	VEXTRACTI128 $1, Y4, X5; \
	VPADDD X5, X4, X4; \
	VINSERTI128 $1, X9, Y4, Y4; \
	VMOVDQU Y4, off(SP)

// Q4KGEMMROW stores at off(SP) [pair 0 | pair 1] and at off+32(SP) [pair 2 | pair 3],
// each the four partial sums of the pair, and at 512+off/4(SP) the four summs of the
// pairs (16 bytes), of the block at (AX).
#define Q4KGEMMROW(off, moff) \
	Q4KSCALES; \
	Q4KPAIR(16, 4, 0, 32, Y4); \
	Q4KPAIR(48, 68, 64, 96, Y5); \
	Q4KPAIR(80, 132, 128, 160, Y6); \
	Q4KPAIR(112, 196, 192, 224, Y7); \
	VPERM2I128 $0x20, Y5, Y4, Y13; \
	VPERM2I128 $0x31, Y5, Y4, Y14; \
	VPADDD     Y14, Y13, Y13; \
	VMOVDQU    Y13, off(SP); \
	VPERM2I128 $0x20, Y7, Y6, Y13; \
	VPERM2I128 $0x31, Y7, Y6, Y14; \
	VPADDD     Y14, Y13, Y13; \
	VMOVDQU    Y13, off+32(SP); \
	VMOVDQU    X9, moff(SP)

// Q4KBSUMS puts the bsums B'_j of the activation block at (DI) in X10 as words.
#define Q4KBSUMS \
	VMOVDQU      260(DI), Y10; \
	VEXTRACTI128 $1, Y10, X11; \
	VPHADDW      X11, X10, X10

// Q4KD puts d·d8 of the eight rows in Y4 and dmin·d8 in Y5 (X6, X7 clobbered).
#define Q4KD \
	VMOVD        (SI), X6; \
	VPINSRD      $1, (SI)(BX*1), X6, X6; \
	VPINSRD      $2, (SI)(BX*2), X6, X6; \
	VPINSRD      $3, (SI)(R9*1), X6, X6; \
	VMOVD        (R10), X7; \
	VPINSRD      $1, (R10)(BX*1), X7, X7; \
	VPINSRD      $2, (R10)(BX*2), X7, X7; \
	VPINSRD      $3, (R10)(R9*1), X7, X7; \
	VPSHUFB      q4kdsep<>(SB), X6, X6; \
	VPSHUFB      q4kdsep<>(SB), X7, X7; \
	VPUNPCKLQDQ  X7, X6, X4; \
	VPUNPCKHQDQ  X7, X6, X5; \
	VCVTPH2PS    X4, Y4; \
	VCVTPH2PS    X5, Y5; \
	VBROADCASTSS (DI), Y6; \
	VMULPS       Y6, Y4, Y4; \
	VMULPS       Y6, Y5, Y5

// TREE8 adds up the eight 32-byte rows at off(SP), stride st, by VPHADDD: Y4 = [rows
// 0-3 of the low lanes' sums | rows 0-3 of the high lanes'] and Y5 the same of rows
// 4-7 (Y6 clobbered).
#define TREE8(off, st) \
	VMOVDQU off(SP), Y4; \
	VPHADDD off+st(SP), Y4, Y4; \
	VMOVDQU off+2*st(SP), Y6; \
	VPHADDD off+3*st(SP), Y6, Y6; \
	VPHADDD Y6, Y4, Y4; \
	VMOVDQU off+4*st(SP), Y5; \
	VPHADDD off+5*st(SP), Y5, Y5; \
	VMOVDQU off+6*st(SP), Y6; \
	VPHADDD off+7*st(SP), Y6, Y6; \
	VPHADDD Y6, Y5, Y5

// ROWS8(m) runs the row macro m for the eight rows (AX = each row's block).
#define ROWS8(m, st) \
	MOVQ SI, AX; \
	m(0*st, 512+0); \
	LEAQ (SI)(BX*1), AX; \
	m(1*st, 512+16); \
	LEAQ (SI)(BX*2), AX; \
	m(2*st, 512+32); \
	LEAQ (SI)(R9*1), AX; \
	m(3*st, 512+48); \
	MOVQ R10, AX; \
	m(4*st, 512+64); \
	LEAQ (R10)(BX*1), AX; \
	m(5*st, 512+80); \
	LEAQ (R10)(BX*2), AX; \
	m(6*st, 512+96); \
	LEAQ (R10)(R9*1), AX; \
	m(7*st, 512+112)

#define GEMVROW(off, moff) Q4KGEMVROW(off)

// The gemm kernel for four activation rows: per weight row and block, the scales,
// mins and nibbles are unpacked once and used for the four rows; the partial sums go
// to the stack as in q4KGemmR8X1, 640 bytes per activation row (at 640i: [pair 0 |
// pair 1], [pair 2 | pair 3] of each weight row, 64 bytes a row, then 16 bytes of summs
// per weight row at 640i+512); the bsums B' of the four activation rows at 2560+16i, D
// and DM (f32, without d8) at 2624 and 2656, and the accumulators acc, accm of row i
// at 2688+64i.

// XROW puts the address of activation row i (DI, stride R8) in DX.
#define XROW0 MOVQ DI, DX
#define XROW1 LEAQ (DI)(R8*1), DX
#define XROW2 LEAQ (DI)(R8*2), DX
#define XROW3 LEAQ (DX)(R8*1), DX

// Q4KBP stores the bsums B' of the activation block at (DX) at off(SP).
#define Q4KBP(off) \
	VMOVDQU      260(DX), Y10; \
	VEXTRACTI128 $1, Y10, X11; \
	VPHADDW      X11, X10, X10; \
	VMOVDQU      X10, off(SP)

// Q4KUNPACK4 unpacks the scales of the block at (AX): Y8 = the scales as words in both
// lanes, X9 = the mins as words. R11..R14, DX are clobbered.
#define Q4KUNPACK4 \
	MOVL      4(AX), R11; \
	MOVL      8(AX), R12; \
	MOVL      12(AX), R13; \
	MOVL      R13, R14; \
	SHRL      $4, R14; \
	ANDL      $0x0f0f0f0f, R14; \
	MOVL      R12, DX; \
	SHRL      $6, DX; \
	ANDL      $0x03030303, DX; \
	SHLL      $4, DX; \
	ORL       DX, R14; \
	ANDL      $0x0f0f0f0f, R13; \
	MOVL      R11, DX; \
	SHRL      $6, DX; \
	ANDL      $0x03030303, DX; \
	SHLL      $4, DX; \
	ORL       DX, R13; \
	ANDL      $0x3f3f3f3f, R12; \
	ANDL      $0x3f3f3f3f, R11; \
	VMOVD     R11, X8; \
	VPINSRD   $1, R13, X8, X8; \
	VPINSRD   $2, R12, X8, X8; \
	VPINSRD   $3, R14, X8, X8; \
	VPMOVZXBW X8, Y8; \
	VEXTRACTI128 $1, Y8, X9; \
	VPERMQ    $0x44, Y8, Y8

// Q4KMINS4 stores the summs of the four pairs of the current weight row (mins X9)
// against activation row i at off(SP) (the row's B' at boff(SP)).
#define Q4KMINS4(boff, off) \
	VPMADDWD boff(SP), X9, X12; \
	VMOVDQU  X12, off(SP)

// Q4KPS loads pairs c0, c1 of the block at (AX): nibbles Y0 (low, c0), Y1 (high, c0),
// Y2, Y3 (c1), and the broadcast scales Y4..Y7 (2c0, 2c0+1, 2c1, 2c1+1).
#define Q4KPS(q0, q1, s0, s1, s2, s3) \
	VMOVDQU q0(AX), Y0; \
	VPSRLW  $4, Y0, Y1; \
	VPAND   q4knib<>(SB), Y1, Y1; \
	VPAND   q4knib<>(SB), Y0, Y0; \
	VMOVDQU q1(AX), Y2; \
	VPSRLW  $4, Y2, Y3; \
	VPAND   q4knib<>(SB), Y3, Y3; \
	VPAND   q4knib<>(SB), Y2, Y2; \
	VPSHUFB q4kbcast<>+s0(SB), Y8, Y4; \
	VPSHUFB q4kbcast<>+s1(SB), Y8, Y5; \
	VPSHUFB q4kbcast<>+s2(SB), Y8, Y6; \
	VPSHUFB q4kbcast<>+s3(SB), Y8, Y7

// Q4KPSX stores at off(SP) [pair c0 | pair c1] (four partial sums each) of the loaded
// pairs against the activation row at (DX) (x0, x1: offsets of the pairs' quants).
#define Q4KPSX(x0, x1, off) \
	VPMADDUBSW x0(DX), Y0, Y10; \
	VPMADDUBSW x0+32(DX), Y1, Y12; \
	VPMADDWD   Y4, Y10, Y10; \
	VPMADDWD   Y5, Y12, Y12; \
	VPADDD     Y12, Y10, Y10; \
	VPMADDUBSW x1(DX), Y2, Y11; \
	VPMADDUBSW x1+32(DX), Y3, Y12; \
	VPMADDWD   Y6, Y11, Y11; \
	VPMADDWD   Y7, Y12, Y12; \
	VPADDD     Y12, Y11, Y11; \
	VPERM2I128 $0x20, Y11, Y10, Y12; \
	VPERM2I128 $0x31, Y11, Y10, Y13; \
	VPADDD     Y13, Y12, Y12; \
	VMOVDQU    Y12, off(SP)

// Q4KROW4 processes the weight row at (AX) (row slot r64 = 64·r, mins slot r16 = 16·r)
// against the four activation rows.
#define Q4KROW4(r64, r16) \
	Q4KUNPACK4; \
	Q4KMINS4(2560, 512+r16); \
	Q4KMINS4(2576, 640+512+r16); \
	Q4KMINS4(2592, 1280+512+r16); \
	Q4KMINS4(2608, 1920+512+r16); \
	Q4KPS(16, 48, 0, 32, 64, 96); \
	XROW0; \
	Q4KPSX(4, 68, r64); \
	XROW1; \
	Q4KPSX(4, 68, 640+r64); \
	XROW2; \
	Q4KPSX(4, 68, 1280+r64); \
	XROW3; \
	Q4KPSX(4, 68, 1920+r64); \
	Q4KPS(80, 112, 128, 160, 192, 224); \
	XROW0; \
	Q4KPSX(132, 196, r64+32); \
	XROW1; \
	Q4KPSX(132, 196, 640+r64+32); \
	XROW2; \
	Q4KPSX(132, 196, 1280+r64+32); \
	XROW3; \
	Q4KPSX(132, 196, 1920+r64+32)

// Q4KTAIL4 adds the block's sums of activation row i (slots at s = 640i, d8 at (DX))
// to its accumulators at a(SP), a+32(SP).
#define Q4KTAIL4(s, a) \
	TREE8(s, 64); \
	VPERM2I128   $0x20, Y5, Y4, Y8; \
	VPERM2I128   $0x31, Y5, Y4, Y9; \
	TREE8(s+32, 64); \
	VPERM2I128   $0x20, Y5, Y4, Y10; \
	VPERM2I128   $0x31, Y5, Y4, Y11; \
	VMOVDQU      s+512(SP), X4; \
	VINSERTI128  $1, s+576(SP), Y4, Y4; \
	VMOVDQU      s+528(SP), X5; \
	VINSERTI128  $1, s+592(SP), Y5, Y5; \
	VMOVDQU      s+544(SP), X6; \
	VINSERTI128  $1, s+608(SP), Y6, Y6; \
	VMOVDQU      s+560(SP), X7; \
	VINSERTI128  $1, s+624(SP), Y7, Y7; \
	VPUNPCKLDQ   Y5, Y4, Y12; \
	VPUNPCKHDQ   Y5, Y4, Y13; \
	VPUNPCKLDQ   Y7, Y6, Y14; \
	VPUNPCKHDQ   Y7, Y6, Y15; \
	VPUNPCKLQDQ  Y14, Y12, Y4; \
	VPUNPCKHQDQ  Y14, Y12, Y5; \
	VPUNPCKLQDQ  Y15, Y13, Y6; \
	VPUNPCKHQDQ  Y15, Y13, Y7; \
	VCVTDQ2PS    Y4, Y12; \
	VCVTDQ2PS    Y5, Y13; \
	VCVTDQ2PS    Y6, Y14; \
	VCVTDQ2PS    Y7, Y15; \
	VCVTDQ2PS    Y8, Y8; \
	VCVTDQ2PS    Y9, Y9; \
	VCVTDQ2PS    Y10, Y10; \
	VCVTDQ2PS    Y11, Y11; \
	VBROADCASTSS (DX), Y6; \
	VMULPS       2624(SP), Y6, Y4; \
	VMULPS       2656(SP), Y6, Y5; \
	VMOVUPS      a(SP), Y0; \
	VMOVUPS      a+32(SP), Y1; \
	VFMADD231PS  Y4, Y8, Y0; \
	VFMADD231PS  Y5, Y12, Y1; \
	VFMADD231PS  Y4, Y9, Y0; \
	VFMADD231PS  Y5, Y13, Y1; \
	VFMADD231PS  Y4, Y10, Y0; \
	VFMADD231PS  Y5, Y14, Y1; \
	VFMADD231PS  Y4, Y11, Y0; \
	VFMADD231PS  Y5, Y15, Y1; \
	VMOVUPS      Y0, a(SP); \
	VMOVUPS      Y1, a+32(SP)

// ARGS8 loads the arguments of the kernels below.
#define ARGS8 \
	MOVQ w+0(FP), SI; \
	MOVQ wstride+8(FP), BX; \
	LEAQ (BX)(BX*2), R9; \
	LEAQ (SI)(BX*4), R10; \
	MOVQ x+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1

// Q4KPF prefetches the three lines q4kpfd bytes past the blocks of the four weight rows
// at (r), (r)(BX*1), (r)(BX*2), (r)(R9*1): a decode reads the eight rows from memory,
// eight streams.
#define q4kpfd 576
#define Q4KPF(r) \
	PREFETCHT0 q4kpfd(r); \
	PREFETCHT0 q4kpfd+64(r); \
	PREFETCHT0 q4kpfd+128(r); \
	PREFETCHT0 q4kpfd(r)(BX*1); \
	PREFETCHT0 q4kpfd+64(r)(BX*1); \
	PREFETCHT0 q4kpfd+128(r)(BX*1); \
	PREFETCHT0 q4kpfd(r)(BX*2); \
	PREFETCHT0 q4kpfd+64(r)(BX*2); \
	PREFETCHT0 q4kpfd+128(r)(BX*2); \
	PREFETCHT0 q4kpfd(r)(R9*1); \
	PREFETCHT0 q4kpfd+64(r)(R9*1); \
	PREFETCHT0 q4kpfd+128(r)(R9*1)

// func q4KGemvR8X1(w *byte, wstride int, x *byte, nb int, dst *[8]float32)
// dst[r] = dotQ4KRepackGo over nb ≥ 1 blocks of weight row r (at w+r·wstride) and
// the Q8_K row at x.
TEXT ·q4KGemvR8X1(SB), NOSPLIT, $640-40
	ARGS8

q4kgemv:
	Q4KPF(SI)
	Q4KPF(R10)
	Q4KBSUMS
	ROWS8(GEMVROW, 32)
	TREE8(0, 32)
	VPERM2I128  $0x20, Y5, Y4, Y2
	VPERM2I128  $0x31, Y5, Y4, Y3
	Q4KD
	VCVTDQ2PS   Y2, Y2
	VCVTDQ2PS   Y3, Y3
	VFMADD231PS Y4, Y2, Y0
	VFMADD231PS Y5, Y3, Y1
	ADDQ        $144, SI
	ADDQ        $144, R10
	ADDQ        $292, DI
	DECQ        CX
	JNZ         q4kgemv

	VSUBPS  Y1, Y0, Y0
	MOVQ    dst+32(FP), AX
	VMOVUPS Y0, (AX)
	VZEROUPPER
	RET

// func q4KGemmR8X1(w *byte, wstride int, x *byte, nb int, dst *[8]float32)
// dst[r] = dotQ4KRepackGemmGo over nb ≥ 1 blocks of weight row r (at w+r·wstride) and
// the Q8_K row at x.
TEXT ·q4KGemmR8X1(SB), NOSPLIT, $640-40
	ARGS8

q4kgemm:
	Q4KBSUMS
	ROWS8(Q4KGEMMROW, 64)

	// Pairs 0 and 1, then 2 and 3, of the eight rows.
	TREE8(0, 64)
	VPERM2I128 $0x20, Y5, Y4, Y8
	VPERM2I128 $0x31, Y5, Y4, Y9
	TREE8(32, 64)
	VPERM2I128 $0x20, Y5, Y4, Y10
	VPERM2I128 $0x31, Y5, Y4, Y11

	// The summs of the pairs, transposed: Y12..Y15 = pair c of rows 0-7.
	VMOVDQU     512(SP), X4
	VINSERTI128 $1, 576(SP), Y4, Y4
	VMOVDQU     528(SP), X5
	VINSERTI128 $1, 592(SP), Y5, Y5
	VMOVDQU     544(SP), X6
	VINSERTI128 $1, 608(SP), Y6, Y6
	VMOVDQU     560(SP), X7
	VINSERTI128 $1, 624(SP), Y7, Y7
	VPUNPCKLDQ  Y5, Y4, Y12
	VPUNPCKHDQ  Y5, Y4, Y13
	VPUNPCKLDQ  Y7, Y6, Y14
	VPUNPCKHDQ  Y7, Y6, Y15
	VPUNPCKLQDQ Y14, Y12, Y4
	VPUNPCKHQDQ Y14, Y12, Y5
	VPUNPCKLQDQ Y15, Y13, Y6
	VPUNPCKHQDQ Y15, Y13, Y7
	VCVTDQ2PS   Y4, Y12
	VCVTDQ2PS   Y5, Y13
	VCVTDQ2PS   Y6, Y14
	VCVTDQ2PS   Y7, Y15
	VCVTDQ2PS   Y8, Y8
	VCVTDQ2PS   Y9, Y9
	VCVTDQ2PS   Y10, Y10
	VCVTDQ2PS   Y11, Y11
	Q4KD
	VFMADD231PS Y4, Y8, Y0
	VFMADD231PS Y5, Y12, Y1
	VFMADD231PS Y4, Y9, Y0
	VFMADD231PS Y5, Y13, Y1
	VFMADD231PS Y4, Y10, Y0
	VFMADD231PS Y5, Y14, Y1
	VFMADD231PS Y4, Y11, Y0
	VFMADD231PS Y5, Y15, Y1
	ADDQ        $144, SI
	ADDQ        $144, R10
	ADDQ        $292, DI
	DECQ        CX
	JNZ         q4kgemm

	VSUBPS  Y1, Y0, Y0
	MOVQ    dst+32(FP), AX
	VMOVUPS Y0, (AX)
	VZEROUPPER
	RET

// func q4KGemmR8X4(w *byte, wstride int, x *byte, xstride, nb int, dst *float32, dststride int)
// dst[i·dststride/4 + r] = dotQ4KRepackGemmGo over nb ≥ 1 blocks of weight row r (at
// w+r·wstride) and the Q8_K row x+i·xstride, i < 4; dststride in bytes.
TEXT ·q4KGemmR8X4(SB), 0, $2944-56
	MOVQ    w+0(FP), SI
	MOVQ    wstride+8(FP), BX
	LEAQ    (BX)(BX*2), R9
	LEAQ    (SI)(BX*4), R10
	MOVQ    x+16(FP), DI
	MOVQ    xstride+24(FP), R8
	MOVQ    nb+32(FP), CX
	VXORPS  Y0, Y0, Y0
	VMOVUPS Y0, 2688(SP)
	VMOVUPS Y0, 2720(SP)
	VMOVUPS Y0, 2752(SP)
	VMOVUPS Y0, 2784(SP)
	VMOVUPS Y0, 2816(SP)
	VMOVUPS Y0, 2848(SP)
	VMOVUPS Y0, 2880(SP)
	VMOVUPS Y0, 2912(SP)

q4kgemm4:
	XROW0
	Q4KBP(2560)
	XROW1
	Q4KBP(2576)
	XROW2
	Q4KBP(2592)
	XROW3
	Q4KBP(2608)
	MOVQ SI, AX
	Q4KROW4(0, 0)
	LEAQ (SI)(BX*1), AX
	Q4KROW4(64, 16)
	LEAQ (SI)(BX*2), AX
	Q4KROW4(128, 32)
	LEAQ (SI)(R9*1), AX
	Q4KROW4(192, 48)
	MOVQ R10, AX
	Q4KROW4(256, 64)
	LEAQ (R10)(BX*1), AX
	Q4KROW4(320, 80)
	LEAQ (R10)(BX*2), AX
	Q4KROW4(384, 96)
	LEAQ (R10)(R9*1), AX
	Q4KROW4(448, 112)

	// D and DM of the eight rows (without d8).
	VMOVD       (SI), X6
	VPINSRD     $1, (SI)(BX*1), X6, X6
	VPINSRD     $2, (SI)(BX*2), X6, X6
	VPINSRD     $3, (SI)(R9*1), X6, X6
	VMOVD       (R10), X7
	VPINSRD     $1, (R10)(BX*1), X7, X7
	VPINSRD     $2, (R10)(BX*2), X7, X7
	VPINSRD     $3, (R10)(R9*1), X7, X7
	VPSHUFB     q4kdsep<>(SB), X6, X6
	VPSHUFB     q4kdsep<>(SB), X7, X7
	VPUNPCKLQDQ X7, X6, X4
	VPUNPCKHQDQ X7, X6, X5
	VCVTPH2PS   X4, Y4
	VCVTPH2PS   X5, Y5
	VMOVUPS     Y4, 2624(SP)
	VMOVUPS     Y5, 2656(SP)

	XROW0
	Q4KTAIL4(0, 2688)
	XROW1
	Q4KTAIL4(640, 2752)
	XROW2
	Q4KTAIL4(1280, 2816)
	XROW3
	Q4KTAIL4(1920, 2880)

	ADDQ $144, SI
	ADDQ $144, R10
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kgemm4

	MOVQ    dst+40(FP), AX
	MOVQ    dststride+48(FP), BX
	LEAQ    (AX)(BX*2), R9
	VMOVUPS 2688(SP), Y0
	VSUBPS  2720(SP), Y0, Y0
	VMOVUPS Y0, (AX)
	VMOVUPS 2752(SP), Y0
	VSUBPS  2784(SP), Y0, Y0
	VMOVUPS Y0, (AX)(BX*1)
	VMOVUPS 2816(SP), Y0
	VSUBPS  2848(SP), Y0, Y0
	VMOVUPS Y0, (R9)
	VMOVUPS 2880(SP), Y0
	VSUBPS  2912(SP), Y0, Y0
	VMOVUPS Y0, (R9)(BX*1)
	VZEROUPPER
	RET
