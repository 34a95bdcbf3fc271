#include "textflag.h"

// AVX2 kernels (no AVX-512) of the repacked Q4_0 order (dotQ4_0RepackGo): eight weight
// rows at a time, one per float32 lane, as llama.cpp's ggml_gemv/gemm_q4_0_8x8_q8_0
// keep them. Each block's nibbles of the eight rows are interleaved in registers eight
// bytes per row (rows 0,1,4,5 in one register, 2,3,6,7 in the other), so VPMADDUBSW
// against an activation chunk broadcast to every row, VPMADDWD and one VPHADDD leave
// row r's exact Σ u·x in lane r (u the unsigned nibble); Σ (u−8)·x = Σ u·x − 8·Σ x
// with 8·Σ x taken from a table the caller fills (q40XTable). Then, per row,
// acc = fma(float(Σ), dw·dx, acc): one VFMADD231PS, block after block, the Go code's
// operations lane for lane.
//
// The table holds, per block, 8 dwords: 8·Σx of activation rows 0..3, then dx (f32)
// of rows 0..3.

DATA q40nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q40nib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q40nib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q40nib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q40nib<>(SB), RODATA|NOPTR, $32

DATA q40ones<>+0(SB)/8, $0x0001000100010001
DATA q40ones<>+8(SB)/8, $0x0001000100010001
DATA q40ones<>+16(SB)/8, $0x0001000100010001
DATA q40ones<>+24(SB)/8, $0x0001000100010001
GLOBL q40ones<>(SB), RODATA|NOPTR, $32

// Q40W8 loads the nibbles of the current block of the eight weight rows at (SI),
// (SI)(BX*1), (SI)(BX*2), (SI)(R9*1), (R10), (R10)(BX*1), (R10)(BX*2), (R10)(R9*1)
// into Y4..Y7 (rows 0,1,4,5: elements 0-7, 8-15, 16-23, 24-31) and Y8..Y11 (rows
// 2,3,6,7), and the eight dw as float32 into Y12 (gathered by VPINSRW, fewer µops
// than MOVWQZX/SHLQ/ORQ: 17.6 against 16.5 GB/s cached). Y13..Y15
// are clobbered.
#define Q40W8 \
	VMOVDQU      2(SI), X13; \
	VINSERTI128  $1, 2(R10), Y13, Y13; \
	VMOVDQU      2(SI)(BX*1), X14; \
	VINSERTI128  $1, 2(R10)(BX*1), Y14, Y14; \
	VPUNPCKLQDQ  Y14, Y13, Y4; \
	VPUNPCKHQDQ  Y14, Y13, Y5; \
	VMOVDQU      2(SI)(BX*2), X13; \
	VINSERTI128  $1, 2(R10)(BX*2), Y13, Y13; \
	VMOVDQU      2(SI)(R9*1), X14; \
	VINSERTI128  $1, 2(R10)(R9*1), Y14, Y14; \
	VPUNPCKLQDQ  Y14, Y13, Y8; \
	VPUNPCKHQDQ  Y14, Y13, Y9; \
	VMOVDQU      q40nib<>(SB), Y15; \
	VPSRLW       $4, Y4, Y6; \
	VPAND        Y15, Y6, Y6; \
	VPAND        Y15, Y4, Y4; \
	VPSRLW       $4, Y5, Y7; \
	VPAND        Y15, Y7, Y7; \
	VPAND        Y15, Y5, Y5; \
	VPSRLW       $4, Y8, Y10; \
	VPAND        Y15, Y10, Y10; \
	VPAND        Y15, Y8, Y8; \
	VPSRLW       $4, Y9, Y11; \
	VPAND        Y15, Y11, Y11; \
	VPAND        Y15, Y9, Y9; \
	VPINSRW      $0, (SI), X12, X12; \
	VPINSRW      $1, (SI)(BX*1), X12, X12; \
	VPINSRW      $2, (SI)(BX*2), X12, X12; \
	VPINSRW      $3, (SI)(R9*1), X12, X12; \
	VPINSRW      $4, (R10), X12, X12; \
	VPINSRW      $5, (R10)(BX*1), X12, X12; \
	VPINSRW      $6, (R10)(BX*2), X12, X12; \
	VPINSRW      $7, (R10)(R9*1), X12, X12; \
	VCVTPH2PS    X12, Y12

// Q40X adds the block of the activation row at (xp) to acc (the eight rows' lanes),
// with 8·Σx at koff(R8), dx at doff(R8) and the rows' dw (float32) in dw. Y12..Y15 are
// clobbered.
#define Q40X(xp, koff, doff, acc, dw) \
	VPBROADCASTQ 2(xp), Y12; \
	VPMADDUBSW   Y12, Y4, Y13; \
	VPMADDUBSW   Y12, Y8, Y14; \
	VPBROADCASTQ 10(xp), Y12; \
	VPMADDUBSW   Y12, Y5, Y15; \
	VPADDW       Y15, Y13, Y13; \
	VPMADDUBSW   Y12, Y9, Y12; \
	VPADDW       Y12, Y14, Y14; \
	VPBROADCASTQ 18(xp), Y12; \
	VPMADDUBSW   Y12, Y6, Y15; \
	VPADDW       Y15, Y13, Y13; \
	VPMADDUBSW   Y12, Y10, Y12; \
	VPADDW       Y12, Y14, Y14; \
	VPBROADCASTQ 26(xp), Y12; \
	VPMADDUBSW   Y12, Y7, Y15; \
	VPADDW       Y15, Y13, Y13; \
	VPMADDUBSW   Y12, Y11, Y12; \
	VPADDW       Y12, Y14, Y14; \
	VPMADDWD     q40ones<>(SB), Y13, Y13; \
	VPMADDWD     q40ones<>(SB), Y14, Y14; \
	VPHADDD      Y14, Y13, Y13; \
	VPBROADCASTD koff(R8), Y14; \
	VPSUBD       Y14, Y13, Y13; \
	VCVTDQ2PS    Y13, Y13; \
	VBROADCASTSS doff(R8), Y14; \
	VMULPS       dw, Y14, Y14; \
	VFMADD231PS  Y14, Y13, acc

// Q40ROWS sets SI, R10 (row 4), BX (stride), R9 (3·stride) from w and wstride.
#define Q40ROWS \
	MOVQ w+0(FP), SI; \
	MOVQ wstride+8(FP), BX; \
	LEAQ (BX)(BX*2), R9; \
	LEAQ (SI)(BX*4), R10

// func q40RepackR8X4(w *byte, wstride int, x *byte, xstride int, tab *uint32, nb int, dst *float32, dststride int)
// dst[i·dststride/4 + r] = dotQ4_0RepackGo over nb ≥ 1 blocks of weight row r (at
// w+r·wstride) and activation row i < 4 (at x+i·xstride); tab is the rows' q40XTable;
// dststride in bytes.
TEXT ·q40RepackR8X4(SB), NOSPLIT, $32-64
	Q40ROWS
	MOVQ   x+16(FP), DI
	MOVQ   xstride+24(FP), R11
	LEAQ   (DI)(R11*1), R13
	LEAQ   (DI)(R11*2), R14
	LEAQ   (R13)(R11*2), DX
	MOVQ   tab+32(FP), R8
	MOVQ   nb+40(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q40r8x4loop:
	Q40W8
	VMOVUPS Y12, 0(SP)
	Q40X(DI, 0, 16, Y0, 0(SP))
	Q40X(R13, 4, 20, Y1, 0(SP))
	Q40X(R14, 8, 24, Y2, 0(SP))
	Q40X(DX, 12, 28, Y3, 0(SP))
	ADDQ $18, SI
	ADDQ $18, R10
	ADDQ $34, DI
	ADDQ $34, R13
	ADDQ $34, R14
	ADDQ $34, DX
	ADDQ $32, R8
	DECQ CX
	JNZ  q40r8x4loop

	MOVQ    dst+48(FP), AX
	MOVQ    dststride+56(FP), BX
	LEAQ    (AX)(BX*2), R9
	VMOVUPS Y0, (AX)
	VMOVUPS Y1, (AX)(BX*1)
	VMOVUPS Y2, (R9)
	VMOVUPS Y3, (R9)(BX*1)
	VZEROUPPER
	RET

// func q40RepackR8X1(w *byte, wstride int, x *byte, tab *uint32, nb int, dst *[8]float32)
// dst[r] = dotQ4_0RepackGo over nb ≥ 1 blocks of weight row r (at w+r·wstride) and the
// activation row at x; tab points at the row's 8·Σx (dx 16 bytes further), 32 bytes
// a block.
//
// Each block it also prefetches 144 bytes (three lines) of the next panel, the eight
// rows at w+8·wstride: with the rows back to back (wstride = nb·18, as MatMul's are)
// the panel is 8·nb·18 bytes, so the next one is in the cache when this one ends. The
// eight rows of a panel are each too short a stream (a 2048-wide row is 18 lines) for
// the hardware prefetcher to run ahead of. PREFETCHNTA (which on Zen 2 keeps the line
// out of the L2) streams best: on the 2-vCPU Zen 2 VM, two threads at once
// (BenchmarkTileDecode/Q4_0, one process pinned to each vCPU) read about 7 GB/s each
// without a prefetch, 9 with PREFETCHT0, 10.5-11 with PREFETCHNTA (a plain AVX2 read
// loop: 10), and with rows of 8192 (a 36 KiB panel) NTA is still ahead of T0; one and
// two panels ahead are alike for T0, one is better for NTA. A
// prefetch of an address past the weights is harmless (it never faults).
TEXT ·q40RepackR8X1(SB), NOSPLIT, $32-48
	Q40ROWS
	MOVQ   x+16(FP), DI
	MOVQ   tab+24(FP), R8
	MOVQ   nb+32(FP), CX
	LEAQ   (SI)(BX*8), R11
	VXORPS Y0, Y0, Y0

q40r8x1loop:
	PREFETCHNTA 0(R11)
	PREFETCHNTA 64(R11)
	PREFETCHNTA 128(R11)
	ADDQ       $144, R11
	Q40W8
	VMOVAPS Y12, Y1
	Q40X(DI, 0, 16, Y0, Y1)
	ADDQ $18, SI
	ADDQ $18, R10
	ADDQ $34, DI
	ADDQ $32, R8
	DECQ CX
	JNZ  q40r8x1loop

	MOVQ    dst+40(FP), AX
	VMOVUPS Y0, 0(AX)
	VZEROUPPER
	RET

DATA q40eights<>+0(SB)/8, $0x0808080808080808
DATA q40eights<>+8(SB)/8, $0x0808080808080808
DATA q40eights<>+16(SB)/8, $0x0808080808080808
DATA q40eights<>+24(SB)/8, $0x0808080808080808
GLOBL q40eights<>(SB), RODATA|NOPTR, $32

// func dotQ4_0RepackAVX2(w, x *byte, nb int) float32
// dotQ4_0RepackGo over nb ≥ 1 blocks of one row: per block, Σ u·x − Σ 8·x in word
// pairs (VPMADDUBSW), VPMADDWD by ones and a horizontal sum give the exact Σ (u−8)·x,
// then acc = fma(float(Σ), dw·dx, acc).
TEXT ·dotQ4_0RepackAVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  X15, X15, X15
	VMOVDQU q40nib<>(SB), Y12
	VMOVDQU q40eights<>(SB), Y13
	VMOVDQU q40ones<>(SB), Y14

q40rloop:
	VMOVDQU      2(SI), X8
	VPSRLW       $4, X8, X9
	VINSERTI128  $1, X9, Y8, Y8
	VPAND        Y12, Y8, Y8
	VPMADDUBSW   2(DI), Y8, Y0
	VPMADDUBSW   2(DI), Y13, Y1
	VPSUBW       Y1, Y0, Y0
	VPMADDWD     Y14, Y0, Y0
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

// func q8XRowAVX2(x *byte, nb int, tab *uint32)
// For the nb Q8_0 blocks of the activation row at x: tab[8b] = 8·Σx (Σ of the 32 int8
// values of block b, exact: VPMADDUBSW of eights against x, VPMADDWD by ones, a
// horizontal sum) and tab[8b+4] = dx as float32 (VCVTPH2PS, exact), q8XTable's values
// for one row.
TEXT ·q8XRowAVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), DI
	MOVQ    nb+8(FP), CX
	MOVQ    tab+16(FP), R8
	VMOVDQU q40eights<>(SB), Y13
	VMOVDQU q40ones<>(SB), Y14

q8xrowloop:
	VPMADDUBSW   2(DI), Y13, Y0
	VPMADDWD     Y14, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, 0(R8)
	MOVWQZX      (DI), AX
	VMOVQ        AX, X2
	VCVTPH2PS    X2, X2
	VMOVSS       X2, 16(R8)
	ADDQ         $34, DI
	ADDQ         $32, R8
	DECQ         CX
	JNZ          q8xrowloop

	VZEROUPPER
	RET

// The panel layout (q4_0panel.go): the eight rows of a panel block after block, 144
// bytes a block: the rows' eight dw (f16), then their nibbles in the registers' order,
// 32 bytes each: rows 0,1,4,5 bytes 0-7 (Y4), rows 0,1,4,5 bytes 8-15 (Y5), rows
// 2,3,6,7 bytes 0-7 (Y8), rows 2,3,6,7 bytes 8-15 (Y9). The kernels below compute what
// q40RepackR8X1/X4 compute, lane for lane, from four plain loads and one VCVTPH2PS
// instead of Q40W8's gather, and stream one contiguous region: a panel is followed by
// the next.

// Q40P8 loads the block at (SI) of a panel into Y4..Y11 (as Q40W8) and its eight dw as
// float32 into Y12. Y15 is clobbered.
#define Q40P8 \
	VMOVDQU   q40nib<>(SB), Y15; \
	VMOVDQU   16(SI), Y4; \
	VMOVDQU   48(SI), Y5; \
	VMOVDQU   80(SI), Y8; \
	VMOVDQU   112(SI), Y9; \
	VPSRLW    $4, Y4, Y6; \
	VPAND     Y15, Y6, Y6; \
	VPAND     Y15, Y4, Y4; \
	VPSRLW    $4, Y5, Y7; \
	VPAND     Y15, Y7, Y7; \
	VPAND     Y15, Y5, Y5; \
	VPSRLW    $4, Y8, Y10; \
	VPAND     Y15, Y10, Y10; \
	VPAND     Y15, Y8, Y8; \
	VPSRLW    $4, Y9, Y11; \
	VPAND     Y15, Y11, Y11; \
	VPAND     Y15, Y9, Y9; \
	VCVTPH2PS (SI), Y12

// func q40PanelX1(w *byte, x *byte, tab *uint32, nb, np int, dst *float32)
// For the np ≥ 1 panels of nb ≥ 1 blocks back to back at w: dst[8p+r] = what
// q40RepackR8X1 gives for row r of panel p (the activation row at x, its table at tab,
// 32 bytes a block). Each block it prefetches the three lines q40pfd bytes ahead: the
// stream runs across panels, so the prefetch does too. It prefetches with PREFETCHNTA
// (the body is avx2_q4_0panel_x1_amd64.h, with Q40PF the prefetch instruction).
#define q40pfd 1152
TEXT ·q40PanelX1(SB), NOSPLIT, $0-48
#define Q40PF PREFETCHNTA
#include "avx2_q4_0panel_x1_amd64.h"
#undef Q40PF

// func q40PanelX1T0(w *byte, x *byte, tab *uint32, nb, np int, dst *float32)
// q40PanelX1 with PREFETCHT0 for its prefetches: the same bits. Which of the two the
// level takes is q40PrefetchNTA's choice (cpu_amd64.go): NTA, which streamed best on
// Zen 2 (q40RepackR8X1's note), keeps the weights out of an Intel core's L2.
TEXT ·q40PanelX1T0(SB), NOSPLIT, $0-48
#define Q40PF PREFETCHT0
#include "avx2_q4_0panel_x1_amd64.h"
#undef Q40PF

// func q40PanelsX4(w *byte, x *byte, xstride int, tab *uint32, nb, np int, dst *float32, dststride int)
// For the np ≥ 1 panels of nb ≥ 1 blocks back to back at w: dst[i·dststride/4 + 8p + r]
// = what q40RepackR8X4 gives for row r of panel p and activation row i < 4 (at
// x+i·xstride; tab is the rows' q8XTable; dststride in bytes).
TEXT ·q40PanelsX4(SB), NOSPLIT, $32-64
	MOVQ  w+0(FP), SI
	MOVQ  x+8(FP), DI
	MOVQ  xstride+16(FP), R11
	LEAQ  (DI)(R11*1), R13
	LEAQ  (DI)(R11*2), R14
	LEAQ  (R13)(R11*2), DX
	MOVQ  tab+24(FP), R8
	MOVQ  np+40(FP), R9
	MOVQ  dst+48(FP), AX
	MOVQ  dststride+56(FP), BX
	MOVQ  nb+32(FP), R10
	MOVQ  R10, R12
	IMULQ $34, R10
	SHLQ  $5, R12

q40psx4panel:
	MOVQ   nb+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q40psx4loop:
	Q40P8
	VMOVUPS Y12, 0(SP)
	Q40X(DI, 0, 16, Y0, 0(SP))
	Q40X(R13, 4, 20, Y1, 0(SP))
	Q40X(R14, 8, 24, Y2, 0(SP))
	Q40X(DX, 12, 28, Y3, 0(SP))
	ADDQ $144, SI
	ADDQ $34, DI
	ADDQ $34, R13
	ADDQ $34, R14
	ADDQ $34, DX
	ADDQ $32, R8
	DECQ CX
	JNZ  q40psx4loop

	LEAQ    (AX)(BX*2), CX
	VMOVUPS Y0, (AX)
	VMOVUPS Y1, (AX)(BX*1)
	VMOVUPS Y2, (CX)
	VMOVUPS Y3, (CX)(BX*1)
	SUBQ    R10, DI
	SUBQ    R10, R13
	SUBQ    R10, R14
	SUBQ    R10, DX
	SUBQ    R12, R8
	ADDQ    $32, AX
	DECQ    R9
	JNZ     q40psx4panel
	VZEROUPPER
	RET
