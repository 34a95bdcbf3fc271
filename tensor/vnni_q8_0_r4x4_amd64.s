#include "textflag.h"
#include "avx2_hsum_amd64.h"

// q80TileR4X4VNNI: four weight rows against four activation rows prepared by
// q80XPrepVNNI, on YMM registers with VPDPBUSD: what q80TileR2X4VNNI computes for two
// pairs of weight rows, lane for lane and with the same float32 operations in the same
// order (dotQ8_0x86Go's bits), with fewer instructions a product:
//   - the sixteen scales dw·dx of each block (the float32 product of the two float16
//     scales, as in q80TileR2X4VNNI) come from a table: for each group of four weight
//     rows one ZMM VMULPS a block of [dw0 dw1 dw2 dw3]×4 (widened once for all the
//     calls of a tile, dwt) by [dx0×4 dx1×4 dx2×4 dx3×4] (the activation rows'
//     scales, gathered once a call), before the products; the
//     FMAs read their scale from it as a broadcast memory operand, so that no
//     multiplication a product competes with VPDPBUSD and the FMAs for the two pipes
//     that run them, and no load waits on a store just made;
//   - the corrections are copied with VEX moves (registers Y0-Y3 to Y12), which the
//     register renamer performs on AMD Zen 4 without an execution unit;
//   - one offset register each walks the weight and the activation blocks.
//
// Registers: Y0-Y3 the activation rows' corrections, Y4-Y7 their quants, Y8-Y11 the
// four weight rows' biased quants, Y12 a product, Y13 the bias, Y14-Y15 the scales;
// Y16+4r+i accumulates weight row r against activation row i. The table (tab, 32·nb
// float32) holds the block scales, dw_r·dx_i at 16b+4i+r, and then the activation
// scales, dx_i at 16(nb+b)+4i+k for k < 4.

DATA q80qbias<>+0(SB)/8, $0x8080808080808080
DATA q80qbias<>+8(SB)/8, $0x8080808080808080
DATA q80qbias<>+16(SB)/8, $0x8080808080808080
DATA q80qbias<>+24(SB)/8, $0x8080808080808080
GLOBL q80qbias<>(SB), RODATA|NOPTR, $32

// Q80QMAC adds weight row r (register wr) times activation row i (quants xq,
// correction xc) of the current block to acc, its scale at off(CX).
#define Q80QMAC(xq, xc, wr, off, acc) \
	VMOVDQA          xc, Y12; \
	VPDPBUSD         xq, wr, Y12; \
	VCVTDQ2PS        Y12, Y12; \
	VFMADD231PS.BCST off(CX), Y12, acc

// Q80QROW puts the biased quants of weight row block at (row)(AX*1) in wr.
#define Q80QROW(row, wr) \
	VMOVDQU 2(row)(AX*1), wr; \
	VPXOR   Y13, wr, wr

// HALVESX is HALVES (avx2_hsum_amd64.h) for accumulators a and b among Y16-Y31: t =
// [lo(a)+hi(a), lo(b)+hi(b)] by VSHUFF32X4, which reaches them (VPERM2F128 does not);
// t and tmp in Y0-Y15.
#define HALVESX(a, b, t, tmp) \
	VSHUFF32X4 $0, b, a, t; \
	VSHUFF32X4 $3, b, a, tmp; \
	VADDPS     tmp, t, t

// Q80QHSUM stores the hsum8 of the accumulators a0..a7 (weight rows r and r+1 against
// activation rows 0..3) to columns c and c+1 of the four output rows at (AX),
// (AX)(DX), (AX)(DX*2), (R8)(DX*2): q80TileR2X4VNNI's reduction.
#define Q80QHSUM(a0, a1, a2, a3, a4, a5, a6, a7, c) \
	HALVESX(a0, a4, Y8, Y15); \
	HALVESX(a1, a5, Y9, Y15); \
	HALVESX(a2, a6, Y10, Y15); \
	HALVESX(a3, a7, Y11, Y15); \
	PAIRS(Y8, Y9, Y12, Y15); \
	PAIRS(Y10, Y11, Y14, Y15); \
	VHADDPS      Y14, Y12, Y13; \
	VEXTRACTF128 $1, Y13, X14; \
	VUNPCKLPS    X14, X13, X15; \
	VUNPCKHPS    X14, X13, X12; \
	VMOVQ        X15, c(AX); \
	VMOVHPS      X15, c(AX)(DX*1); \
	VMOVQ        X12, c(AX)(DX*2); \
	VMOVHPS      X12, c(R8)(DX*2)

// func q80TileR4X4VNNI(w *byte, wstride, nquads int, xp *byte, xpstride, nb int, dst *float32, dststride int, tab, dwt *float32, fill bool)
// For q < nquads, r < 4 and i < 4: dst[i·dststride bytes + (4q+r)·4 bytes] = hsum8 of
// the Q8_0 lanes of weight row 4q+r (at w + (4q+r)·wstride) and the activation row
// prepared at xp + i·xpstride, nb ≥ 1 blocks each; tab is scratch of 32·nb float32.
// dwt (4·nb·nquads float32) holds the weight rows' scales, [dw0 dw1 dw2 dw3] of
// group q at 4(nb·q+b): written first if fill, else as a call with fill left them
// (the calls for the other activation rows of a tile share them).
TEXT ·q80TileR4X4VNNI(SB), NOSPLIT, $24-81
	MOVQ  w+0(FP), R11
	MOVQ  wstride+8(FP), BX
	MOVQ  BX, 16(SP)
	MOVQ  dwt+72(FP), AX
	MOVQ  AX, 8(SP)             // this group's weight scales
	MOVQ  xp+24(FP), DI
	MOVQ  xpstride+32(FP), CX
	LEAQ  (DI)(CX*1), R12
	LEAQ  (DI)(CX*2), R13
	LEAQ  (R12)(CX*2), R14
	MOVQ  nb+40(FP), R15
	MOVQ  R15, AX
	SHLQ  $6, AX
	MOVQ  AX, 0(SP)             // the activation scales' offset in tab
	IMULQ $34, R15              // weight bytes a row, as far as the blocks go

	// The activation scales, [dx0×4 dx1×4 dx2×4 dx3×4] a block.
	MOVQ tab+64(FP), CX
	ADDQ 0(SP), CX
	XORQ DX, DX
	XORQ AX, AX

q80qdx:
	VBROADCASTSS 64(DI)(DX*1), X0
	VBROADCASTSS 64(R12)(DX*1), X1
	VBROADCASTSS 64(R13)(DX*1), X2
	VBROADCASTSS 64(R14)(DX*1), X3
	VMOVUPS      X0, 0(CX)
	VMOVUPS      X1, 16(CX)
	VMOVUPS      X2, 32(CX)
	VMOVUPS      X3, 48(CX)
	ADDQ         $64, CX
	ADDQ         $96, DX
	ADDQ         $34, AX
	CMPQ         AX, R15
	JNE          q80qdx

q80qquad:
	MOVQ 16(SP), BX
	MOVQ R11, SI
	LEAQ (R11)(BX*1), R8
	LEAQ (R11)(BX*2), R9
	LEAQ (R8)(BX*2), R10
	CMPB fill+80(FP), $0
	JEQ  q80qscales

	// The weight scales of these four rows, [dw0 dw1 dw2 dw3] a block.
	MOVQ 8(SP), DX
	XORQ AX, AX

q80qdw:
	VPBROADCASTW (SI)(AX*1), X14
	VPBROADCASTW (R8)(AX*1), X15
	VPUNPCKLWD   X15, X14, X14
	VPBROADCASTW (R9)(AX*1), X15
	VPBROADCASTW (R10)(AX*1), X12
	VPUNPCKLWD   X12, X15, X15
	VPUNPCKLDQ   X15, X14, X14
	VCVTPH2PS    X14, X14
	VMOVUPS      X14, (DX)
	ADDQ         $16, DX
	ADDQ         $34, AX
	CMPQ         AX, R15
	JNE          q80qdw

q80qscales:
	// The block scales: [dw0 dw1 dw2 dw3]×4 times the activation scales.
	MOVQ tab+64(FP), CX
	MOVQ 8(SP), AX
	MOVQ 0(SP), BX
	MOVQ nb+40(FP), DX

q80qscale:
	VBROADCASTF32X4 (AX), Z14
	VMULPS          (CX)(BX*1), Z14, Z15
	VMOVUPS         Z15, (CX)
	ADDQ            $64, CX
	ADDQ            $16, AX
	DECQ            DX
	JNE             q80qscale
	MOVQ            AX, 8(SP)   // the next group's weight scales

	VMOVDQU q80qbias<>(SB), Y13
	VPXORD  Y16, Y16, Y16
	VPXORD  Y17, Y17, Y17
	VPXORD  Y18, Y18, Y18
	VPXORD  Y19, Y19, Y19
	VPXORD  Y20, Y20, Y20
	VPXORD  Y21, Y21, Y21
	VPXORD  Y22, Y22, Y22
	VPXORD  Y23, Y23, Y23
	VPXORD  Y24, Y24, Y24
	VPXORD  Y25, Y25, Y25
	VPXORD  Y26, Y26, Y26
	VPXORD  Y27, Y27, Y27
	VPXORD  Y28, Y28, Y28
	VPXORD  Y29, Y29, Y29
	VPXORD  Y30, Y30, Y30
	VPXORD  Y31, Y31, Y31
	MOVQ    tab+64(FP), CX
	XORQ    AX, AX              // weight block offset
	XORQ    DX, DX              // prepared activation block offset

q80qblock:
	VMOVDQU 0(DI)(DX*1), Y4
	VMOVDQU 32(DI)(DX*1), Y0
	VMOVDQU 0(R12)(DX*1), Y5
	VMOVDQU 32(R12)(DX*1), Y1
	VMOVDQU 0(R13)(DX*1), Y6
	VMOVDQU 32(R13)(DX*1), Y2
	VMOVDQU 0(R14)(DX*1), Y7
	VMOVDQU 32(R14)(DX*1), Y3
	Q80QROW(SI, Y8)
	Q80QROW(R8, Y9)
	Q80QMAC(Y4, Y0, Y8, 0, Y16)
	Q80QMAC(Y5, Y1, Y8, 16, Y17)
	Q80QMAC(Y6, Y2, Y8, 32, Y18)
	Q80QMAC(Y7, Y3, Y8, 48, Y19)
	Q80QMAC(Y4, Y0, Y9, 4, Y20)
	Q80QMAC(Y5, Y1, Y9, 20, Y21)
	Q80QMAC(Y6, Y2, Y9, 36, Y22)
	Q80QMAC(Y7, Y3, Y9, 52, Y23)
	Q80QROW(R9, Y10)
	Q80QROW(R10, Y11)
	Q80QMAC(Y4, Y0, Y10, 8, Y24)
	Q80QMAC(Y5, Y1, Y10, 24, Y25)
	Q80QMAC(Y6, Y2, Y10, 40, Y26)
	Q80QMAC(Y7, Y3, Y10, 56, Y27)
	Q80QMAC(Y4, Y0, Y11, 12, Y28)
	Q80QMAC(Y5, Y1, Y11, 28, Y29)
	Q80QMAC(Y6, Y2, Y11, 44, Y30)
	Q80QMAC(Y7, Y3, Y11, 60, Y31)
	ADDQ $64, CX
	ADDQ $34, AX
	ADDQ $96, DX
	CMPQ AX, R15
	JNE  q80qblock

	MOVQ dst+48(FP), AX
	MOVQ dststride+56(FP), DX
	LEAQ (AX)(DX*1), R8
	Q80QHSUM(Y16, Y17, Y18, Y19, Y20, Y21, Y22, Y23, 0)
	Q80QHSUM(Y24, Y25, Y26, Y27, Y28, Y29, Y30, Y31, 8)
	ADDQ $16, AX
	MOVQ AX, dst+48(FP)
	MOVQ 16(SP), BX
	LEAQ (R11)(BX*4), R11
	DECQ nquads+16(FP)
	JNZ  q80qquad
	VZEROUPPER
	RET
