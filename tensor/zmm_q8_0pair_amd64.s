#include "textflag.h"
#include "avx2_hsum_amd64.h"

// q80TileR2X4VNNI on ZMM registers with two activation rows to a register (one
// output's eight lanes per half) and each weight block broadcast to both halves:
// activation rows prepared in pairs, so that no activation block needs a 256-bit
// broadcast (which costs a shuffle on Zen 4). The same operations lane for lane and
// the same hsum8 of each output's lanes as the YMM kernel: its bits (dotQ8_0x86Go's).
//
// A pair block is 192 bytes, the two rows' prepared blocks (q80XPrepVNNI) interleaved
// by field: the quants of row 0 then row 1, their corrections, their dx (eight each).

// Q80PPREP writes the fields of the block whose quants are at qoff(SI) and whose scale
// (f16) is at (SI) into the pair block at (DI), half h (0 or 32). Needs Y16 = 0x80
// bytes; Y0..Y3 are clobbered.
#define Q80PPREP(qoff, h) \
	VMOVDQU      qoff(SI), Y0; \
	VPXOR        Y1, Y1, Y1; \
	VPDPBUSD     Y0, Y16, Y1; \
	VPXOR        Y2, Y2, Y2; \
	VPSUBD       Y1, Y2, Y2; \
	VPBROADCASTW (SI), X3; \
	VCVTPH2PS    X3, Y3; \
	VMOVDQU      Y0, h(DI); \
	VMOVDQU      Y2, 64+h(DI); \
	VMOVUPS      Y3, 128+h(DI)

// func q80XPrepPairZMM(x0, x1 *byte, nb int, dst *byte)
// Writes the pair blocks of nb ≥ 1 Q8_0 blocks of the rows at x0 and x1 to dst.
TEXT ·q80XPrepPairZMM(SB), NOSPLIT, $0-32
	MOVQ         x0+0(FP), SI
	MOVQ         x1+8(FP), R8
	MOVQ         nb+16(FP), CX
	MOVQ         dst+24(FP), DI
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Y16

q80pprep:
	Q80PPREP(2, 0)
	XCHGQ SI, R8
	Q80PPREP(2, 32)
	XCHGQ SI, R8
	ADDQ  $34, SI
	ADDQ  $34, R8
	ADDQ  $192, DI
	DECQ  CX
	JNZ   q80pprep
	VZEROUPPER
	RET

// func q81XPrepPairZMM(x0, x1 *byte, nb int, dst *byte)
// q80XPrepPairZMM of Q8_1 rows (the scale at 0, the quants at 4).
TEXT ·q81XPrepPairZMM(SB), NOSPLIT, $0-32
	MOVQ         x0+0(FP), SI
	MOVQ         x1+8(FP), R8
	MOVQ         nb+16(FP), CX
	MOVQ         dst+24(FP), DI
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Y16

q81pprep:
	Q80PPREP(4, 0)
	XCHGQ SI, R8
	Q80PPREP(4, 32)
	XCHGQ SI, R8
	ADDQ  $36, SI
	ADDQ  $36, R8
	ADDQ  $192, DI
	DECQ  CX
	JNZ   q81pprep
	VZEROUPPER
	RET

// Q80PW puts the biased quants (w+128) of the weight block at (p), broadcast to both
// halves, in wz and its dw, broadcast, in dw. Needs Z16 = 0x80 bytes; ya is clobbered.
#define Q80PW(p, wz, dw, ya) \
	VBROADCASTI64X4 2(p), wz; \
	VPXORD          Z16, wz, wz; \
	VPBROADCASTW    (p), ya; \
	VCVTPH2PS       ya, dw

// Q80PMAC adds the pair block at (xp), its quants in xq, to acc for the weight block
// in wu, dw: the corrections in t, plus VPDPBUSD, converted, times dw·dx (m), by one
// FMA.
#define Q80PMAC(xp, xq, wu, dw, t, m, acc) \
	VMOVDQU64   64(xp), t; \
	VPDPBUSD    xq, wu, t; \
	VCVTDQ2PS   t, t; \
	VMULPS      128(xp), dw, m; \
	VFMADD231PS m, t, acc

// func q80TileR2X4PairZMM(w *byte, wstride, npairs int, xp *byte, xpstride, nb int, dst *float32, dststride int)
// q80TileR2X4VNNI over activation rows 0 and 1 prepared by q80XPrepPairZMM at xp, rows 2
// and 3 at xp+2·xpstride: Z0, Z1 hold weight row 0 against activation rows (0, 1) and
// (2, 3), Z2, Z3 row 1; the same bits.
TEXT ·q80TileR2X4PairZMM(SB), NOSPLIT, $0-64
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z16
	MOVQ         w+0(FP), R9
	MOVQ         wstride+8(FP), BX
	MOVQ         npairs+16(FP), R10
	MOVQ         xp+24(FP), DI
	MOVQ         xpstride+32(FP), R11
	LEAQ         (DI)(R11*2), R12
	MOVQ         nb+40(FP), R11
	IMULQ        $192, R11
	MOVQ         dst+48(FP), AX
	MOVQ         dststride+56(FP), DX

q80p2x4pair:
	MOVQ   R9, SI
	LEAQ   (R9)(BX*1), R8
	MOVQ   nb+40(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

q80p2x4:
	Q80PW(SI, Z8, Z12, Y15)
	Q80PW(R8, Z9, Z13, Y14)
	VMOVDQU64 0(DI), Z17
	VMOVDQU64 0(R12), Z18
	Q80PMAC(DI, Z17, Z8, Z12, Z19, Z20, Z0)
	Q80PMAC(R12, Z18, Z8, Z12, Z21, Z22, Z1)
	Q80PMAC(DI, Z17, Z9, Z13, Z23, Z24, Z2)
	Q80PMAC(R12, Z18, Z9, Z13, Z25, Z26, Z3)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $192, DI
	ADDQ $192, R12
	DECQ CX
	JNZ  q80p2x4

	SUBQ R11, DI
	SUBQ R11, R12

	// The eight outputs' lanes to Y0..Y7 as q80TileR2X4VNNI holds them (weight row 0
	// against activation rows 0..3, then row 1), then its hsum8.
	VEXTRACTF64X4 $1, Z3, Y7
	VMOVAPS       Y3, Y6
	VEXTRACTF64X4 $1, Z2, Y5
	VMOVAPS       Y2, Y4
	VEXTRACTF64X4 $1, Z1, Y3
	VMOVAPS       Y1, Y2
	VEXTRACTF64X4 $1, Z0, Y1
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
	JNZ  q80p2x4pair
	VZEROUPPER
	RET
