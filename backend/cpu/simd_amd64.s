#include "textflag.h"

// AVX-512 forms of simd.go's float32 kernels with the same bits. fma32 (a float64
// product, exact, plus a float64 addend, rounded to float64 and then to float32) is
// VCVTPS2PD of the operands, one VFMADD231PD (the product is exact, so fusing changes
// nothing) and VCVTPD2PS back; accumulators are kept as float64 holding float32 values
// (rounded after every step with VCVTPD2PS, VCVTPS2PD). Float32 additions are VADDPS
// lane for lane, in the Go code's pairing.

// FMA8(off, acc): acc (8 float64 lanes) = fma32 of the 8 floats at off(SI), off(DI).
#define FMA8(off, acc) \
	VCVTPS2PD off(SI), Z16; \
	VCVTPS2PD off(DI), Z17; \
	VFMADD231PD Z17, Z16, acc; \
	VCVTPD2PS acc, Y18; \
	VCVTPS2PD Y18, acc

// NARROW(lo, hi, dst): dst (16 float32) = lanes of lo then hi, float64 to float32.
#define NARROW(lo, hi, dst) \
	VCVTPD2PS lo, Y18; \
	VCVTPD2PS hi, Y19; \
	VINSERTF64X4 $1, Y19, Z18, dst

// func vecDotF32Blocks(a, b *float32, nblk int) float32
// vecDotF32's accumulation over nblk blocks of 64, the four accumulators combined as
// (0+2)+(1+3) and reduced as reduce16.
TEXT ·vecDotF32Blocks(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ nblk+16(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	TESTQ CX, CX
	JEQ   vdone

vloop:
	FMA8(0, Z0)
	FMA8(32, Z1)
	FMA8(64, Z2)
	FMA8(96, Z3)
	FMA8(128, Z4)
	FMA8(160, Z5)
	FMA8(192, Z6)
	FMA8(224, Z7)
	ADDQ $256, SI
	ADDQ $256, DI
	DECQ CX
	JNE  vloop

vdone:
	NARROW(Z0, Z1, Z8)
	NARROW(Z2, Z3, Z9)
	NARROW(Z4, Z5, Z10)
	NARROW(Z6, Z7, Z11)
	VADDPS Z10, Z8, Z8   // acc0 += acc2
	VADDPS Z11, Z9, Z9   // acc1 += acc3
	VADDPS Z9, Z8, Z8    // acc0 += acc1
	VEXTRACTF64X4 $1, Z8, Y9
	VADDPS Y9, Y8, Y8    // t8[i] = c[i+8] + c[i]
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8    // t4[i] = t8[i+4] + t8[i]
	VMOVHLPS X8, X8, X9  // t4[2], t4[3]
	VADDPS X9, X8, X8    // t4[0]+t4[2], t4[1]+t4[3]
	VMOVSHDUP X8, X9
	VADDSS X9, X8, X8
	VMOVSS X8, ret+24(FP)
	VZEROUPPER
	RET

// func sgemmF32Blocks(a, b *float32, nblk int) float32
// sgemmF32 over nblk blocks of 16: one 16-lane FMA accumulator, reduced as reduce16.
TEXT ·sgemmF32Blocks(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ nblk+16(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	TESTQ CX, CX
	JEQ   sdone

sloop:
	FMA8(0, Z0)
	FMA8(32, Z1)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNE  sloop

sdone:
	NARROW(Z0, Z1, Z8)
	VEXTRACTF64X4 $1, Z8, Y9
	VADDPS Y9, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VMOVHLPS X8, X8, X9
	VADDPS X9, X8, X8
	VMOVSHDUP X8, X9
	VADDSS X9, X8, X8
	VMOVSS X8, ret+24(FP)
	VZEROUPPER
	RET

// FMA8H(off, acc): FMA8 over the 8 F16 values at off(SI), off(DI), widened exactly.
#define FMA8H(off, acc) \
	VCVTPH2PS off(SI), Y16; \
	VCVTPH2PS off(DI), Y17; \
	VCVTPS2PD Y16, Z16; \
	VCVTPS2PD Y17, Z17; \
	VFMADD231PD Z17, Z16, acc; \
	VCVTPD2PS acc, Y18; \
	VCVTPS2PD Y18, acc

// func vecDotF16Blocks(a, b *uint16, nblk int) float32
// vecDotF16's blocks of 64: vecDotF32Blocks over widened F16 values.
TEXT ·vecDotF16Blocks(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ nblk+16(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	TESTQ CX, CX
	JEQ   hdone

hloop:
	FMA8H(0, Z0)
	FMA8H(16, Z1)
	FMA8H(32, Z2)
	FMA8H(48, Z3)
	FMA8H(64, Z4)
	FMA8H(80, Z5)
	FMA8H(96, Z6)
	FMA8H(112, Z7)
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNE  hloop

hdone:
	NARROW(Z0, Z1, Z8)
	NARROW(Z2, Z3, Z9)
	NARROW(Z4, Z5, Z10)
	NARROW(Z6, Z7, Z11)
	VADDPS Z10, Z8, Z8
	VADDPS Z11, Z9, Z9
	VADDPS Z9, Z8, Z8
	VEXTRACTF64X4 $1, Z8, Y9
	VADDPS Y9, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VMOVHLPS X8, X8, X9
	VADDPS X9, X8, X8
	VMOVSHDUP X8, X9
	VADDSS X9, X8, X8
	VMOVSS X8, ret+24(FP)
	VZEROUPPER
	RET

// func sgemmF16Blocks(a, b *uint16, nblk int) float32
// sgemmF16 over nblk blocks of 16.
TEXT ·sgemmF16Blocks(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ nblk+16(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	TESTQ CX, CX
	JEQ   gdone

gloop:
	FMA8H(0, Z0)
	FMA8H(16, Z1)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE  gloop

gdone:
	NARROW(Z0, Z1, Z8)
	VEXTRACTF64X4 $1, Z8, Y9
	VADDPS Y9, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VMOVHLPS X8, X8, X9
	VADDPS X9, X8, X8
	VMOVSHDUP X8, X9
	VADDSS X9, X8, X8
	VMOVSS X8, ret+24(FP)
	VZEROUPPER
	RET

// func dotF16Seq(k *uint16, q *float32, n int) float64
// Σ float64(float32(F16(k[d])·q[d])) added in order d = 0, 1, ..., n-1 (n a multiple
// of 8): the score loop of attendOneChunk.
TEXT ·dotF16Seq(SB), NOSPLIT, $64-32
	MOVQ   k+0(FP), SI
	MOVQ   q+8(FP), DI
	MOVQ   n+16(FP), CX
	SHRQ   $3, CX
	VXORPD X15, X15, X15
	TESTQ  CX, CX
	JEQ    qdone

qloop:
	VCVTPH2PS (SI), Y0
	VMULPS    (DI), Y0, Y0
	VCVTPS2PD Y0, Z0
	VMOVUPD   Z0, 0(SP)
	VADDSD    0(SP), X15, X15
	VADDSD    8(SP), X15, X15
	VADDSD    16(SP), X15, X15
	VADDSD    24(SP), X15, X15
	VADDSD    32(SP), X15, X15
	VADDSD    40(SP), X15, X15
	VADDSD    48(SP), X15, X15
	VADDSD    56(SP), X15, X15
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNE       qloop

qdone:
	VMOVSD X15, ret+24(FP)
	VZEROUPPER
	RET

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

// Constants of vexpf (float64 copies of its float32 constants, exact) and of vsilu.
DATA vexpd<>+0(SB)/8, $0x3ff7154760000000  // 0x1.715476p+0
DATA vexpd<>+8(SB)/8, $0x4168000000000000  // 0x1.8p23
DATA vexpd<>+16(SB)/8, $0x3fe62e4000000000 // 0x1.62e4p-1
DATA vexpd<>+24(SB)/8, $0x3eb7f7d1c0000000 // 0x1.7f7d1cp-20
DATA vexpd<>+32(SB)/8, $0x3f80e40200000000 // 0x1.0e4020p-7
DATA vexpd<>+40(SB)/8, $0x3fa573e2e0000000 // 0x1.573e2ep-5
DATA vexpd<>+48(SB)/8, $0x3fc555e660000000 // 0x1.555e66p-3
DATA vexpd<>+56(SB)/8, $0x3fdfffdb60000000 // 0x1.fffdb6p-2
DATA vexpd<>+64(SB)/8, $0x3feffffec0000000 // 0x1.ffffecp-1
DATA vexpd<>+72(SB)/8, $0x3ff0000000000000 // 1
GLOBL vexpd<>(SB), RODATA|NOPTR, $80

DATA vexps<>+0(SB)/4, $0x4b400000  // 0x1.8p23
DATA vexps<>+4(SB)/4, $0x3f800000  // 1
DATA vexps<>+8(SB)/4, $0x43400000  // 192
DATA vexps<>+12(SB)/4, $0x7fffffff // |.| mask
DATA vexps<>+16(SB)/4, $0x7f800000 // +Inf
GLOBL vexps<>(SB), RODATA|NOPTR, $20

// func swigluF32(dst, gate, up *float32, n8 int)
// dst[i] = vsilu(gate[i]) * up[i] for i < 8·n8: ggml_v_silu's lanes, each fma32 and
// fnma32 done in float64 and rounded to float32 as the Go code does, the final
// scaling by 2^n (exact in float64) rounded once.
TEXT ·swigluF32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DX
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), DI
	MOVQ n8+24(FP), CX
	TESTQ CX, CX
	JEQ   swdone
	VBROADCASTSD vexpd<>+0(SB), Z20
	VBROADCASTSD vexpd<>+8(SB), Z21
	VBROADCASTSD vexpd<>+16(SB), Z22
	VBROADCASTSD vexpd<>+24(SB), Z23
	VBROADCASTSD vexpd<>+32(SB), Z24
	VBROADCASTSD vexpd<>+40(SB), Z25
	VBROADCASTSD vexpd<>+48(SB), Z26
	VBROADCASTSD vexpd<>+56(SB), Z27
	VBROADCASTSD vexpd<>+64(SB), Z28
	VBROADCASTSD vexpd<>+72(SB), Z29
	VBROADCASTSS vexps<>+0(SB), Y10
	VBROADCASTSS vexps<>+4(SB), Y11
	VBROADCASTSS vexps<>+8(SB), Y12
	VBROADCASTSS vexps<>+12(SB), Y13
	VBROADCASTSS vexps<>+16(SB), Y14
	VXORPS       Y15, Y15, Y15

swloop:
	VMOVUPS      (SI), Y0
	VSUBPS       Y0, Y15, Y1       // y = 0 - x
	VCVTPS2PD    Y1, Z2
	VMOVAPD      Z21, Z3
	VFMADD231PD  Z20, Z2, Z3       // y·log2e + r
	VCVTPD2PS    Z3, Y3            // z
	VSUBPS       Y10, Y3, Y4       // n = z - r
	VCVTPS2PD    Y4, Z5
	VMOVAPD      Z2, Z6
	VFNMADD231PD Z22, Z5, Z6       // y - n·ln2hi
	VCVTPD2PS    Z6, Y6
	VCVTPS2PD    Y6, Z6
	VFNMADD231PD Z23, Z5, Z6       // ... - n·ln2lo
	VCVTPD2PS    Z6, Y6            // b
	VMULPS       Y6, Y6, Y7        // u = b·b
	VCVTPS2PD    Y6, Z6
	VCVTPS2PD    Y7, Z7
	VMOVAPD      Z25, Z8
	VFMADD231PD  Z24, Z6, Z8       // c0·b + c1
	VCVTPD2PS    Z8, Y8
	VCVTPS2PD    Y8, Z8
	VMOVAPD      Z27, Z9
	VFMADD231PD  Z26, Z6, Z9       // c2·b + c3
	VCVTPD2PS    Z9, Y9
	VCVTPS2PD    Y9, Z9
	VFMADD231PD  Z8, Z7, Z9        // (c0·b+c1)·u + (c2·b+c3)
	VCVTPD2PS    Z9, Y9
	VCVTPS2PD    Y9, Z9
	VMOVAPD      Z29, Z8
	VFMADD231PD  Z28, Z6, Z8       // c4·b + 1
	VCVTPD2PS    Z8, Y8
	VCVTPS2PD    Y8, Z8
	VFMADD231PD  Z9, Z7, Z8        // j
	VCVTPD2PS    Z8, Y8
	VCVTPS2PD    Y8, Z8
	VSCALEFPD    Z5, Z8, Z8        // j·2^n
	VCVTPD2PS    Z8, Y8
	VANDPS       Y13, Y4, Y9
	VCMPPS       $0x1e, Y12, Y9, Y9 // |n| > 192
	VCMPPS       $0x1e, Y15, Y4, Y3 // n > 0
	VANDPS       Y14, Y3, Y3        // +Inf or 0
	VBLENDVPS    Y9, Y3, Y8, Y8     // e^y
	VADDPS       Y11, Y8, Y8        // 1 + e^y
	VDIVPS       Y8, Y0, Y8         // silu(x)
	VMULPS       (DI), Y8, Y8
	VMOVUPS      Y8, (DX)
	ADDQ         $32, SI
	ADDQ         $32, DI
	ADDQ         $32, DX
	DECQ         CX
	JNE          swloop

swdone:
	VZEROUPPER
	RET

// func spinPause()
// One PAUSE: the spin-wait hint of the pool's polling loops.
TEXT ·spinPause(SB), NOSPLIT, $0-0
	PAUSE
	RET

// func fmaRowF16(acc *float32, v *uint16, p float32, n int)
// acc[d] = fma32(p, F16(v[d]), acc[d]) for d < n (a multiple of 8): the V accumulation
// of attendTiled.
TEXT ·fmaRowF16(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), SI
	MOVQ         v+8(FP), DI
	VBROADCASTSS p+16(FP), Y2
	VCVTPS2PD    Y2, Z2
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	TESTQ        CX, CX
	JEQ          fdone

floop:
	VCVTPH2PS   (DI), Y0
	VCVTPS2PD   Y0, Z0
	VCVTPS2PD   (SI), Z1
	VFMADD231PD Z2, Z0, Z1
	VCVTPD2PS   Z1, Y1
	VMOVUPS     Y1, (SI)
	ADDQ        $32, SI
	ADDQ        $16, DI
	DECQ        CX
	JNE         floop

fdone:
	VZEROUPPER
	RET

// SCORE1(Ysrc): one step d of the eight FMA chains: Z0 = fma32(q[d], F16 in the low
// words of the dwords of Ysrc, Z0) (float64 lanes holding float32 values), q[d] taken
// at (DI), DI advanced. VPMOVDW (AVX512VL) keeps the low words.
#define SCORE1(Ysrc) \
	VPMOVDW      Ysrc, X4; \
	VCVTPH2PS    X4, Y4; \
	VCVTPS2PD    Y4, Z4; \
	VBROADCASTSS (DI), Y5; \
	VCVTPS2PD    Y5, Z5; \
	VFMADD231PD  Z5, Z4, Z0; \
	VCVTPD2PS    Z0, Y0; \
	VCVTPS2PD    Y0, Z0; \
	ADDQ         $4, DI

// func scores8F16(k *uint16, idx *[8]int32, q *float32, hd int, scale float32, s *float32)
// s[j] = (fma32 chain over d < hd of q[d]·F16(key j, element d)) · scale for the
// eight keys whose rows start idx[j] bytes after k (hd even): attendTiled's score loop
// for eight keys at once, each lane one key's chain in order.
TEXT ·scores8F16(SB), NOSPLIT, $0-48
	MOVQ    k+0(FP), SI
	MOVQ    idx+8(FP), AX
	VMOVDQU (AX), Y15
	MOVQ    q+16(FP), DI
	MOVQ    hd+24(FP), CX
	SHRQ    $1, CX
	VPXORQ  Z0, Z0, Z0
	VPCMPEQD Y14, Y14, Y14
	VPSRLD  $16, Y14, Y13     // 0x0000ffff
	TESTQ   CX, CX
	JEQ     sc8done

sc8loop:
	VPCMPEQD   Y2, Y2, Y2
	VPGATHERDD Y2, (SI)(Y15*1), Y1  // elements d (low words), d+1 (high words)
	VPAND      Y13, Y1, Y3
	SCORE1(Y3)
	VPSRLD     $16, Y1, Y3
	SCORE1(Y3)
	ADDQ       $4, SI
	DECQ       CX
	JNE        sc8loop

sc8done:
	VCVTPD2PS    Z0, Y0
	VBROADCASTSS scale+32(FP), Y5
	VMULPS       Y5, Y0, Y0
	MOVQ         s+40(FP), DX
	VMOVUPS      Y0, (DX)
	VZEROUPPER
	RET
