#include "textflag.h"

// glibc's expf (libm.go) in eight float64 lanes, the table looked up in registers.

// Constants of expf (libm.go), one float64 each (float32 ones for the edges).
DATA expfz<>+0(SB)/8, $0x40471547652b82fe  // 32/ln 2
DATA expfz<>+8(SB)/8, $0x4338000000000000  // shift 0x1.8p52
DATA expfz<>+16(SB)/8, $0x3ebc6af84b912394 // c0
DATA expfz<>+24(SB)/8, $0x3f2ebfce50fac4f3 // c1
DATA expfz<>+32(SB)/8, $0x3f962e42ff0c52d6 // c2
DATA expfz<>+40(SB)/8, $0x3ff0000000000000 // 1
DATA expfz<>+48(SB)/8, $31                 // table index mask
DATA expfz<>+56(SB)/8, $16                 // the upper half of the table
DATA expfz<>+64(SB)/4, $0x42b17217         // 0x1.62e42ep6: above, +Inf
DATA expfz<>+68(SB)/4, $0xc2cff1b4         // -0x1.9fe368p6: below, 0
DATA expfz<>+72(SB)/4, $0x7f800000         // +Inf
GLOBL expfz<>(SB), RODATA|NOPTR, $76

// func expfRowAVX512(dst, src *float32, n int)
// dst[j] = expf(src[j]) for j < n, eight lanes at a time: libm.go's float64 steps for
// every argument, then its edges (above 0x1.62e42ep6: +Inf; below -0x1.9fe368p6,
// -Inf included: 0; NaN: x+x) put over the lanes that have them.
TEXT ·expfRowAVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DX
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSD expfz<>+0(SB), Z16
	VBROADCASTSD expfz<>+8(SB), Z17
	VBROADCASTSD expfz<>+16(SB), Z18
	VBROADCASTSD expfz<>+24(SB), Z19
	VBROADCASTSD expfz<>+32(SB), Z20
	VBROADCASTSD expfz<>+40(SB), Z21
	VPBROADCASTQ expfz<>+48(SB), Z22
	VPBROADCASTQ expfz<>+56(SB), Z23
	VBROADCASTSS expfz<>+64(SB), Y12
	VBROADCASTSS expfz<>+68(SB), Y13
	VBROADCASTSS expfz<>+72(SB), Y14
	VMOVDQU64    ·exp2fTab+0(SB), Z24
	VMOVDQU64    ·exp2fTab+64(SB), Z25
	VMOVDQU64    ·exp2fTab+128(SB), Z26
	VMOVDQU64    ·exp2fTab+192(SB), Z27
	KXNORW       K1, K1, K1
	TESTQ        CX, CX
	JLE          ezdone

ezloop:
	CMPQ CX, $8
	JGE  ezstep
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1                    // the last n lanes

ezstep:
	VMOVUPS.Z   (SI), K1, Y0        // x
	VCVTPS2PD   Y0, Z1              // xd
	VMOVAPD     Z17, Z2
	VFMADD231PD Z16, Z1, Z2         // kd = 32/ln2·xd + shift, ki its bits
	VSUBPD      Z17, Z2, Z3         // kd - shift
	VFMSUB231PD Z16, Z1, Z3         // r = 32/ln2·xd - kd
	VPANDQ      Z22, Z2, Z4         // ki % 32
	VMOVDQA64   Z4, Z5
	VPERMI2Q    Z25, Z24, Z5        // tab[ki%32] for ki%32 < 16
	VMOVDQA64   Z4, Z6
	VPERMI2Q    Z27, Z26, Z6        // ... and for the others
	VPTESTMQ    Z23, Z4, K2
	VMOVDQA64   Z6, K2, Z5
	VPSLLQ      $47, Z2, Z7
	VPADDQ      Z7, Z5, Z5          // s
	VMOVAPD     Z19, Z8
	VFMADD231PD Z18, Z3, Z8         // c0·r + c1
	VMOVAPD     Z21, Z9
	VFMADD231PD Z20, Z3, Z9         // c2·r + 1
	VMULPD      Z3, Z3, Z10         // r·r
	VFMADD213PD Z9, Z10, Z8         // y
	VMULPD      Z5, Z8, Z8
	VCVTPD2PS   Z8, Y8
	VCMPPS      $0x1e, Y12, Y0, K3  // x > 0x1.62e42ep6
	VCMPPS      $0x11, Y13, Y0, K4  // x < -0x1.9fe368p6
	VCMPPS      $3, Y0, Y0, K5      // NaN
	VMOVAPS     Y14, K3, Y8
	VXORPS      Y8, Y8, K4, Y8
	VADDPS      Y0, Y0, K5, Y8
	VMOVUPS     Y8, K1, (DX)
	ADDQ        $32, SI
	ADDQ        $32, DX
	SUBQ        $8, CX
	JG          ezloop

ezdone:
	VZEROUPPER
	RET
