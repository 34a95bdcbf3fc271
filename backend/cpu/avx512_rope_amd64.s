#include "textflag.h"

// The AVX-512 kernel of RoPE's rotation of adjacent pairs (rotate), with its bits.

// evenSign is the sign bit in the even lanes: negating x1·s there turns the addition
// of the two products into rotate's subtraction, exactly.
DATA evenSign<>+0(SB)/4, $0x80000000
DATA evenSign<>+4(SB)/4, $0
GLOBL evenSign<>(SB), RODATA|NOPTR, $8

// func rotatePairsAVX512(x, cache *float32, n int)
// For the n/2 pairs (x[2i], x[2i+1]), n even, with (c, s) = (cache[2i], cache[2i+1]):
// x[2i] = x[2i]·c − x[2i+1]·s and x[2i+1] = x[2i]·s + x[2i+1]·c, each product
// rounded to float32; eight pairs a register, the last ones under a mask.
TEXT ·rotatePairsAVX512(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), DI
	MOVQ         cache+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSD evenSign<>(SB), Z31

rp16:
	CMPQ      CX, $16
	JLT       rptail
	VMOVUPS   (DI), Z0
	VMOVUPS   (SI), Z1
	VMOVSLDUP Z1, Z2             // c c
	VMOVSHDUP Z1, Z3             // s s
	VPERMILPS $0xb1, Z0, Z4      // x1 x0
	VMULPS    Z2, Z0, Z0         // x0·c x1·c
	VMULPS    Z3, Z4, Z4         // x1·s x0·s
	VXORPS    Z31, Z4, Z4        // −x1·s x0·s
	VADDPS    Z4, Z0, Z0
	VMOVUPS   Z0, (DI)
	ADDQ      $64, DI
	ADDQ      $64, SI
	SUBQ      $16, CX
	JMP       rp16

rptail:
	TESTQ     CX, CX
	JEQ       rpdone
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	VMOVUPS.Z (DI), K1, Z0
	VMOVUPS.Z (SI), K1, Z1
	VMOVSLDUP Z1, Z2
	VMOVSHDUP Z1, Z3
	VPERMILPS $0xb1, Z0, Z4
	VMULPS    Z2, Z0, Z0
	VMULPS    Z3, Z4, Z4
	VXORPS    Z31, Z4, Z4
	VADDPS    Z4, Z0, Z0
	VMOVUPS   Z0, K1, (DI)

rpdone:
	VZEROUPPER
	RET
