#include "textflag.h"

// AVX-512 kernels of the one-chunk attention (attendOneChunk, attendOneChunks), with the
// bits of its Go code.

// lane15 is 15 in every lane: the index vector that broadcasts a register's last lane.
DATA lane15<>+0(SB)/8, $0x0000000f0000000f
DATA lane15<>+8(SB)/8, $0x0000000f0000000f
DATA lane15<>+16(SB)/8, $0x0000000f0000000f
DATA lane15<>+24(SB)/8, $0x0000000f0000000f
DATA lane15<>+32(SB)/8, $0x0000000f0000000f
DATA lane15<>+40(SB)/8, $0x0000000f0000000f
DATA lane15<>+48(SB)/8, $0x0000000f0000000f
DATA lane15<>+56(SB)/8, $0x0000000f0000000f
GLOBL lane15<>(SB), RODATA|NOPTR, $64

// SCANMAX(shift, v, t): t[i] = v[i] > v[i-shift] ? v[i] : v[i-shift] (v[i-shift] is
// -Inf, Z29, before lane 0): one step of a prefix maximum that keeps the earlier of
// equal values, the running maximum's rule (x > m); v holds no NaN.
#define SCANMAX(shift, v, t) \
	VALIGND $(16-shift), Z29, v, t; \
	VMAXPS  t, v, t

// func chunkMaxAVX512(s *float32, raised *bool, n int, scale float32)
// chunkMaxGo: for j < n in order, x = float32(s[j]·scale); raised[j] = x > m (m, the
// running maximum, starts at -Inf); s[j] = m - x where raised, and m becomes x; else
// s[j] = x - m. Sixteen keys a step: their maxima by a prefix scan from the carried m.
TEXT ·chunkMaxAVX512(SB), NOSPLIT, $0-28
	MOVQ         s+0(FP), SI
	MOVQ         raised+8(FP), DI
	MOVQ         n+16(FP), CX
	VBROADCASTSS scale+24(FP), Z30
	MOVL         $0xff800000, AX
	VPBROADCASTD AX, Z29            // -Inf
	VMOVAPS      Z29, Z28           // m, in every lane
	MOVL         $1, AX
	VPBROADCASTD AX, Z27            // true
	VMOVDQU32    lane15<>(SB), Z26
	KXNORW       K1, K1, K1         // all sixteen lanes
	TESTQ        CX, CX
	JLE          cmdone

cmloop:
	CMPQ CX, $16
	JGE  cmstep
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1                    // the last n lanes

cmstep:
	VMOVUPS.Z   (SI), K1, Z0
	VMULPS      Z30, Z0, Z0         // x
	VMAXPS      Z29, Z0, Z1         // x > -Inf ? x : -Inf (no NaN)
	SCANMAX(1, Z1, Z2)
	SCANMAX(2, Z2, Z3)
	SCANMAX(4, Z3, Z4)
	SCANMAX(8, Z4, Z5)
	VMAXPS      Z28, Z5, Z5         // the running maxima after each key
	VALIGND     $15, Z28, Z5, Z8    // ... before each key
	VCMPPS      $0x1e, Z8, Z0, K2   // raised: x > m
	VSUBPS      Z8, Z0, Z6          // x - m
	VSUBPS      Z0, Z8, K2, Z6      // m - x where raised
	VMOVUPS     Z6, K1, (SI)
	VMOVDQA32.Z Z27, K2, Z7
	VPMOVDB     Z7, K1, (DI)
	VPERMPS     Z5, Z26, Z28        // m after the sixteen keys
	ADDQ        $64, SI
	ADDQ        $16, DI
	SUBQ        $16, CX
	JG          cmloop

cmdone:
	VZEROUPPER
	RET

// func chunkMax4AVX512(s *float32, raised *bool, n int, scale float32)
// chunkMax4Go: chunkMaxAVX512 over chunkHeads heads' scores interleaved key by key
// (s[4j+g] is head g's key j; n a multiple of 4), each head with its own running
// maximum: four keys of four heads a step, the scan by four and eight lanes.
TEXT ·chunkMax4AVX512(SB), NOSPLIT, $0-28
	MOVQ         s+0(FP), SI
	MOVQ         raised+8(FP), DI
	MOVQ         n+16(FP), CX
	VBROADCASTSS scale+24(FP), Z30
	MOVL         $0xff800000, AX
	VPBROADCASTD AX, Z29            // -Inf
	VMOVAPS      Z29, Z28           // the heads' m, in each 128-bit lane
	MOVL         $1, AX
	VPBROADCASTD AX, Z27            // true
	KXNORW       K1, K1, K1         // all sixteen lanes
	TESTQ        CX, CX
	JLE          c4mdone

c4mloop:
	CMPQ CX, $16
	JGE  c4mstep
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1                    // the last n lanes

c4mstep:
	VMOVUPS.Z   (SI), K1, Z0
	VMULPS      Z30, Z0, Z0         // x
	VMAXPS      Z29, Z0, Z1         // x > -Inf ? x : -Inf (no NaN)
	SCANMAX(4, Z1, Z2)
	SCANMAX(8, Z2, Z5)
	VMAXPS      Z28, Z5, Z5         // the running maxima after each key
	VALIGND     $12, Z28, Z5, Z8    // ... before each key
	VCMPPS      $0x1e, Z8, Z0, K2   // raised: x > m
	VSUBPS      Z8, Z0, Z6          // x - m
	VSUBPS      Z0, Z8, K2, Z6      // m - x where raised
	VMOVUPS     Z6, K1, (SI)
	VMOVDQA32.Z Z27, K2, Z7
	VPMOVDB     Z7, K1, (DI)
	VSHUFF32X4  $0xff, Z5, Z5, Z28  // m after the four keys
	ADDQ        $64, SI
	ADDQ        $16, DI
	SUBQ        $16, CX
	JG          c4mloop

c4mdone:
	VZEROUPPER
	RET

// KEYS2(zg, yg, xg, off, q): zg = head g's products of keys j (low half) and j+1 (high half):
// their eight F16 elements at SI+off and AX+off, widened, times q (head g's query,
// in both halves).
#define KEYS2(zg, yg, xg, off, q) \
	VMOVDQU     (SI)(off*1), xg; \
	VINSERTI128 $1, (AX)(off*1), yg, yg; \
	VCVTPH2PS   yg, zg; \
	VMULPS      q, zg, zg

// WIDENADD(y, t): Z12 += float64 of the eight float32 lanes y (t its Z scratch).
#define WIDENADD(y, t) \
	VCVTPS2PD y, t; \
	VADDPD    t, Z12, Z12

// func scores4x8F16AVX512(k *uint16, ks int, offs *[4]int, q *[32]float32, nkeys int, s *float32)
// s[4j+g] = float32(Σ float64(F16(k_jg[d])·q[8g+d]) added in order d = 0, ..., 7, from
// +0) for j < nkeys, g < 4, k_jg the eight F16 values at k + j·ks + offs[g] bytes:
// the scores of attendOneChunks (scoreF16Go), two keys of four heads a step, the
// products transposed so that each float64 addition takes one element of all eight.
TEXT ·scores4x8F16AVX512(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), SI
	MOVQ ks+8(FP), R8
	MOVQ offs+16(FP), BX
	MOVQ 0(BX), R9
	MOVQ 8(BX), R10
	MOVQ 16(BX), R11
	MOVQ 24(BX), R12
	MOVQ q+24(FP), DI
	VBROADCASTF64X4 0(DI), Z28
	VBROADCASTF64X4 32(DI), Z29
	VBROADCASTF64X4 64(DI), Z30
	VBROADCASTF64X4 96(DI), Z31
	MOVQ nkeys+32(FP), CX
	MOVQ s+40(FP), DX
	TESTQ CX, CX
	JLE   s48done

s48loop:
	LEAQ (SI)(R8*1), AX
	CMPQ CX, $2
	JGE  s48two
	MOVQ SI, AX             // one key left: the second half repeats it, unstored

s48two:
	KEYS2(Z0, Y0, X0, R9, Z28)
	KEYS2(Z1, Y1, X1, R10, Z29)
	KEYS2(Z2, Y2, X2, R11, Z30)
	KEYS2(Z3, Y3, X3, R12, Z31)
	VUNPCKLPS  Z1, Z0, Z4
	VUNPCKHPS  Z1, Z0, Z5
	VUNPCKLPS  Z3, Z2, Z6
	VUNPCKHPS  Z3, Z2, Z7
	VSHUFPS    $0x44, Z6, Z4, Z8  // elements 0 and 4 of the eight (key, head) rows
	VSHUFPS    $0xee, Z6, Z4, Z9  // 1 and 5
	VSHUFPS    $0x44, Z7, Z5, Z10 // 2 and 6
	VSHUFPS    $0xee, Z7, Z5, Z11 // 3 and 7
	VSHUFF32X4 $0xd8, Z8, Z8, Z8  // [element 0 of the rows | element 4]
	VSHUFF32X4 $0xd8, Z9, Z9, Z9
	VSHUFF32X4 $0xd8, Z10, Z10, Z10
	VSHUFF32X4 $0xd8, Z11, Z11, Z11
	VPXORQ     Z12, Z12, Z12
	WIDENADD(Y8, Z13)
	WIDENADD(Y9, Z14)
	WIDENADD(Y10, Z15)
	WIDENADD(Y11, Z16)
	VEXTRACTF64X4 $1, Z8, Y8
	WIDENADD(Y8, Z13)
	VEXTRACTF64X4 $1, Z9, Y9
	WIDENADD(Y9, Z14)
	VEXTRACTF64X4 $1, Z10, Y10
	WIDENADD(Y10, Z15)
	VEXTRACTF64X4 $1, Z11, Y11
	WIDENADD(Y11, Z16)
	VCVTPD2PS Z12, Y12
	CMPQ      CX, $2
	JLT       s48one
	VMOVUPS   Y12, (DX)
	LEAQ      (SI)(R8*2), SI
	ADDQ      $32, DX
	SUBQ      $2, CX
	JG        s48loop
	JMP       s48done

s48one:
	VMOVUPS X12, (DX)

s48done:
	VZEROUPPER
	RET

// ROWS2(zr, yr, xr, a, b, q): zr = the products of the eight F16 values at a (low
// half) and at b (high half), widened, times q (the query's eight, in both halves).
#define ROWS2(zr, yr, xr, a, b, q) \
	VMOVDQU     a, xr; \
	VINSERTI128 $1, b, yr, yr; \
	VCVTPH2PS   yr, zr; \
	VMULPS      q, zr, zr

// func scoresF16x8AVX512(k *uint16, ks int, q *float32, hd, n8 int, s *float32)
// s[j] = float32(Σ float64(F16(k_j[d])·q[d]) added in order d < hd, from +0) for the
// 8·n8 rows k_j = k + j·ks bytes (hd a multiple of 8): attendOneChunk's scores for heads
// under 64 elements (scoreF16Go), eight keys a step, each eight elements of the eight
// rows transposed so that each float64 addition takes one element of all eight.
TEXT ·scoresF16x8AVX512(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), SI
	MOVQ ks+8(FP), R8
	MOVQ q+16(FP), DI
	MOVQ hd+24(FP), R11
	SHRQ $3, R11          // chunks of eight
	MOVQ n8+32(FP), R10
	MOVQ s+40(FP), DX
	LEAQ (R8)(R8*2), R13  // 3·ks
	TESTQ R10, R10
	JEQ   sxdone
	TESTQ R11, R11
	JEQ   sxdone

sxkeys:
	VPXORQ Z12, Z12, Z12
	MOVQ   SI, AX         // rows 0-3
	LEAQ   (SI)(R8*4), BX // rows 4-7
	MOVQ   DI, R9
	MOVQ   R11, CX

sxchunk:
	VBROADCASTF64X4 (R9), Z31
	ROWS2(Z0, Y0, X0, (AX), (BX), Z31)
	ROWS2(Z1, Y1, X1, (AX)(R8*1), (BX)(R8*1), Z31)
	ROWS2(Z2, Y2, X2, (AX)(R8*2), (BX)(R8*2), Z31)
	ROWS2(Z3, Y3, X3, (AX)(R13*1), (BX)(R13*1), Z31)
	VUNPCKLPS  Z1, Z0, Z4
	VUNPCKHPS  Z1, Z0, Z5
	VUNPCKLPS  Z3, Z2, Z6
	VUNPCKHPS  Z3, Z2, Z7
	VSHUFPS    $0x44, Z6, Z4, Z8  // elements 0 and 4 of the eight rows
	VSHUFPS    $0xee, Z6, Z4, Z9  // 1 and 5
	VSHUFPS    $0x44, Z7, Z5, Z10 // 2 and 6
	VSHUFPS    $0xee, Z7, Z5, Z11 // 3 and 7
	VSHUFF32X4 $0xd8, Z8, Z8, Z8  // [element 0 of the rows | element 4]
	VSHUFF32X4 $0xd8, Z9, Z9, Z9
	VSHUFF32X4 $0xd8, Z10, Z10, Z10
	VSHUFF32X4 $0xd8, Z11, Z11, Z11
	WIDENADD(Y8, Z13)
	WIDENADD(Y9, Z14)
	WIDENADD(Y10, Z15)
	WIDENADD(Y11, Z16)
	VEXTRACTF64X4 $1, Z8, Y8
	WIDENADD(Y8, Z13)
	VEXTRACTF64X4 $1, Z9, Y9
	WIDENADD(Y9, Z14)
	VEXTRACTF64X4 $1, Z10, Y10
	WIDENADD(Y10, Z15)
	VEXTRACTF64X4 $1, Z11, Y11
	WIDENADD(Y11, Z16)
	ADDQ $16, AX
	ADDQ $16, BX
	ADDQ $32, R9
	DECQ CX
	JNE  sxchunk
	VCVTPD2PS Z12, Y12
	VMOVUPS   Y12, (DX)
	LEAQ      (SI)(R8*8), SI
	ADDQ      $32, DX
	DECQ      R10
	JNE       sxkeys

sxdone:
	VZEROUPPER
	RET
