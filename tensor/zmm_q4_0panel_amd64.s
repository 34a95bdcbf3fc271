#include "textflag.h"

// AVX512-VNNI kernels over Q4_0 weights in the panel layout (q4_0panel.go): what
// q40PanelX1 and q40PanelsX4 (avx2_q4_0_amd64.s) compute, lane for lane (and
// q40PanelsX8ZMM for eight activation rows), with VPDPBUSD (four u8·s8 products summed
// into an int32) in place of VPMADDUBSW, VPADDW and VPMADDWD, two panels at a time:
// panel p's block in the low 256-bit half of each register and panel p+1's in the high
// half. The integer sums are exact either way (VPHADDD's pairs summed by two VSHUFPS
// and a VPADDD, as VPHADDD has no ZMM form), and the float32 operations are the same,
// in the same order (dotQ4_0RepackGo's), so the bits are the AVX2 kernels'. A last odd
// panel goes through both halves and its low half is kept.

// Q40ZP8 loads block b of panels p (at SI) and p+1 (at R15), one to each 256-bit half:
// their nibbles into Z4..Z11 (low nibbles of rows 0,1,4,5 bytes 0-7 and 8-15 in Z4, Z5,
// their high nibbles in Z6, Z7; rows 2,3,6,7 likewise in Z8..Z11) and their sixteen dw
// as float32 into Z18. Needs Z16 = the nibble mask.
#define Q40ZP8 \
	VMOVDQU      16(SI), Y4; \
	VINSERTI64X4 $1, 16(R15), Z4, Z4; \
	VMOVDQU      48(SI), Y5; \
	VINSERTI64X4 $1, 48(R15), Z5, Z5; \
	VMOVDQU      80(SI), Y8; \
	VINSERTI64X4 $1, 80(R15), Z8, Z8; \
	VMOVDQU      112(SI), Y9; \
	VINSERTI64X4 $1, 112(R15), Z9, Z9; \
	VPSRLW       $4, Z4, Z6; \
	VPANDD       Z16, Z6, Z6; \
	VPANDD       Z16, Z4, Z4; \
	VPSRLW       $4, Z5, Z7; \
	VPANDD       Z16, Z7, Z7; \
	VPANDD       Z16, Z5, Z5; \
	VPSRLW       $4, Z8, Z10; \
	VPANDD       Z16, Z10, Z10; \
	VPANDD       Z16, Z8, Z8; \
	VPSRLW       $4, Z9, Z11; \
	VPANDD       Z16, Z11, Z11; \
	VPANDD       Z16, Z9, Z9; \
	VMOVDQU64    (SI), X18; \
	VINSERTI32X4 $1, (R15), Y18, Y18; \
	VCVTPH2PS    Y18, Z18

// Q40ZX adds the block of the activation row at (xp) to acc (the two panels' rows'
// lanes), with 8·Σx at koff(tb), dx at doff(tb) and the rows' dw (float32) in Z18: row
// r's Σ u·x in its lane, less 8·Σx, converted, times dw·dx, added by one FMA.
// Z12..Z15 are clobbered.
#define Q40ZX(xp, tb, koff, doff, acc) \
	VPBROADCASTQ 2(xp), Z12; \
	VPXORD       Z13, Z13, Z13; \
	VPXORD       Z14, Z14, Z14; \
	VPDPBUSD     Z12, Z4, Z13; \
	VPDPBUSD     Z12, Z8, Z14; \
	VPBROADCASTQ 10(xp), Z15; \
	VPDPBUSD     Z15, Z5, Z13; \
	VPDPBUSD     Z15, Z9, Z14; \
	VPBROADCASTQ 18(xp), Z12; \
	VPDPBUSD     Z12, Z6, Z13; \
	VPDPBUSD     Z12, Z10, Z14; \
	VPBROADCASTQ 26(xp), Z15; \
	VPDPBUSD     Z15, Z7, Z13; \
	VPDPBUSD     Z15, Z11, Z14; \
	VSHUFPS      $0x88, Z14, Z13, Z15; \
	VSHUFPS      $0xDD, Z14, Z13, Z13; \
	VPADDD       Z15, Z13, Z13; \
	VPSUBD.BCST  koff(tb), Z13, Z13; \
	VCVTDQ2PS    Z13, Z13; \
	VMULPS.BCST  doff(tb), Z18, Z14; \
	VFMADD231PS  Z14, Z13, acc

// Q40ZXI is Q40ZX for the activation row at (base)(idx).
#define Q40ZXI(base, idx, tb, koff, doff, acc) \
	VPBROADCASTQ 2(base)(idx), Z12; \
	VPXORD       Z13, Z13, Z13; \
	VPXORD       Z14, Z14, Z14; \
	VPDPBUSD     Z12, Z4, Z13; \
	VPDPBUSD     Z12, Z8, Z14; \
	VPBROADCASTQ 10(base)(idx), Z15; \
	VPDPBUSD     Z15, Z5, Z13; \
	VPDPBUSD     Z15, Z9, Z14; \
	VPBROADCASTQ 18(base)(idx), Z12; \
	VPDPBUSD     Z12, Z6, Z13; \
	VPDPBUSD     Z12, Z10, Z14; \
	VPBROADCASTQ 26(base)(idx), Z15; \
	VPDPBUSD     Z15, Z7, Z13; \
	VPDPBUSD     Z15, Z11, Z14; \
	VSHUFPS      $0x88, Z14, Z13, Z15; \
	VSHUFPS      $0xDD, Z14, Z13, Z13; \
	VPADDD       Z15, Z13, Z13; \
	VPSUBD.BCST  koff(tb), Z13, Z13; \
	VCVTDQ2PS    Z13, Z13; \
	VMULPS.BCST  doff(tb), Z18, Z14; \
	VFMADD231PS  Z14, Z13, acc

// Q40ZPAIR sets R15 to the panel after the one at SI (pb = nb·144 bytes on; nb at
// nboff(FP)), or to SI itself for a last odd panel (cnt = 1).
#define Q40ZPAIR(nboff, cnt) \
	MOVQ    nboff(FP), R15; \
	IMULQ   $144, R15; \
	ADDQ    SI, R15; \
	CMPQ    cnt, $1; \
	CMOVQEQ SI, R15

// func q40PanelX1ZMM(w *byte, x *byte, tab *uint32, nb, np int, dst *float32)
// q40PanelX1 (avx2_q4_0_amd64.s) two panels at a time; the same bits. Each block it prefetches the
// three lines q40zpfd bytes ahead in each of the two panels, and at each pair the
// first q40zpfd bytes of the second panel, with PREFETCHNTA (the body is
// zmm_q4_0panel_x1_amd64.h, with Q40PF the prefetch instruction).
#define q40zpfd 1152
TEXT ·q40PanelX1ZMM(SB), NOSPLIT, $0-48
#define Q40PF PREFETCHNTA
#include "zmm_q4_0panel_x1_amd64.h"
#undef Q40PF

// func q40PanelX1ZMMT0(w *byte, x *byte, tab *uint32, nb, np int, dst *float32)
// q40PanelX1ZMM with PREFETCHT0 for its prefetches: the same bits. Which of the two
// the level takes is q40PrefetchNTA's choice (cpu_amd64.go).
TEXT ·q40PanelX1ZMMT0(SB), NOSPLIT, $0-48
#define Q40PF PREFETCHT0
#include "zmm_q4_0panel_x1_amd64.h"
#undef Q40PF

// func q40PanelsX4ZMM(w *byte, x *byte, xstride int, tab *uint32, nb, np int, dst *float32, dststride int)
// q40PanelsX4 (avx2_q4_0_amd64.s) two panels at a time; the same bits.
TEXT ·q40PanelsX4ZMM(SB), NOSPLIT, $0-64
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         xstride+16(FP), R11
	LEAQ         (DI)(R11*1), R13
	LEAQ         (DI)(R11*2), R14
	LEAQ         (R13)(R11*2), DX
	MOVQ         tab+24(FP), R8
	MOVQ         np+40(FP), R9
	MOVQ         dst+48(FP), AX
	MOVQ         dststride+56(FP), BX
	MOVQ         nb+32(FP), R10
	MOVQ         R10, R12
	IMULQ        $34, R10
	SHLQ         $5, R12
	MOVL         $0x0f0f0f0f, CX
	VPBROADCASTD CX, Z16

q40zx4pair:
	Q40ZPAIR(nb+32, R9)
	MOVQ   nb+32(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

q40zx4loop:
	Q40ZP8
	Q40ZX(DI, R8, 0, 16, Z0)
	Q40ZX(R13, R8, 4, 20, Z1)
	Q40ZX(R14, R8, 8, 24, Z2)
	Q40ZX(DX, R8, 12, 28, Z3)
	ADDQ $144, SI
	ADDQ $144, R15
	ADDQ $34, DI
	ADDQ $34, R13
	ADDQ $34, R14
	ADDQ $34, DX
	ADDQ $32, R8
	DECQ CX
	JNZ  q40zx4loop

	LEAQ (AX)(BX*2), CX
	CMPQ R9, $1
	JEQ  q40zx4last
	VMOVUPS Z0, (AX)
	VMOVUPS Z1, (AX)(BX*1)
	VMOVUPS Z2, (CX)
	VMOVUPS Z3, (CX)(BX*1)
	SUBQ    R10, DI
	SUBQ    R10, R13
	SUBQ    R10, R14
	SUBQ    R10, DX
	SUBQ    R12, R8
	MOVQ    R15, SI
	ADDQ    $64, AX
	SUBQ    $2, R9
	JNZ     q40zx4pair
	VZEROUPPER
	RET

q40zx4last:
	VMOVUPS Y0, (AX)
	VMOVUPS Y1, (AX)(BX*1)
	VMOVUPS Y2, (CX)
	VMOVUPS Y3, (CX)(BX*1)
	VZEROUPPER
	RET

// func q40PanelsX8ZMM(w *byte, x *byte, xstride int, tab *uint32, nb, np int, dst *float32, dststride int)
// q40PanelsX4ZMM for eight activation rows a pass (each block unpacked once for the
// eight), two panels at a time; the same bits.
TEXT ·q40PanelsX8ZMM(SB), NOSPLIT, $0-64
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         xstride+16(FP), R11
	LEAQ         (R11)(R11*2), CX
	LEAQ         (DI)(CX*1), R13
	LEAQ         (DI)(CX*2), R14
	MOVQ         tab+24(FP), R8
	MOVQ         np+40(FP), R9
	MOVQ         dst+48(FP), AX
	MOVQ         dststride+56(FP), BX
	MOVQ         nb+32(FP), R10
	MOVQ         R10, R12
	IMULQ        $34, R10
	SHLQ         $5, R12
	LEAQ         (R8)(R12*1), DX
	MOVL         $0x0f0f0f0f, CX
	VPBROADCASTD CX, Z16

q40zx8pair:
	Q40ZPAIR(nb+32, R9)
	MOVQ   nb+32(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22

q40zx8loop:
	Q40ZP8
	Q40ZX(DI, R8, 0, 16, Z0)
	Q40ZXI(DI, R11*1, R8, 4, 20, Z1)
	Q40ZXI(DI, R11*2, R8, 8, 24, Z2)
	Q40ZX(R13, R8, 12, 28, Z3)
	Q40ZXI(R13, R11*1, DX, 0, 16, Z19)
	Q40ZXI(R13, R11*2, DX, 4, 20, Z20)
	Q40ZX(R14, DX, 8, 24, Z21)
	Q40ZXI(R14, R11*1, DX, 12, 28, Z22)
	ADDQ $144, SI
	ADDQ $144, R15
	ADDQ $34, DI
	ADDQ $34, R13
	ADDQ $34, R14
	ADDQ $32, R8
	ADDQ $32, DX
	DECQ CX
	JNZ  q40zx8loop

	CMPQ R9, $1
	JEQ  q40zx8last
	VMOVUPS Z0, (AX)
	VMOVUPS Z1, (AX)(BX*1)
	VMOVUPS Z2, (AX)(BX*2)
	LEAQ    (AX)(BX*2), CX
	VMOVUPS Z3, (CX)(BX*1)
	LEAQ    (AX)(BX*4), CX
	VMOVUPS Z19, (CX)
	VMOVUPS Z20, (CX)(BX*1)
	VMOVUPS Z21, (CX)(BX*2)
	LEAQ    (CX)(BX*2), CX
	VMOVUPS Z22, (CX)(BX*1)
	SUBQ    R10, DI
	SUBQ    R10, R13
	SUBQ    R10, R14
	SUBQ    R12, R8
	SUBQ    R12, DX
	MOVQ    R15, SI
	ADDQ    $64, AX
	SUBQ    $2, R9
	JNZ     q40zx8pair
	VZEROUPPER
	RET

q40zx8last:
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
	VZEROUPPER
	RET
