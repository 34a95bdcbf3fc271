#include "textflag.h"
#include "neon_arm64.h"

// NEON forms of the float dots of f32.go and f16.go (neon_float_arm64.go): eight
// float32 lanes, each product rounded (FMUL) then added (FADD) as the Go code's
// s_l += float32(a·b), the lanes reduced as ((s0+s4)+(s1+s5))+((s2+s6)+(s3+s7)).
// BF16 widens exactly by a shift (SHLL #16).

#define WSHLL16(d, n)  WORD $(0x2E613800 | ((n)<<5) | (d)) // SHLL Vd.4S, Vn.4H, #16
#define WSHLL216(d, n) WORD $(0x6E613800 | ((n)<<5) | (d)) // SHLL2 Vd.4S, Vn.8H, #16
#define WFADDPS(d, n)  WORD $(0x7E30D800 | ((n)<<5) | (d)) // FADDP Sd, Vn.2S

// Eight products a·b (V0, V1 by V2, V3) added to the lanes V16, V17.
#define LANES8F \
	WFMUL4(0, 0, 2); \
	WFMUL4(1, 1, 3); \
	WFADD4(16, 16, 0); \
	WFADD4(17, 17, 1)

// The sum of the lanes into F16 and the return slot.
#define REDUCE8F \
	WFADD4(16, 16, 17); \
	WFADDP4(16, 16, 16); \
	WFADDPS(16, 16); \
	FMOVS F16, ret+24(FP); \
	RET

// func dotF32NEON(w, x *byte, n8 int) float32
// dotF32Go's lane sum over the first 8·n8 (≥ 8) elements.
TEXT ·dotF32NEON(SB), NOSPLIT, $0-28
	MOVD w+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n8+16(FP), R2
	WEOR(16, 16, 16)
	WEOR(17, 17, 17)

f32l:
	VLD1.P 32(R0), [V0.S4, V1.S4]
	VLD1.P 32(R1), [V2.S4, V3.S4]
	LANES8F
	SUBS $1, R2, R2
	BNE  f32l
	REDUCE8F

// func dotBF16F32NEON(w, x *byte, n8 int) float32
// dotBF16F32Go's lane sum over the first 8·n8 (≥ 8) elements.
TEXT ·dotBF16F32NEON(SB), NOSPLIT, $0-28
	MOVD w+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n8+16(FP), R2
	WEOR(16, 16, 16)
	WEOR(17, 17, 17)

bf32l:
	VLD1.P 16(R0), [V4.H8]
	VLD1.P 32(R1), [V2.S4, V3.S4]
	WSHLL16(0, 4)
	WSHLL216(1, 4)
	LANES8F
	SUBS $1, R2, R2
	BNE  bf32l
	REDUCE8F

// func dotBF16NEON(w, x *byte, n8 int) float32
// dotBF16Go's lane sum over the first 8·n8 (≥ 8) elements.
TEXT ·dotBF16NEON(SB), NOSPLIT, $0-28
	MOVD w+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n8+16(FP), R2
	WEOR(16, 16, 16)
	WEOR(17, 17, 17)

bf16l:
	VLD1.P 16(R0), [V4.H8]
	VLD1.P 16(R1), [V5.H8]
	WSHLL16(0, 4)
	WSHLL216(1, 4)
	WSHLL16(2, 5)
	WSHLL216(3, 5)
	LANES8F
	SUBS $1, R2, R2
	BNE  bf16l
	REDUCE8F
