#include "textflag.h"

// AVX-512 kernels of the tiled attention over keys transposed to float32
// (attentionTask.kt): the transposition, the scores over it, and the tile maximum,
// with the bits of their Go code.

// iota16 is 0, 1, ..., 15: lane numbers.
DATA iota16<>+0(SB)/8, $0x0000000100000000
DATA iota16<>+8(SB)/8, $0x0000000300000002
DATA iota16<>+16(SB)/8, $0x0000000500000004
DATA iota16<>+24(SB)/8, $0x0000000700000006
DATA iota16<>+32(SB)/8, $0x0000000900000008
DATA iota16<>+40(SB)/8, $0x0000000b0000000a
DATA iota16<>+48(SB)/8, $0x0000000d0000000c
DATA iota16<>+56(SB)/8, $0x0000000f0000000e
GLOBL iota16<>(SB), RODATA|NOPTR, $64

// func transposeKF16AVX512(k *uint16, ks int, hd, nkeys int, dst *float32, ds int)
// dst[d·ds + j] = F16(k_j[d]) for d < hd (even) and j < nkeys rounded up to 16, the keys
// past nkeys as zeros; k_j = k + j·ks bytes, ds in float32: a KV head's keys
// transposed to float32 for scoresTileF32TAVX512, sixteen keys at a time (each pair of
// elements of the sixteen gathered as one dword, as scoresTileF16AVX512 does).
TEXT ·transposeKF16AVX512(SB), NOSPLIT, $0-48
	MOVQ         k+0(FP), SI
	MOVQ         ks+8(FP), R8
	MOVQ         hd+16(FP), R11
	SHRQ         $1, R11            // element pairs
	MOVQ         nkeys+24(FP), R10
	MOVQ         dst+32(FP), DI
	MOVQ         ds+40(FP), R12
	SHLQ         $2, R12            // ds in bytes
	VPBROADCASTD R8, Z14
	VPMULLD      iota16<>(SB), Z14, Z14 // the keys' row offsets
	MOVQ         R8, R9
	SHLQ         $4, R9             // sixteen rows
	TESTQ        R10, R10
	JLE          ktdone
	TESTQ        R11, R11
	JEQ          ktdone

kt16:
	KXNORW K1, K1, K1
	CMPQ   R10, $16
	JGE    kt16go
	MOVL   $1, AX
	MOVQ   R10, CX
	SHLL   CX, AX
	DECL   AX
	KMOVW  AX, K1                   // the last keys

kt16go:
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R11, CX

kt16d:
	KMOVW      K1, K2
	VPXORD     Z2, Z2, Z2
	VPGATHERDD (AX)(Z14*1), K2, Z2
	VPMOVDW    Z2, Y6
	VCVTPH2PS  Y6, Z6
	VPSRLD     $16, Z2, Z2
	VPMOVDW    Z2, Y7
	VCVTPH2PS  Y7, Z7
	VMOVUPS    Z6, (BX)
	VMOVUPS    Z7, (BX)(R12*1)
	ADDQ       $4, AX
	LEAQ       (BX)(R12*2), BX
	DECQ       CX
	JNE        kt16d
	ADDQ       R9, SI
	ADDQ       $64, DI
	SUBQ       $16, R10
	JG         kt16

ktdone:
	VZEROUPPER
	RET

// STTMASK sets K1 to the lowest min(BX, 16) lanes (BX ≥ 1); AX and CX are clobbered.
#define STTMASK \
	MOVL  $0xffff, AX; \
	CMPQ  BX, $16; \
	JGE   5(PC); \
	MOVQ  BX, CX; \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, K1

// KT4 adds q[d] (Z4) times the four groups of sixteen keys of row d at off(AX)
// to Z0..Z3.
#define KT4 \
	VBROADCASTSS (R13), Z4; \
	VFMADD231PS  (AX), Z4, Z0; \
	VFMADD231PS  64(AX), Z4, Z1; \
	VFMADD231PS  128(AX), Z4, Z2; \
	VFMADD231PS  192(AX), Z4, Z3

// func scoresTileF32TAVX512(kt *float32, kts int, q *float32, hd, nkeys int, scale float32, s *float32)
// s[j] = (fma32 chain over d < hd of q[d]·kt[d·kts + j]) · scale for j < nkeys, over
// keys transposed by transposeKF16AVX512 (rows of nkeys rounded up to 16 at least,
// kts in float32): tileScoresGo, one key a lane, up to four groups of sixteen keys at
// a time; the stores of the last group masked to the keys there are.
TEXT ·scoresTileF32TAVX512(SB), NOSPLIT, $0-56
	MOVQ         kt+0(FP), SI
	MOVQ         kts+8(FP), R8
	SHLQ         $2, R8             // kts in bytes
	MOVQ         q+16(FP), DI
	MOVQ         hd+24(FP), R11
	MOVQ         nkeys+32(FP), R10
	VBROADCASTSS scale+40(FP), Z30
	MOVQ         s+48(FP), DX
	TESTQ        R11, R11
	JEQ          sttdone

stt64:
	TESTQ  R10, R10
	JLE    sttdone
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   SI, AX
	MOVQ   DI, R13
	MOVQ   R11, CX
	CMPQ   R10, $48
	JLE    stt32

stt64d:
	KT4
	ADDQ R8, AX
	ADDQ $4, R13
	DECQ CX
	JNE  stt64d
	VMULPS  Z30, Z0, Z0
	VMULPS  Z30, Z1, Z1
	VMULPS  Z30, Z2, Z2
	VMULPS  Z30, Z3, Z3
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VMOVUPS Z2, 128(DX)
	MOVQ    R10, BX
	SUBQ    $48, BX
	STTMASK
	VMOVUPS Z3, K1, 192(DX)
	ADDQ    $256, SI
	ADDQ    $256, DX
	SUBQ    $64, R10
	JMP     stt64

stt32:
	CMPQ R10, $16
	JLE  stt16

stt32d:
	VBROADCASTSS (R13), Z4
	VFMADD231PS  (AX), Z4, Z0
	VFMADD231PS  64(AX), Z4, Z1
	ADDQ         R8, AX
	ADDQ         $4, R13
	DECQ         CX
	JNE          stt32d
	VMULPS       Z30, Z0, Z0
	VMULPS       Z30, Z1, Z1
	VMOVUPS      Z0, (DX)
	MOVQ         R10, BX
	SUBQ         $16, BX
	STTMASK
	VMOVUPS      Z1, K1, 64(DX)
	ADDQ         $128, SI
	ADDQ         $128, DX
	SUBQ         $32, R10
	JMP          stt64

stt16:
	VBROADCASTSS (R13), Z4
	VFMADD231PS  (AX), Z4, Z0
	ADDQ         R8, AX
	ADDQ         $4, R13
	DECQ         CX
	JNE          stt16
	VMULPS       Z30, Z0, Z0
	MOVQ         R10, BX
	STTMASK
	VMOVUPS      Z0, K1, (DX)

sttdone:
	VZEROUPPER
	RET

DATA negInf<>+0(SB)/4, $0xff800000
GLOBL negInf<>(SB), RODATA|NOPTR, $4

// func tileMaxAVX512(s *float32, n int) (m float32, ok bool)
// The largest of s[0..n-1] (n ≥ 1) by a VMAXPS tree, and ok when that is the value of
// Go's max over s from −Inf (tileMaxGo): ok is false if an element is a NaN or the
// largest is a zero, whose sign the tree leaves to the order (the caller then takes
// tileMaxGo).
TEXT ·tileMaxAVX512(SB), NOSPLIT, $0-21
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS negInf<>(SB), Z0
	VMOVAPS      Z0, Z1
	KXORW        K2, K2, K2          // lanes holding a NaN so far

tm32:
	CMPQ    CX, $32
	JLT     tm16
	VMOVUPS (SI), Z2
	VMOVUPS 64(SI), Z3
	VCMPPS  $3, Z2, Z2, K3
	KORW    K3, K2, K2
	VCMPPS  $3, Z3, Z3, K3
	KORW    K3, K2, K2
	VMAXPS  Z2, Z0, Z0
	VMAXPS  Z3, Z1, Z1
	ADDQ    $128, SI
	SUBQ    $32, CX
	JMP     tm32

tm16:
	CMPQ    CX, $16
	JLT     tmtail
	VMOVUPS (SI), Z2
	VCMPPS  $3, Z2, Z2, K3
	KORW    K3, K2, K2
	VMAXPS  Z2, Z0, Z0
	ADDQ    $64, SI
	SUBQ    $16, CX

tmtail:
	TESTQ   CX, CX
	JEQ     tmreduce
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K1
	VBROADCASTSS negInf<>(SB), Z2
	VMOVUPS      (SI), K1, Z2    // the lanes past n keep −Inf
	VCMPPS  $3, Z2, Z2, K3
	KORW    K3, K2, K2
	VMAXPS  Z2, Z0, Z0

tmreduce:
	VMAXPS       Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSS       X0, m+16(FP)
	MOVB         $0, ok+20(FP)
	KORTESTW     K2, K2
	JNE          tmdone              // a NaN
	VXORPS       X1, X1, X1
	VUCOMISS     X1, X0
	JEQ          tmdone              // a zero (or the parity of a NaN, excluded above)
	MOVB         $1, ok+20(FP)

tmdone:
	VZEROUPPER
	RET
