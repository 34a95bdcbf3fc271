#include "textflag.h"

// NEON forms of flashattn.go's F16 row kernels (see neon_attn_arm64.go): eight elements
// a step, F16 widened exactly (FCVTL), one float32 operation per element (FMLA: one
// rounding; FMUL), narrowed to F16 round to nearest even (FCVTN).

#define AFCVTL(d, n)  WORD $(0x0E217800 | ((n)<<5) | (d)) // FCVTL Vd.4S, Vn.4H
#define AFCVTL2(d, n) WORD $(0x4E217800 | ((n)<<5) | (d)) // FCVTL2 Vd.4S, Vn.8H
#define AFMUL4(d, n, m) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d)) // FMUL Vd.4S, Vn.4S, Vm.4S
#define AFCVTN(d, n)  WORD $(0x0E216800 | ((n)<<5) | (d)) // FCVTN Vd.4H, Vn.4S
#define AFCVTN2(d, n) WORD $(0x4E216800 | ((n)<<5) | (d)) // FCVTN2 Vd.8H, Vn.4S

// func fmaRowF16NEON(acc *float32, v *uint16, p float32, n int)
// acc[d] = fmaf(p, v[d], acc[d]) for d < n, n a positive multiple of 8.
TEXT ·fmaRowF16NEON(SB), NOSPLIT, $0-32
	MOVD  acc+0(FP), R0
	MOVD  v+8(FP), R1
	FMOVS p+16(FP), F5
	MOVD  n+24(FP), R2
	VDUP  V5.S[0], V5.S4
	LSR   $3, R2

frow:
	VLD1.P 16(R1), [V0.H8]
	AFCVTL(1, 0)
	AFCVTL2(2, 0)
	VLD1   (R0), [V3.S4, V4.S4]
	VFMLA  V1.S4, V5.S4, V3.S4
	VFMLA  V2.S4, V5.S4, V4.S4
	VST1.P [V3.S4, V4.S4], 32(R0)
	SUBS   $1, R2, R2
	BNE    frow
	RET

// func madF16NEON(acc, v *uint16, s float32, n int)
// acc[d] = F16(fmaf(v[d], s, acc[d])) for d < n, n a positive multiple of 8.
TEXT ·madF16NEON(SB), NOSPLIT, $0-32
	MOVD  acc+0(FP), R0
	MOVD  v+8(FP), R1
	FMOVS s+16(FP), F5
	MOVD  n+24(FP), R2
	VDUP  V5.S[0], V5.S4
	LSR   $3, R2

mrow:
	VLD1.P 16(R1), [V0.H8]
	VLD1   (R0), [V3.H8]
	AFCVTL(1, 0)
	AFCVTL2(2, 0)
	AFCVTL(6, 3)
	AFCVTL2(7, 3)
	VFMLA  V1.S4, V5.S4, V6.S4
	VFMLA  V2.S4, V5.S4, V7.S4
	AFCVTN(3, 6)
	AFCVTN2(3, 7)
	VST1.P [V3.H8], 16(R0)
	SUBS   $1, R2, R2
	BNE    mrow
	RET

// func scaleF16NEON(acc *uint16, s float32, n int)
// acc[d] = F16(acc[d]·s) for d < n, n a positive multiple of 8.
TEXT ·scaleF16NEON(SB), NOSPLIT, $0-24
	MOVD  acc+0(FP), R0
	FMOVS s+8(FP), F5
	MOVD  n+16(FP), R2
	VDUP  V5.S[0], V5.S4
	LSR   $3, R2

srow:
	VLD1   (R0), [V3.H8]
	AFCVTL(6, 3)
	AFCVTL2(7, 3)
	AFMUL4(6, 6, 5)
	AFMUL4(7, 7, 5)
	AFCVTN(3, 6)
	AFCVTN2(3, 7)
	VST1.P [V3.H8], 16(R0)
	SUBS   $1, R2, R2
	BNE    srow
	RET

// LD4 {V0.H-V3.H}[j], [Xn], #8: four F16 values of one key into lane j of V0-V3.
#define ALD4H(j, n) WORD $(0x0DFF6000 | (((j)>>2)<<30) | ((((j)>>1)&1)<<12) | (((j)&1)<<11) | ((n)<<5))
#define AFMLAE(d, n, m, i) WORD $(0x4F801000 | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d)) // FMLA Vd.4S, Vn.4S, Vm.S[i]
#define AFMULE(d, n, m, i) WORD $(0x4F809000 | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d)) // FMUL Vd.4S, Vn.4S, Vm.S[i]

// Element i of the four loaded: keys 0-3 into V16, 4-7 into V17, times q (V8.S[i]).
#define KSTEP(i, r) \
	AFCVTL(4, r); \
	AFCVTL2(5, r); \
	AFMLAE(16, 4, 8, i); \
	AFMLAE(17, 5, 8, i)

// func scores8F16NEON(k *uint16, ks int, q *float32, hd int, scale float32, s *float32)
// s[j] = (fmaf chain over d < hd of q[d]·key j[d], from 0)·scale for the eight keys
// j < 8 at k + j·ks (bytes), hd a positive multiple of 4: the keys in lanes, four
// elements of each a step (LD4 to lanes transposes them).
TEXT ·scores8F16NEON(SB), NOSPLIT, $0-48
	MOVD  k+0(FP), R3
	MOVD  ks+8(FP), R11
	MOVD  q+16(FP), R1
	MOVD  hd+24(FP), R2
	FMOVS scale+32(FP), F9
	MOVD  s+40(FP), R0
	ADD   R11, R3, R4
	ADD   R11, R4, R5
	ADD   R11, R5, R6
	ADD   R11, R6, R7
	ADD   R11, R7, R8
	ADD   R11, R8, R9
	ADD   R11, R9, R10
	VEOR  V16.B16, V16.B16, V16.B16
	VEOR  V17.B16, V17.B16, V17.B16
	LSR   $2, R2

kstep:
	ALD4H(0, 3)
	ALD4H(1, 4)
	ALD4H(2, 5)
	ALD4H(3, 6)
	ALD4H(4, 7)
	ALD4H(5, 8)
	ALD4H(6, 9)
	ALD4H(7, 10)
	VLD1.P 16(R1), [V8.S4]
	KSTEP(0, 0)
	KSTEP(1, 1)
	KSTEP(2, 2)
	KSTEP(3, 3)
	SUBS $1, R2, R2
	BNE  kstep

	AFMULE(16, 16, 9, 0)
	AFMULE(17, 17, 9, 0)
	VST1 [V16.S4, V17.S4], (R0)
	RET
