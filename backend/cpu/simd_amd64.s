#include "textflag.h"

// F16 row kernels of the one-chunk attention (AVX2, FMA and F16C; every x86 SIMD level)
// and the pool's spin-wait hint.

// func madF16(acc, v *uint16, s float32, n int)
// acc[d] = F16(fma(F32(v[d]), s, F32(acc[d]))), rounded to nearest even, for d < n
// (a multiple of 8): ggml_vec_mad_f16's scalar loop, which GCC contracts into an FMA.
TEXT ·madF16(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), SI
	MOVQ         v+8(FP), DI
	VBROADCASTSS s+16(FP), Y2
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	TESTQ        CX, CX
	JEQ          mdone

mloop:
	VCVTPH2PS   (DI), Y1
	VCVTPH2PS   (SI), Y0
	VFMADD231PS Y2, Y1, Y0
	VCVTPS2PH   $0, Y0, (SI)
	ADDQ      $16, SI
	ADDQ      $16, DI
	DECQ      CX
	JNE       mloop

mdone:
	VZEROUPPER
	RET

// func scaleF16(acc *uint16, s float32, n int)
// acc[d] = F16(F32(acc[d])·s) for d < n (a multiple of 8): ggml_vec_scale_f16's loop.
TEXT ·scaleF16(SB), NOSPLIT, $0-24
	MOVQ         acc+0(FP), SI
	VBROADCASTSS s+8(FP), Y2
	MOVQ         n+16(FP), CX
	SHRQ         $3, CX
	TESTQ        CX, CX
	JEQ          cdone

cloop:
	VCVTPH2PS (SI), Y0
	VMULPS    Y2, Y0, Y0
	VCVTPS2PH $0, Y0, (SI)
	ADDQ      $16, SI
	DECQ      CX
	JNE       cloop

cdone:
	VZEROUPPER
	RET

// func spinPause()
// One PAUSE: the spin-wait hint of the pool's polling loops.
TEXT ·spinPause(SB), NOSPLIT, $0-0
	PAUSE
	RET
