#include "textflag.h"

// AVX-512 kernels of the attention (flashattn.go), with the bits of its Go code.

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
