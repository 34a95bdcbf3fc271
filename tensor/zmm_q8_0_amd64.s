#include "textflag.h"
#include "avx2_hsum_amd64.h"

// The Q8_0 lane kernels of vnni_q8_0_amd64.s (q80TileR2X4VNNI, q80TileR4X1VNNI) on ZMM
// registers (and q80TileR2X8ZMM, eight activation rows a pass): two weight rows in the two 256-bit halves of each register, each half
// the eight lanes of one output, with the same operations as the YMM kernels lane for
// lane (the correction, VPDPBUSD, the conversion, dw·dx, one FMA a block) and the
// same hsum8 of each output's eight lanes at the end, so the bits are theirs
// (dotQ8_0x86Go's). The activation blocks, prepared by q80XPrepVNNI, are broadcast to
// both halves.

// Q80ZW puts the biased quants (w+128) of the weight blocks at (p0) and (p1) in the
// halves of wz (p0's low; wy is wz's low half) and their dw, each broadcast over its
// half, in dw. Needs Z16 = 0x80 bytes; xa and xb (and their Y halves ya) are clobbered.
#define Q80ZW(p0, p1, wy, wz, dw, xa, ya, xb) \
	VMOVDQU      2(p0), wy; \
	VINSERTI64X4 $1, 2(p1), wz, wz; \
	VPXORD       Z16, wz, wz; \
	VPBROADCASTW (p0), xa; \
	VPBROADCASTW (p1), xb; \
	VINSERTI128  $1, xb, ya, ya; \
	VCVTPH2PS    ya, dw

// Q80ZMAC adds the prepared activation block at (xp) to acc, for the two weight blocks
// in wu and dw (Q80ZW): the block's corrections, broadcast, in t, plus VPDPBUSD of the
// biased weights and the broadcast quants (xq), converted, times dw·dx (m), by one FMA.
#define Q80ZMAC(xp, wu, dw, xq, t, m, acc) \
	VBROADCASTI64X4 0(xp), xq; \
	VBROADCASTI64X4 32(xp), t; \
	VPDPBUSD        xq, wu, t; \
	VCVTDQ2PS       t, t; \
	VMULPS.BCST     64(xp), dw, m; \
	VFMADD231PS     m, t, acc

// Q80ZMACI is Q80ZMAC for the prepared activation block at (base)(idx*1).
#define Q80ZMACI(base, idx, wu, dw, xq, t, m, acc) \
	VBROADCASTI64X4 0(base)(idx*1), xq; \
	VBROADCASTI64X4 32(base)(idx*1), t; \
	VPDPBUSD        xq, wu, t; \
	VCVTDQ2PS       t, t; \
	VMULPS.BCST     64(base)(idx*1), dw, m; \
	VFMADD231PS     m, t, acc

// Q80Z2X4HSUM stores q80TileR2X4VNNI's hsum8 of Z0..Z3 (weight row 0 in the low
// halves, row 1 in the high, against four activation rows) to columns 0 and 1 of the
// four output rows at (base), (base)(DX*1), (base)(DX*2), (base)(DX*3). Y4..Y15 and
// t1, t2 are clobbered.
#define Q80Z2X4HSUM(base, t1, t2) \
	VEXTRACTF64X4 $1, Z0, Y4; \
	VEXTRACTF64X4 $1, Z1, Y5; \
	VEXTRACTF64X4 $1, Z2, Y6; \
	VEXTRACTF64X4 $1, Z3, Y7; \
	HALVES(Y0, Y4, Y8, Y15); \
	HALVES(Y1, Y5, Y9, Y15); \
	HALVES(Y2, Y6, Y10, Y15); \
	HALVES(Y3, Y7, Y11, Y15); \
	PAIRS(Y8, Y9, Y12, Y15); \
	PAIRS(Y10, Y11, Y14, Y15); \
	VHADDPS      Y14, Y12, Y13; \
	VEXTRACTF128 $1, Y13, X14; \
	VUNPCKLPS    X14, X13, X15; \
	VUNPCKHPS    X14, X13, X12; \
	LEAQ         (base)(DX*1), t1; \
	LEAQ         (base)(DX*2), t2; \
	VMOVQ        X15, (base); \
	VMOVHPS      X15, (t1); \
	VMOVQ        X12, (t2); \
	VMOVHPS      X12, (t1)(DX*2)

// func q80TileR2X4ZMM(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)
// q80TileR2X4VNNI on ZMM registers: Z0..Z3 hold weight row 0 (low half) and row 1
// (high half) against activation rows 0..3; the same bits.
TEXT ·q80TileR2X4ZMM(SB), NOSPLIT, $0-64
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z16
	MOVQ         w+0(FP), R9
	MOVQ         wstride+8(FP), BX
	MOVQ         npairs+16(FP), R10
	MOVQ         xp+24(FP), DI
	MOVQ         xpstride+32(FP), R11
	LEAQ         (DI)(R11*1), R12
	LEAQ         (DI)(R11*2), R13
	LEAQ         (R12)(R11*2), R14
	MOVQ         nb+40(FP), R11
	IMULQ        $96, R11
	MOVQ         dst+48(FP), AX
	MOVQ         dststride+56(FP), DX

q80z2x4pair:
	MOVQ   R9, SI
	LEAQ   (R9)(BX*1), R8
	MOVQ   nb+40(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

q80z2x4:
	Q80ZW(SI, R8, Y8, Z8, Z12, X15, Y15, X14)
	Q80ZMAC(DI, Z8, Z12, Z17, Z18, Z19, Z0)
	Q80ZMAC(R12, Z8, Z12, Z20, Z21, Z22, Z1)
	Q80ZMAC(R13, Z8, Z12, Z23, Z24, Z25, Z2)
	Q80ZMAC(R14, Z8, Z12, Z26, Z27, Z28, Z3)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $96, DI
	ADDQ $96, R12
	ADDQ $96, R13
	ADDQ $96, R14
	DECQ CX
	JNZ  q80z2x4

	SUBQ R11, DI
	SUBQ R11, R12
	SUBQ R11, R13
	SUBQ R11, R14

	// Row 1's lanes to Y4..Y7, then q80TileR2X4VNNI's hsum8 of Y0..Y7.
	VEXTRACTF64X4 $1, Z0, Y4
	VEXTRACTF64X4 $1, Z1, Y5
	VEXTRACTF64X4 $1, Z2, Y6
	VEXTRACTF64X4 $1, Z3, Y7
	HALVES(Y0, Y4, Y8, Y15)
	HALVES(Y1, Y5, Y9, Y15)
	HALVES(Y2, Y6, Y10, Y15)
	HALVES(Y3, Y7, Y11, Y15)
	PAIRS(Y8, Y9, Y12, Y15)
	PAIRS(Y10, Y11, Y14, Y15)
	VHADDPS      Y14, Y12, Y13
	VEXTRACTF128 $1, Y13, X14
	VUNPCKLPS    X14, X13, X15 // [s0 s4 s1 s5]: activation rows 0 and 1
	VUNPCKHPS    X14, X13, X12 // [s2 s6 s3 s7]: activation rows 2 and 3
	LEAQ         (AX)(DX*1), SI
	LEAQ         (AX)(DX*2), R8
	VMOVQ        X15, (AX)
	VMOVHPS      X15, (SI)
	VMOVQ        X12, (R8)
	VMOVHPS      X12, (SI)(DX*2)

	ADDQ $8, AX
	LEAQ (R9)(BX*2), R9
	DECQ R10
	JNZ  q80z2x4pair
	VZEROUPPER
	RET

// func q80TileR2X8ZMM(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)
// q80TileR2X4ZMM for eight activation rows (at xp + i·xpstride; output row i at dst +
// i·dststride bytes): each pair of weight blocks unpacked once for the eight, Z0..Z3
// accumulating activation rows 0..3 and Z4..Z7 rows 4..7; the same operations for each
// output, so the same bits. On a Sapphire Rapids class Xeon the weight unpacking (two
// VPBROADCASTW, the inserts, VCVTPH2PS) shares ports 0 and 5 with the products.
TEXT ·q80TileR2X8ZMM(SB), NOSPLIT, $0-64
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z16
	MOVQ         w+0(FP), R9
	MOVQ         wstride+8(FP), BX
	MOVQ         npairs+16(FP), R10
	MOVQ         xp+24(FP), DI
	MOVQ         xpstride+32(FP), R11
	LEAQ         (DI)(R11*1), R12
	LEAQ         (DI)(R11*2), R13
	LEAQ         (R12)(R11*2), R14
	MOVQ         R11, R15
	SHLQ         $2, R15              // rows 4..7 are rows 0..3 plus R15
	MOVQ         nb+40(FP), R11
	IMULQ        $96, R11
	MOVQ         dst+48(FP), AX
	MOVQ         dststride+56(FP), DX

q80z2x8pair:
	MOVQ   R9, SI
	LEAQ   (R9)(BX*1), R8
	MOVQ   nb+40(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

q80z2x8:
	Q80ZW(SI, R8, Y8, Z8, Z12, X15, Y15, X14)
	Q80ZMAC(DI, Z8, Z12, Z17, Z18, Z19, Z0)
	Q80ZMAC(R12, Z8, Z12, Z20, Z21, Z22, Z1)
	Q80ZMAC(R13, Z8, Z12, Z23, Z24, Z25, Z2)
	Q80ZMAC(R14, Z8, Z12, Z26, Z27, Z28, Z3)
	Q80ZMACI(DI, R15, Z8, Z12, Z29, Z30, Z31, Z4)
	Q80ZMACI(R12, R15, Z8, Z12, Z9, Z10, Z11, Z5)
	Q80ZMACI(R13, R15, Z8, Z12, Z17, Z18, Z19, Z6)
	Q80ZMACI(R14, R15, Z8, Z12, Z20, Z21, Z22, Z7)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $96, DI
	ADDQ $96, R12
	ADDQ $96, R13
	ADDQ $96, R14
	DECQ CX
	JNZ  q80z2x8

	SUBQ R11, DI
	SUBQ R11, R12
	SUBQ R11, R13
	SUBQ R11, R14

	// Rows 4..7's accumulators aside, rows 0..3 reduced and stored, then rows 4..7.
	VMOVAPS Z4, Z24
	VMOVAPS Z5, Z25
	VMOVAPS Z6, Z26
	VMOVAPS Z7, Z27
	Q80Z2X4HSUM(AX, SI, R8)
	VMOVAPS Z24, Z0
	VMOVAPS Z25, Z1
	VMOVAPS Z26, Z2
	VMOVAPS Z27, Z3
	LEAQ    (AX)(DX*4), CX
	Q80Z2X4HSUM(CX, SI, R8)

	ADDQ $8, AX
	LEAQ (R9)(BX*2), R9
	DECQ R10
	JNZ  q80z2x8pair
	VZEROUPPER
	RET

// func q80TileR4X1ZMM(w *byte, wstride, nquads int, xp *byte, nb int, dst *float32)
// q80TileR4X1VNNI on ZMM registers: Z0 holds weight rows 0 and 1, Z1 rows 2 and 3,
// against the activation row; the same bits. Each block it prefetches (PREFETCHT0)
// the next 136 bytes of the four rows after these, from their first: with the rows
// back to back (wstride = nb·34, as a decode's weights are) that is the whole of the
// next quad by the time this one ends. A decode of synth-256-Q8_0's short rows (272
// bytes) on a Sapphire Rapids class Xeon, 2 threads: tg32 +7-13%. A prefetch past the
// weights is harmless (it never faults).
TEXT ·q80TileR4X1ZMM(SB), NOSPLIT, $0-48
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z16
	MOVQ         w+0(FP), R11
	MOVQ         wstride+8(FP), BX
	MOVQ         nquads+16(FP), R12
	MOVQ         xp+24(FP), DI
	MOVQ         nb+32(FP), R13
	IMULQ        $96, R13
	MOVQ         dst+40(FP), AX

q80z4x1quad:
	LEAQ   (R11)(BX*4), R14
	MOVQ   R11, SI
	LEAQ   (R11)(BX*1), R8
	LEAQ   (R11)(BX*2), R9
	LEAQ   (R8)(BX*2), R10
	MOVQ   nb+32(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1

q80z4x1:
	PREFETCHT0 0(R14)
	PREFETCHT0 64(R14)
	PREFETCHT0 128(R14)
	ADDQ       $136, R14
	Q80ZW(SI, R8, Y4, Z4, Z6, X15, Y15, X14)
	Q80ZW(R9, R10, Y7, Z7, Z9, X13, Y13, X12)
	Q80ZMAC(DI, Z4, Z6, Z17, Z18, Z19, Z0)
	Q80ZMAC(DI, Z7, Z9, Z20, Z21, Z22, Z1)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $34, R9
	ADDQ $34, R10
	ADDQ $96, DI
	DECQ CX
	JNZ  q80z4x1
	SUBQ R13, DI

	// Rows 1 and 3 to Y4 and Y5, then q80TileR4X1VNNI's hsum8 of rows 0..3 (Y0 Y4 Y1 Y5).
	VEXTRACTF64X4 $1, Z0, Y4
	VEXTRACTF64X4 $1, Z1, Y5
	HALVES(Y0, Y1, Y8, Y15)
	HALVES(Y4, Y5, Y9, Y15)
	PAIRS(Y8, Y9, Y12, Y15)
	VHADDPS      Y12, Y12, Y13
	VEXTRACTF128 $1, Y13, X14
	VMOVLHPS     X14, X13, X13
	VMOVUPS      X13, (AX)

	ADDQ $16, AX
	LEAQ (R11)(BX*4), R11
	DECQ R12
	JNZ  q80z4x1quad
	VZEROUPPER
	RET
