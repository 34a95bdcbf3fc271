#include "textflag.h"

// ggml_v_expf (simd.go's vexpf) in sixteen float32 lanes, as llama.cpp's AVX-512 build
// computes it: true float32 FMAs and _mm512_scalef_ps (VSCALEFPS); and its users, the
// softmax's exponentials and SwiGLU.

// Constants of vexpf, one float32 each.
DATA vexpz<>+0(SB)/4, $0x3fb8aa3b  // 0x1.715476p+0
DATA vexpz<>+4(SB)/4, $0x4b400000  // 0x1.8p23
DATA vexpz<>+8(SB)/4, $0x3f317200  // 0x1.62e4p-1
DATA vexpz<>+12(SB)/4, $0x35bfbe8e // 0x1.7f7d1cp-20
DATA vexpz<>+16(SB)/4, $0x3c072010 // 0x1.0e4020p-7
DATA vexpz<>+20(SB)/4, $0x3d2b9f17 // 0x1.573e2ep-5
DATA vexpz<>+24(SB)/4, $0x3e2aaf33 // 0x1.555e66p-3
DATA vexpz<>+28(SB)/4, $0x3efffedb // 0x1.fffdb6p-2
DATA vexpz<>+32(SB)/4, $0x3f7ffff6 // 0x1.ffffecp-1
DATA vexpz<>+36(SB)/4, $0x3f800000 // 1
DATA vexpz<>+40(SB)/4, $0x43400000 // 192
DATA vexpz<>+44(SB)/4, $0x7fffffff // |.| mask
DATA vexpz<>+48(SB)/4, $0x7f800000 // +Inf
GLOBL vexpz<>(SB), RODATA|NOPTR, $52

// VEXPCONST loads vexpf's constants into Z16-Z28.
#define VEXPCONST \
	VBROADCASTSS vexpz<>+0(SB), Z16; \
	VBROADCASTSS vexpz<>+4(SB), Z17; \
	VBROADCASTSS vexpz<>+8(SB), Z18; \
	VBROADCASTSS vexpz<>+12(SB), Z19; \
	VBROADCASTSS vexpz<>+16(SB), Z20; \
	VBROADCASTSS vexpz<>+20(SB), Z21; \
	VBROADCASTSS vexpz<>+24(SB), Z22; \
	VBROADCASTSS vexpz<>+28(SB), Z23; \
	VBROADCASTSS vexpz<>+32(SB), Z24; \
	VBROADCASTSS vexpz<>+36(SB), Z25; \
	VBROADCASTSS vexpz<>+40(SB), Z26; \
	VBROADCASTSS vexpz<>+44(SB), Z27; \
	VBROADCASTSS vexpz<>+48(SB), Z28

// VEXPF16(x, r): r = vexpf(x) lane by lane (x is kept). Needs VEXPCONST and Z29 = 0;
// clobbers Z8-Z12, K6, K7.
#define VEXPF16(x, r) \
	VMOVAPS      Z17, Z8; \
	VFMADD231PS  Z16, x, Z8; \
	VSUBPS       Z17, Z8, Z8; \
	VMOVAPS      x, Z9; \
	VFNMADD231PS Z18, Z8, Z9; \
	VFNMADD231PS Z19, Z8, Z9; \
	VMULPS       Z9, Z9, Z10; \
	VMOVAPS      Z21, Z11; \
	VFMADD231PS  Z20, Z9, Z11; \
	VMOVAPS      Z23, Z12; \
	VFMADD231PS  Z22, Z9, Z12; \
	VFMADD213PS  Z12, Z10, Z11; \
	VMOVAPS      Z25, Z12; \
	VFMADD231PS  Z24, Z9, Z12; \
	VFMADD213PS  Z12, Z10, Z11; \
	VSCALEFPS    Z8, Z11, r; \
	VANDPS       Z27, Z8, Z9; \
	VCMPPS       $0x1e, Z26, Z9, K6; \
	VCMPPS       $0x1e, Z29, Z8, K7; \
	VMOVAPS      Z29, K6, r; \
	KANDW        K6, K7, K7; \
	VMOVAPS      Z28, K7, r

// func softmaxExpAVX512(s *float32, n int, m float32) float64
// softmaxExp: s[j] = vexpf(s[j] - m) for j < n, in groups of 16 lanes (the last one
// padded with zeros), each group reduced as reduce16 and added to a float64 sum.
TEXT ·softmaxExpAVX512(SB), NOSPLIT, $0-32
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Z7
	VEXPCONST
	VPXORD       Z29, Z29, Z29
	VXORPD       X6, X6, X6
	KXNORW       K1, K1, K1
	TESTQ        CX, CX
	JLE          szdone

szloop:
	CMPQ CX, $16
	JGE  szstep
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1                    // the last n lanes

szstep:
	VMOVUPS.Z     (SI), K1, Z0
	VSUBPS        Z7, Z0, Z0
	VEXPF16(Z0, Z1)
	VMOVAPS.Z     Z1, K1, Z1        // the padding: zeros
	VMOVUPS       Z1, K1, (SI)
	VEXTRACTF64X4 $1, Z1, Y2
	VADDPS        Y2, Y1, Y1
	VEXTRACTF128  $1, Y1, X2
	VADDPS        X2, X1, X1
	VMOVHLPS      X1, X1, X2
	VADDPS        X2, X1, X1
	VMOVSHDUP     X1, X2
	VADDSS        X2, X1, X1
	VCVTSS2SD     X1, X1, X1
	VADDSD        X1, X6, X6
	ADDQ          $64, SI
	SUBQ          $16, CX
	JG            szloop

szdone:
	VMOVSD X6, ret+24(FP)
	VZEROUPPER
	RET

// func swigluF32AVX512(dst, gate, up *float32, n16 int)
// dst[i] = vsilu(gate[i]) · up[i] for i < 16·n16: x/(1+vexpf(0-x)) times up.
TEXT ·swigluF32AVX512(SB), NOSPLIT, $0-32
	MOVQ   dst+0(FP), DX
	MOVQ   gate+8(FP), SI
	MOVQ   up+16(FP), DI
	MOVQ   n16+24(FP), CX
	VEXPCONST
	VPXORD Z29, Z29, Z29
	TESTQ  CX, CX
	JEQ    swzdone

swzloop:
	VMOVUPS (SI), Z0
	VSUBPS  Z0, Z29, Z1 // 0 - x
	VEXPF16(Z1, Z2)
	VADDPS  Z25, Z2, Z2
	VDIVPS  Z2, Z0, Z2
	VMULPS  (DI), Z2, Z2
	VMOVUPS Z2, (DX)
	ADDQ    $64, SI
	ADDQ    $64, DI
	ADDQ    $64, DX
	DECQ    CX
	JNE     swzloop

swzdone:
	VZEROUPPER
	RET
