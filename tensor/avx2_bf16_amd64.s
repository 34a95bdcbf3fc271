#include "textflag.h"

// func dotBF16F32AVX2(w *uint16, x *float32, n8 int, s *[8]float32)
// The eight lanes of DotBF16F32 over n8 ≥ 1 groups of eight: s[l] += bf16(w)·x, the
// product rounded, then the sum (no FMA), as the Go code.
TEXT ·dotBF16F32AVX2(SB), NOSPLIT, $0-32
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   n8+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	CMPQ   CX, $2
	JLT    bf16one

bf16two:
	VPMOVZXWD (SI), Y2
	VPMOVZXWD 16(SI), Y3
	VPSLLD    $16, Y2, Y2
	VPSLLD    $16, Y3, Y3
	VMULPS    (DI), Y2, Y2
	VMULPS    32(DI), Y3, Y3
	VADDPS    Y2, Y0, Y0
	VADDPS    Y3, Y0, Y0
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $2, CX
	CMPQ      CX, $2
	JGE       bf16two

bf16one:
	TESTQ     CX, CX
	JZ        bf16done
	VPMOVZXWD (SI), Y2
	VPSLLD    $16, Y2, Y2
	VMULPS    (DI), Y2, Y2
	VADDPS    Y2, Y0, Y0

bf16done:
	MOVQ    s+24(FP), AX
	VMOVUPS Y0, (AX)
	VZEROUPPER
	RET
