#include "textflag.h"

// AVX2 (no AVX-512) kernels of the x86 lane orders of Q4_1 and Q4_0. Q4_1 (dotQ4_1x86Go): per
// block, VPMADDUBSW of the unsigned nibbles (element order) against the Q8_1 quants
// and VPMADDWD by ones leave lane l with the exact sum over elements 4l..4l+3; one
// VFMADD231PS with dw·dx; hsum_float_8 at the end. The caller adds summs.

DATA q41nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q41nib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q41nib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q41nib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q41nib<>(SB), RODATA|NOPTR, $32

DATA q41ones<>+0(SB)/8, $0x0001000100010001
DATA q41ones<>+8(SB)/8, $0x0001000100010001
DATA q41ones<>+16(SB)/8, $0x0001000100010001
DATA q41ones<>+24(SB)/8, $0x0001000100010001
GLOBL q41ones<>(SB), RODATA|NOPTR, $32

// q41shift: VPSRLVD counts, 0 for the low 128 bits (low nibbles, elements 0..15) and
// 4 for the high 128 bits (high nibbles, elements 16..31).
DATA q41shift<>+0(SB)/8, $0
DATA q41shift<>+8(SB)/8, $0
DATA q41shift<>+16(SB)/8, $0x0000000400000004
DATA q41shift<>+24(SB)/8, $0x0000000400000004
GLOBL q41shift<>(SB), RODATA|NOPTR, $32

// func dotQ4_1x86AVX2(w, x *byte, nb int) float32
// hsum_float_8 of the lanes of dotQ4_1x86Go over nb ≥ 1 blocks (without summs).
TEXT ·dotQ4_1x86AVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  Y15, Y15, Y15
	VMOVDQU q41shift<>(SB), Y11
	VMOVDQU q41nib<>(SB), Y12
	VMOVDQU q41ones<>(SB), Y13

q41loop:
	VBROADCASTI128 4(SI), Y8
	VPSRLVD        Y11, Y8, Y8
	VPAND          Y12, Y8, Y8
	VPMADDUBSW     4(DI), Y8, Y0
	VPMADDWD       Y13, Y0, Y0
	VCVTDQ2PS      Y0, Y0
	VPBROADCASTW   (SI), X1
	VPBROADCASTW   (DI), X2
	VCVTPH2PS      X1, Y1
	VCVTPH2PS      X2, Y2
	VMULPS         Y2, Y1, Y1
	VFMADD231PS    Y1, Y0, Y15
	ADDQ           $20, SI
	ADDQ           $36, DI
	DECQ           CX
	JNZ            q41loop

	VEXTRACTF128 $1, Y15, X0
	VADDPS       X15, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

DATA q41eights<>+0(SB)/8, $0x0808080808080808
DATA q41eights<>+8(SB)/8, $0x0808080808080808
DATA q41eights<>+16(SB)/8, $0x0808080808080808
DATA q41eights<>+24(SB)/8, $0x0808080808080808
GLOBL q41eights<>(SB), RODATA|NOPTR, $32

// func dotQ4_0x86AVX2(w, x *byte, nb int) float32
// dotQ4_0x86Go over nb ≥ 1 blocks: the lanes of Σ u·x − Σ 8·x (VPMADDUBSW, each exact
// in words, subtracted), VPMADDWD by ones, one VFMADD231PS with dw·dx; hsum_float_8.
TEXT ·dotQ4_0x86AVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  Y15, Y15, Y15
	VMOVDQU q41shift<>(SB), Y11
	VMOVDQU q41nib<>(SB), Y12
	VMOVDQU q41ones<>(SB), Y13
	VMOVDQU q41eights<>(SB), Y14

q40xloop:
	VBROADCASTI128 2(SI), Y8
	VPSRLVD        Y11, Y8, Y8
	VPAND          Y12, Y8, Y8
	VPMADDUBSW     2(DI), Y8, Y0
	VPMADDUBSW     2(DI), Y14, Y1
	VPSUBW         Y1, Y0, Y0
	VPMADDWD       Y13, Y0, Y0
	VCVTDQ2PS      Y0, Y0
	VPBROADCASTW   (SI), X1
	VPBROADCASTW   (DI), X2
	VCVTPH2PS      X1, Y1
	VCVTPH2PS      X2, Y2
	VMULPS         Y2, Y1, Y1
	VFMADD231PS    Y1, Y0, Y15
	ADDQ           $18, SI
	ADDQ           $34, DI
	DECQ           CX
	JNZ            q40xloop

	VEXTRACTF128 $1, Y15, X0
	VADDPS       X15, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET
