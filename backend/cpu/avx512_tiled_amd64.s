#include "textflag.h"

// AVX-512 kernels of the tiled attention (attendTiled), with the bits of its Go code.

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

// KPAIR(base, km, z, acc): acc (sixteen keys' chains) += q[d]·F16(element d) and then
// q[d+1]·F16(element d+1), the two elements of each key gathered as one dword from
// base + Z14 (the keys' row offsets) under mask km (K1 copied); q[d], q[d+1] in Z4, Z5.
#define KPAIR(base, km, z, acc) \
	KMOVW       K1, km; \
	VPGATHERDD  (base)(Z14*1), km, z; \
	VPMOVDW     z, Y6; \
	VCVTPH2PS   Y6, Z6; \
	VPSRLD      $16, z, z; \
	VPMOVDW     z, Y7; \
	VCVTPH2PS   Y7, Z7; \
	VFMADD231PS Z4, Z6, acc; \
	VFMADD231PS Z5, Z7, acc

// func scoresTileF16AVX512(k *uint16, ks int, q *float32, hd, nkeys int, scale float32, s *float32)
// s[j] = (fma32 chain over d < hd of q[d]·F16(k_j[d])) · scale for the nkeys rows
// k_j = k + j·ks bytes (hd even): tileScoresGo, one key a lane, two groups of sixteen
// keys at a time; the last group's gathers and stores masked to the keys there are.
TEXT ·scoresTileF16AVX512(SB), NOSPLIT, $0-56
	MOVQ         k+0(FP), SI
	MOVQ         ks+8(FP), R8
	MOVQ         q+16(FP), DI
	MOVQ         hd+24(FP), R11
	SHRQ         $1, R11            // element pairs
	MOVQ         nkeys+32(FP), R10
	VBROADCASTSS scale+40(FP), Z30
	MOVQ         s+48(FP), DX
	VPBROADCASTD R8, Z14
	VPMULLD      iota16<>(SB), Z14, Z14 // the keys' row offsets
	MOVQ         R8, R9
	SHLQ         $4, R9             // sixteen rows
	KXNORW       K1, K1, K1
	TESTQ        R10, R10
	JLE          stdone
	TESTQ        R11, R11
	JEQ          stdone

st32:
	CMPQ   R10, $32
	JLT    st16
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MOVQ   SI, AX
	LEAQ   (SI)(R9*1), BX
	MOVQ   DI, R13
	MOVQ   R11, CX

st32d:
	VBROADCASTSS (R13), Z4
	VBROADCASTSS 4(R13), Z5
	KPAIR(AX, K2, Z2, Z0)
	KPAIR(BX, K3, Z3, Z1)
	ADDQ $4, AX
	ADDQ $4, BX
	ADDQ $8, R13
	DECQ CX
	JNE  st32d
	VMULPS  Z30, Z0, Z0
	VMULPS  Z30, Z1, Z1
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	LEAQ    (SI)(R9*2), SI
	ADDQ    $128, DX
	SUBQ    $32, R10
	JMP     st32

st16:
	TESTQ R10, R10
	JLE   stdone
	CMPQ  R10, $16
	JGE   st16go
	MOVL  $1, AX
	MOVQ  R10, CX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1                    // the last keys

st16go:
	VPXORD Z0, Z0, Z0
	MOVQ   SI, AX
	MOVQ   DI, R13
	MOVQ   R11, CX

st16d:
	VBROADCASTSS (R13), Z4
	VBROADCASTSS 4(R13), Z5
	KPAIR(AX, K2, Z2, Z0)
	ADDQ $4, AX
	ADDQ $8, R13
	DECQ CX
	JNE  st16d
	VMULPS  Z30, Z0, Z0
	VMOVUPS Z0, K1, (DX)
	ADDQ    R9, SI
	ADDQ    $64, DX
	SUBQ    $16, R10
	JMP     st16

stdone:
	VZEROUPPER
	RET

// ACC16(off, z, acc): acc += p[j] (Z4) times the 16 F16 values at off(AX), widened into z.
#define ACC16(off, z, acc) \
	VCVTPH2PS   off(AX), z; \
	VFMADD231PS Z4, z, acc

// func accTileF16AVX512(acc *float32, v *uint16, vs int, p *float32, nkeys, hd int)
// acc[d] = fma32(p[j], F16(v_j[d]), acc[d]) for j < nkeys in order and d < hd (a
// multiple of 16), v_j = v + j·vs bytes: attendTiled's V accumulation over a tile
// (accRowF16Go key by key), the accumulator kept in registers 64, 32 or 16 elements
// at a time.
TEXT ·accTileF16AVX512(SB), NOSPLIT, $0-48
	MOVQ  acc+0(FP), SI
	MOVQ  v+8(FP), DI
	MOVQ  vs+16(FP), R8
	MOVQ  p+24(FP), R9
	MOVQ  nkeys+32(FP), R10
	MOVQ  hd+40(FP), R11
	SHRQ  $4, R11               // chunks of 16
	TESTQ R10, R10
	JLE   atdone

at4:
	CMPQ    R11, $4
	JLT     at2
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	MOVQ    DI, AX
	MOVQ    R9, BX
	MOVQ    R10, CX

at4k:
	VBROADCASTSS (BX), Z4
	ACC16(0, Z5, Z0)
	ACC16(32, Z6, Z1)
	ACC16(64, Z7, Z2)
	ACC16(96, Z8, Z3)
	ADDQ R8, AX
	ADDQ $4, BX
	DECQ CX
	JNE  at4k
	VMOVUPS Z0, (SI)
	VMOVUPS Z1, 64(SI)
	VMOVUPS Z2, 128(SI)
	VMOVUPS Z3, 192(SI)
	ADDQ    $256, SI
	ADDQ    $128, DI
	SUBQ    $4, R11
	JMP     at4

at2:
	CMPQ    R11, $2
	JLT     at1
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	MOVQ    DI, AX
	MOVQ    R9, BX
	MOVQ    R10, CX

at2k:
	VBROADCASTSS (BX), Z4
	ACC16(0, Z5, Z0)
	ACC16(32, Z6, Z1)
	ADDQ R8, AX
	ADDQ $4, BX
	DECQ CX
	JNE  at2k
	VMOVUPS Z0, (SI)
	VMOVUPS Z1, 64(SI)
	ADDQ    $128, SI
	ADDQ    $64, DI
	SUBQ    $2, R11
	JMP     at2

at1:
	TESTQ   R11, R11
	JEQ     atdone
	VMOVUPS (SI), Z0
	MOVQ    DI, AX
	MOVQ    R9, BX
	MOVQ    R10, CX

at1k:
	VBROADCASTSS (BX), Z4
	ACC16(0, Z5, Z0)
	ADDQ R8, AX
	ADDQ $4, BX
	DECQ CX
	JNE  at1k
	VMOVUPS Z0, (SI)

atdone:
	VZEROUPPER
	RET
