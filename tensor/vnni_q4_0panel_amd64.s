#include "textflag.h"

// AVX512-VNNI kernels over Q4_0 weights in the panel layout (q4_0panel.go): what
// q40PanelX1 and q40PanelsX4 (avx2_q4_0_amd64.s) compute, lane for lane (and
// q40PanelsX8VNNI, q40PanelsX4VNNI for eight activation rows), with
// VPDPBUSD (four u8·s8 products summed into an int32, on YMM registers) in place of
// VPMADDUBSW, VPADDW and VPMADDWD. The integer sums are exact either way, and the
// float32 operations are the same, in the same order (dotQ4_0RepackGo's), so the bits
// are the AVX2 kernels'. The EVEX registers Y16..Y18 hold the nibble mask and the
// block's dw, which the AVX2 kernels reload or spill.

DATA q40vnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q40vnib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q40vnib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q40vnib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q40vnib<>(SB), RODATA|NOPTR, $32

// Q40VP8 loads the block at (SI) of a panel: its nibbles into Y4..Y11 (low nibbles of
// rows 0,1,4,5 bytes 0-7 and 8-15 in Y4, Y5, their high nibbles in Y6, Y7; rows
// 2,3,6,7 likewise in Y8..Y11) and its eight dw as float32 into Y18. Needs Y16 = the
// nibble mask.
#define Q40VP8 \
	VMOVDQU   16(SI), Y4; \
	VMOVDQU   48(SI), Y5; \
	VMOVDQU   80(SI), Y8; \
	VMOVDQU   112(SI), Y9; \
	VPSRLW    $4, Y4, Y6; \
	VPANDD    Y16, Y6, Y6; \
	VPANDD    Y16, Y4, Y4; \
	VPSRLW    $4, Y5, Y7; \
	VPANDD    Y16, Y7, Y7; \
	VPANDD    Y16, Y5, Y5; \
	VPSRLW    $4, Y8, Y10; \
	VPANDD    Y16, Y10, Y10; \
	VPANDD    Y16, Y8, Y8; \
	VPSRLW    $4, Y9, Y11; \
	VPANDD    Y16, Y11, Y11; \
	VPANDD    Y16, Y9, Y9; \
	VCVTPH2PS (SI), Y18

// Q40VX adds the block of the activation row at (xp) to acc (the eight rows' lanes),
// with 8·Σx at koff(R8), dx at doff(R8) and the rows' dw (float32) in Y18: row r's
// Σ u·x in lane r (after VPHADDD of the two halves' pairs), less 8·Σx, converted,
// times dw·dx, added by one FMA. Y12..Y15 are clobbered.
#define Q40VX(xp, koff, doff, acc) \
	VPBROADCASTQ 2(xp), Y12; \
	VPXOR        Y13, Y13, Y13; \
	VPXOR        Y14, Y14, Y14; \
	VPDPBUSD     Y12, Y4, Y13; \
	VPDPBUSD     Y12, Y8, Y14; \
	VPBROADCASTQ 10(xp), Y15; \
	VPDPBUSD     Y15, Y5, Y13; \
	VPDPBUSD     Y15, Y9, Y14; \
	VPBROADCASTQ 18(xp), Y12; \
	VPDPBUSD     Y12, Y6, Y13; \
	VPDPBUSD     Y12, Y10, Y14; \
	VPBROADCASTQ 26(xp), Y15; \
	VPDPBUSD     Y15, Y7, Y13; \
	VPDPBUSD     Y15, Y11, Y14; \
	VPHADDD      Y14, Y13, Y13; \
	VPBROADCASTD koff(R8), Y14; \
	VPSUBD       Y14, Y13, Y13; \
	VCVTDQ2PS    Y13, Y13; \
	VBROADCASTSS doff(R8), Y14; \
	VMULPS       Y18, Y14, Y14; \
	VFMADD231PS  Y14, Y13, acc

// func q40PanelX1VNNI(w *byte, x *byte, tab *uint32, nb, np int, dst *float32)
// q40PanelX1 with VPDPBUSD: for the np ≥ 1 panels of nb ≥ 1 blocks back to back at w,
// dst[8p+r] = dotQ4_0RepackGo of row r of panel p and the activation row at x (its
// q8XTable at tab, 32 bytes a block). Each block it prefetches the three lines
// q40vpfd bytes ahead, across panels.
#define q40vpfd 1152
TEXT ·q40PanelX1VNNI(SB), NOSPLIT, $0-48
	MOVQ    w+0(FP), SI
	MOVQ    dst+40(FP), AX
	MOVQ    np+32(FP), DX
	VMOVDQU64 q40vnib<>(SB), Y16

	// The first q40vpfd bytes, which the loop's prefetches do not cover.
	PREFETCHNTA 0(SI)
	PREFETCHNTA 64(SI)
	PREFETCHNTA 128(SI)
	PREFETCHNTA 192(SI)
	PREFETCHNTA 256(SI)
	PREFETCHNTA 320(SI)
	PREFETCHNTA 384(SI)
	PREFETCHNTA 448(SI)
	PREFETCHNTA 512(SI)
	PREFETCHNTA 576(SI)
	PREFETCHNTA 640(SI)
	PREFETCHNTA 704(SI)
	PREFETCHNTA 768(SI)
	PREFETCHNTA 832(SI)
	PREFETCHNTA 896(SI)
	PREFETCHNTA 960(SI)
	PREFETCHNTA 1024(SI)
	PREFETCHNTA 1088(SI)

q40v1panel:
	MOVQ   x+8(FP), DI
	MOVQ   tab+16(FP), R8
	MOVQ   nb+24(FP), CX
	VXORPS Y0, Y0, Y0

q40v1loop:
	PREFETCHNTA q40vpfd(SI)
	PREFETCHNTA q40vpfd+64(SI)
	PREFETCHNTA q40vpfd+128(SI)
	Q40VP8
	Q40VX(DI, 0, 16, Y0)
	ADDQ $144, SI
	ADDQ $34, DI
	ADDQ $32, R8
	DECQ CX
	JNZ  q40v1loop

	VMOVUPS Y0, (AX)
	ADDQ    $32, AX
	DECQ    DX
	JNZ     q40v1panel
	VZEROUPPER
	RET

// func q40PanelsX4VNNI(w *byte, x *byte, xstride int, tab *uint32, nb, np int, dst *float32, dststride int)
// q40PanelsX4 with VPDPBUSD: for the np ≥ 1 panels of nb ≥ 1 blocks back to back at
// w, dst[i·dststride/4 + 8p + r] = dotQ4_0RepackGo of row r of panel p and activation
// row i < 4 (at x+i·xstride; tab is the rows' q8XTable; dststride in bytes).
TEXT ·q40PanelsX4VNNI(SB), NOSPLIT, $0-64
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    xstride+16(FP), R11
	LEAQ    (DI)(R11*1), R13
	LEAQ    (DI)(R11*2), R14
	LEAQ    (R13)(R11*2), DX
	MOVQ    tab+24(FP), R8
	MOVQ    np+40(FP), R9
	MOVQ    dst+48(FP), AX
	MOVQ    dststride+56(FP), BX
	MOVQ    nb+32(FP), R10
	MOVQ    R10, R12
	IMULQ   $34, R10
	SHLQ    $5, R12
	VMOVDQU64 q40vnib<>(SB), Y16

q40vx4panel:
	MOVQ   nb+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q40vx4loop:
	Q40VP8
	Q40VX(DI, 0, 16, Y0)
	Q40VX(R13, 4, 20, Y1)
	Q40VX(R14, 8, 24, Y2)
	Q40VX(DX, 12, 28, Y3)
	ADDQ $144, SI
	ADDQ $34, DI
	ADDQ $34, R13
	ADDQ $34, R14
	ADDQ $34, DX
	ADDQ $32, R8
	DECQ CX
	JNZ  q40vx4loop

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
	JNZ     q40vx4panel
	VZEROUPPER
	RET

// Q40VXB is Q40VX for the activation row at (base), its table at tb: 8·Σx at koff(tb),
// dx at doff(tb). Y12..Y15 are clobbered.
#define Q40VXB(base, tb, koff, doff, acc) \
	VPBROADCASTQ 2(base), Y12; \
	VPXOR        Y13, Y13, Y13; \
	VPXOR        Y14, Y14, Y14; \
	VPDPBUSD     Y12, Y4, Y13; \
	VPDPBUSD     Y12, Y8, Y14; \
	VPBROADCASTQ 10(base), Y15; \
	VPDPBUSD     Y15, Y5, Y13; \
	VPDPBUSD     Y15, Y9, Y14; \
	VPBROADCASTQ 18(base), Y12; \
	VPDPBUSD     Y12, Y6, Y13; \
	VPDPBUSD     Y12, Y10, Y14; \
	VPBROADCASTQ 26(base), Y15; \
	VPDPBUSD     Y15, Y7, Y13; \
	VPDPBUSD     Y15, Y11, Y14; \
	VPHADDD      Y14, Y13, Y13; \
	VPBROADCASTD koff(tb), Y14; \
	VPSUBD       Y14, Y13, Y13; \
	VCVTDQ2PS    Y13, Y13; \
	VBROADCASTSS doff(tb), Y14; \
	VMULPS       Y18, Y14, Y14; \
	VFMADD231PS  Y14, Y13, acc

// Q40VXI is Q40VXB for the activation row at (base)(idx).
#define Q40VXI(base, idx, tb, koff, doff, acc) \
	VPBROADCASTQ 2(base)(idx), Y12; \
	VPXOR        Y13, Y13, Y13; \
	VPXOR        Y14, Y14, Y14; \
	VPDPBUSD     Y12, Y4, Y13; \
	VPDPBUSD     Y12, Y8, Y14; \
	VPBROADCASTQ 10(base)(idx), Y15; \
	VPDPBUSD     Y15, Y5, Y13; \
	VPDPBUSD     Y15, Y9, Y14; \
	VPBROADCASTQ 18(base)(idx), Y12; \
	VPDPBUSD     Y12, Y6, Y13; \
	VPDPBUSD     Y12, Y10, Y14; \
	VPBROADCASTQ 26(base)(idx), Y15; \
	VPDPBUSD     Y15, Y7, Y13; \
	VPDPBUSD     Y15, Y11, Y14; \
	VPHADDD      Y14, Y13, Y13; \
	VPBROADCASTD koff(tb), Y14; \
	VPSUBD       Y14, Y13, Y13; \
	VCVTDQ2PS    Y13, Y13; \
	VBROADCASTSS doff(tb), Y14; \
	VMULPS       Y18, Y14, Y14; \
	VFMADD231PS  Y14, Y13, acc

// func q40PanelsX8VNNI(w *byte, x *byte, xstride int, tab *uint32, nb, np int, dst *float32, dststride int)
// q40PanelsX4VNNI for eight activation rows (x+i·xstride, i < 8; tab their q8XTable,
// two groups of four): each block of a panel is unpacked once for the eight rows.
TEXT ·q40PanelsX8VNNI(SB), NOSPLIT, $0-64
	MOVQ      w+0(FP), SI
	MOVQ      x+8(FP), DI
	MOVQ      xstride+16(FP), R11
	LEAQ      (R11)(R11*2), CX
	LEAQ      (DI)(CX*1), R13
	LEAQ      (DI)(CX*2), R14
	MOVQ      tab+24(FP), R8
	MOVQ      np+40(FP), R9
	MOVQ      dst+48(FP), AX
	MOVQ      dststride+56(FP), BX
	MOVQ      nb+32(FP), R10
	MOVQ      R10, R12
	IMULQ     $34, R10
	SHLQ      $5, R12
	LEAQ      (R8)(R12*1), DX
	VMOVDQU64 q40vnib<>(SB), Y16

q40vx8panel:
	MOVQ   nb+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VPXORD Y19, Y19, Y19
	VPXORD Y20, Y20, Y20
	VPXORD Y21, Y21, Y21
	VPXORD Y22, Y22, Y22

q40vx8loop:
	Q40VP8
	Q40VXB(DI, R8, 0, 16, Y0)
	Q40VXI(DI, R11*1, R8, 4, 20, Y1)
	Q40VXI(DI, R11*2, R8, 8, 24, Y2)
	Q40VXB(R13, R8, 12, 28, Y3)
	Q40VXI(R13, R11*1, DX, 0, 16, Y19)
	Q40VXI(R13, R11*2, DX, 4, 20, Y20)
	Q40VXB(R14, DX, 8, 24, Y21)
	Q40VXI(R14, R11*1, DX, 12, 28, Y22)
	ADDQ $144, SI
	ADDQ $34, DI
	ADDQ $34, R13
	ADDQ $34, R14
	ADDQ $32, R8
	ADDQ $32, DX
	DECQ CX
	JNZ  q40vx8loop

	VMOVUPS Y0, (AX)
	VMOVUPS Y1, (AX)(BX*1)
	VMOVUPS Y2, (AX)(BX*2)
	LEAQ    (AX)(BX*2), CX
	VMOVUPS Y3, (CX)(BX*1)
	LEAQ    (AX)(BX*4), CX
	VMOVUPS Y19, (CX)
	VMOVUPS Y20, (CX)(BX*1)
	VMOVUPS Y21, (CX)(BX*2)
	LEAQ    (CX)(BX*2), CX
	VMOVUPS Y22, (CX)(BX*1)
	SUBQ    R10, DI
	SUBQ    R10, R13
	SUBQ    R10, R14
	SUBQ    R12, R8
	SUBQ    R12, DX
	ADDQ    $32, AX
	DECQ    R9
	JNZ     q40vx8panel
	VZEROUPPER
	RET
