#include "textflag.h"

// AVX2 (and, for Q8_0 and Q4_0, AVX512-VNNI) kernels of the dot products. The integer
// sums of a block are exact in any order, so they are computed with whatever vector
// arithmetic is fastest among the exact ones, exact for any input bytes (no VPSIGNB
// trick, which is wrong for -128); the float32 operations are those of the Go code
// (dotQ8_0Go, dotF32Go, ...), one for one, in the same order and without fusing, so the
// results have the same bits. The 32-element formats are summed eight blocks at a time:
// eight int32 vectors reduced together (HSUM8), the eight block scales converted with
// one VCVTPH2PS, the eight float32 terms formed in one register, then added to the sum
// one by one in block order (ADD8).

DATA nib4<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib4<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib4<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib4<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nib4<>(SB), RODATA|NOPTR, $32

DATA eights<>+0(SB)/8, $0x0808080808080808
DATA eights<>+8(SB)/8, $0x0808080808080808
DATA eights<>+16(SB)/8, $0x0808080808080808
DATA eights<>+24(SB)/8, $0x0808080808080808
GLOBL eights<>(SB), RODATA|NOPTR, $32

// hishift4: dword shift counts 0 in the low lane, 4 in the high lane.
DATA hishift4<>+0(SB)/8, $0
DATA hishift4<>+8(SB)/8, $0
DATA hishift4<>+16(SB)/8, $0x0000000400000004
DATA hishift4<>+24(SB)/8, $0x0000000400000004
GLOBL hishift4<>(SB), RODATA|NOPTR, $32

DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

// HSUM8 reduces the eight int32 vectors Y0..Y7 to Y0 = their eight sums, sum k in lane k.
// Y1..Y7 are clobbered.
#define HSUM8 \
	VPHADDD    Y1, Y0, Y0; \
	VPHADDD    Y3, Y2, Y2; \
	VPHADDD    Y2, Y0, Y0; \
	VPHADDD    Y5, Y4, Y4; \
	VPHADDD    Y7, Y6, Y6; \
	VPHADDD    Y6, Y4, Y4; \
	VPERM2I128 $0x20, Y4, Y0, Y1; \
	VPERM2I128 $0x31, Y4, Y0, Y2; \
	VPADDD     Y2, Y1, Y0

// ADD8 adds the eight float32 lanes of Y0 to the scalar X15 one at a time, lane 0
// first (the Go loop's sumf += p, block after block). Y0 and X1 are clobbered.
#define ADD8 \
	VADDSS       X0, X15, X15; \
	VMOVSHDUP    X0, X1; \
	VADDSS       X1, X15, X15; \
	VMOVHLPS     X0, X0, X1; \
	VADDSS       X1, X15, X15; \
	VPSHUFD      $0xff, X0, X1; \
	VADDSS       X1, X15, X15; \
	VEXTRACTF128 $1, Y0, X0; \
	VADDSS       X0, X15, X15; \
	VMOVSHDUP    X0, X1; \
	VADDSS       X1, X15, X15; \
	VMOVHLPS     X0, X0, X1; \
	VADDSS       X1, X15, X15; \
	VPSHUFD      $0xff, X0, X1; \
	VADDSS       X1, X15, X15

// HALF8 gathers the f16 at off+stride*k(R) for k < 8 into the lanes of X (through AX,
// BX, DX) and converts them to float32 in Y (VCVTPH2PS is exact, like the table of
// F16ToF32).
#define HALF8(R, off, stride, X, Y) \
	MOVWQZX (off)(R), AX; \
	MOVWQZX (off+stride)(R), BX; \
	SHLQ    $16, BX; \
	ORQ     BX, AX; \
	MOVWQZX (off+2*stride)(R), BX; \
	SHLQ    $32, BX; \
	ORQ     BX, AX; \
	MOVWQZX (off+3*stride)(R), BX; \
	SHLQ    $48, BX; \
	ORQ     BX, AX; \
	MOVWQZX (off+4*stride)(R), DX; \
	MOVWQZX (off+5*stride)(R), BX; \
	SHLQ    $16, BX; \
	ORQ     BX, DX; \
	MOVWQZX (off+6*stride)(R), BX; \
	SHLQ    $32, BX; \
	ORQ     BX, DX; \
	MOVWQZX (off+7*stride)(R), BX; \
	SHLQ    $48, BX; \
	ORQ     BX, DX; \
	VMOVQ   AX, X; \
	VPINSRQ $1, DX, X, X; \
	VCVTPH2PS X, Y

// Q8_0BLK puts in Y the eight int32 partial sums of the products of the 32 int8 quants
// of the Q8_0 blocks at k*34(SI) and k*34(DI). Y8..Y11 are clobbered.
#define Q8_0BLK(k, Y) \
	VPMOVSXBW (k*34+2)(SI), Y8; \
	VPMOVSXBW (k*34+2)(DI), Y9; \
	VPMOVSXBW (k*34+18)(SI), Y10; \
	VPMOVSXBW (k*34+18)(DI), Y11; \
	VPMADDWD  Y9, Y8, Y; \
	VPMADDWD  Y11, Y10, Y10; \
	VPADDD    Y10, Y, Y

// func dotQ8_0AVX2(w, x *byte, ng int) float32
// Sums the first 8*ng blocks of dotQ8_0Go.
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   ng+16(FP), CX
	VXORPS X15, X15, X15
	TESTQ  CX, CX
	JZ     q80done

q80loop:
	Q8_0BLK(0, Y0)
	Q8_0BLK(1, Y1)
	Q8_0BLK(2, Y2)
	Q8_0BLK(3, Y3)
	Q8_0BLK(4, Y4)
	Q8_0BLK(5, Y5)
	Q8_0BLK(6, Y6)
	Q8_0BLK(7, Y7)
	HSUM8
	HALF8(SI, 0, 34, X8, Y8)
	HALF8(DI, 0, 34, X9, Y9)
	VMULPS    Y9, Y8, Y8  // dw*dx
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0  // float32(sumi) * (dw*dx)
	ADD8
	ADDQ      $272, SI
	ADDQ      $272, DI
	DECQ      CX
	JNZ       q80loop

q80done:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// Q4_0BLK puts in Y the eight int32 partial sums of (q-8)*x over the Q4_0 block at
// k*18(SI) and the Q8_0 block at k*34(DI): the 16 quant bytes are loaded into both
// lanes, the high lane shifted right by 4, so that the nibbles stand in the element
// order of both blocks (low ones in the low lane, high ones in the high lane); they
// multiply x as unsigned bytes, and 8*x is subtracted from the 16-bit pair sums (all
// below 2^13 in magnitude). Needs Y11 = hishift4, Y12 = nib4, Y13 = eights,
// Y14 = ones16; Y8, Y9 are clobbered.
#define Q4_0BLK(k, Y) \
	VBROADCASTI128 (k*18+2)(SI), Y8; \
	VPSRLVD        Y11, Y8, Y8; \
	VPAND          Y12, Y8, Y8; \
	VPMADDUBSW     (k*34+2)(DI), Y8, Y8; \
	VPMADDUBSW     (k*34+2)(DI), Y13, Y9; \
	VPSUBW         Y9, Y8, Y8; \
	VPMADDWD       Y14, Y8, Y

// func dotQ4_0AVX2(w, x *byte, ng int) float32
// Sums the first 8*ng blocks of dotQ4_0Go.
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    ng+16(FP), CX
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q40done
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU eights<>(SB), Y13
	VMOVDQU ones16<>(SB), Y14
	VMOVDQU hishift4<>(SB), Y11

q40loop:
	Q4_0BLK(0, Y0)
	Q4_0BLK(1, Y1)
	Q4_0BLK(2, Y2)
	Q4_0BLK(3, Y3)
	Q4_0BLK(4, Y4)
	Q4_0BLK(5, Y5)
	Q4_0BLK(6, Y6)
	Q4_0BLK(7, Y7)
	HSUM8
	HALF8(SI, 0, 18, X8, Y8)
	HALF8(DI, 0, 34, X9, Y9)
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0  // float32(sumi) * dw
	VMULPS    Y9, Y0, Y0  // ... * dx
	ADD8
	ADDQ      $144, SI
	ADDQ      $272, DI
	DECQ      CX
	JNZ       q40loop

q40done:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// LANESUM reduces the eight float32 lanes of Y0 the way dotF32Go does:
// ((s0+s4)+(s1+s5))+((s2+s6)+(s3+s7)), into X0: the two halves are added, then the
// adjacent pairs, then the two pair sums. X1 is clobbered.
#define LANESUM \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS       X1, X0, X0; \
	VHADDPS      X0, X0, X0; \
	VMOVSHDUP    X0, X1; \
	VADDSS       X1, X0, X0

// func dotF32AVX2(a, b *float32, n8 int) float32
// The eight-lane part of dotF32Go over the first 8*n8 elements.
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n8+16(FP), CX
	VXORPS Y0, Y0, Y0
	TESTQ  CX, CX
	JZ     f32done

f32loop:
	VMOVUPS (SI), Y1
	VMULPS  (DI), Y1, Y1
	VADDPS  Y1, Y0, Y0
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     f32loop

f32done:
	LANESUM
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotF16AVX2(a, b *uint16, n8 int) float32
// The eight-lane part of dotF16Go over the first 8*n8 elements.
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n8+16(FP), CX
	VXORPS Y0, Y0, Y0
	TESTQ  CX, CX
	JZ     f16done

f16loop:
	VCVTPH2PS (SI), Y1
	VCVTPH2PS (DI), Y2
	VMULPS    Y2, Y1, Y1
	VADDPS    Y1, Y0, Y0
	ADDQ      $16, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       f16loop

f16done:
	LANESUM
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotBF16AVX2(a, b *uint16, n8 int) float32
// The eight-lane part of dotBF16Go over the first 8*n8 elements.
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n8+16(FP), CX
	VXORPS Y0, Y0, Y0
	TESTQ  CX, CX
	JZ     bf16done

bf16loop:
	VPMOVZXWD (SI), Y1
	VPMOVZXWD (DI), Y2
	VPSLLD    $16, Y1, Y1
	VPSLLD    $16, Y2, Y2
	VMULPS    Y2, Y1, Y1
	VADDPS    Y1, Y0, Y0
	ADDQ      $16, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       bf16loop

bf16done:
	LANESUM
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func f16ToF32AVX2(h *uint16, f *float32, n8 int)
// Converts 8*n8 halves with VCVTPH2PS (for the test against the F16ToF32 table).
TEXT ·f16ToF32AVX2(SB), NOSPLIT, $0-24
	MOVQ h+0(FP), SI
	MOVQ f+8(FP), DI
	MOVQ n8+16(FP), CX
	TESTQ CX, CX
	JZ   cvtdone

cvtloop:
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       cvtloop

cvtdone:
	VZEROUPPER
	RET

DATA sixteens<>+0(SB)/8, $0x1010101010101010
DATA sixteens<>+8(SB)/8, $0x1010101010101010
DATA sixteens<>+16(SB)/8, $0x1010101010101010
DATA sixteens<>+24(SB)/8, $0x1010101010101010
GLOBL sixteens<>(SB), RODATA|NOPTR, $32

// bitspread: VPSHUFB pattern copying byte k/8 of a (lane-broadcast) dword into byte k.
DATA bitspread<>+0(SB)/8, $0x0000000000000000
DATA bitspread<>+8(SB)/8, $0x0101010101010101
DATA bitspread<>+16(SB)/8, $0x0202020202020202
DATA bitspread<>+24(SB)/8, $0x0303030303030303
GLOBL bitspread<>(SB), RODATA|NOPTR, $32

// bitclear: every bit of byte k set except bit k%8.
DATA bitclear<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitclear<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitclear<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitclear<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL bitclear<>(SB), RODATA|NOPTR, $32

DATA allones<>+0(SB)/8, $0xffffffffffffffff
DATA allones<>+8(SB)/8, $0xffffffffffffffff
DATA allones<>+16(SB)/8, $0xffffffffffffffff
DATA allones<>+24(SB)/8, $0xffffffffffffffff
GLOBL allones<>(SB), RODATA|NOPTR, $32

// NIBBLES puts in Y8 the 32 nibbles of the 16 bytes at off(SI) in element order (low
// nibbles, then high nibbles). Needs Y12 = nib4; Y9 is clobbered.
#define NIBBLES(off) \
	VMOVDQU     (off)(SI), X8; \
	VPSRLW      $4, X8, X9; \
	VINSERTI128 $1, X9, Y8, Y8; \
	VPAND       Y12, Y8, Y8

// FIFTHBITS ors into Y8 bit j of the uint32 at off(SI), moved to bit 4 of byte j. Y9 is
// clobbered.
#define FIFTHBITS(off) \
	VPBROADCASTD (off)(SI), Y9; \
	VPSHUFB      bitspread<>(SB), Y9, Y9; \
	VPOR         bitclear<>(SB), Y9, Y9; \
	VPCMPEQB     allones<>(SB), Y9, Y9; \
	VPAND        sixteens<>(SB), Y9, Y9; \
	VPOR         Y9, Y8, Y8

// Q4_1BLK puts in Y the eight int32 partial sums of q*x over the Q4_1 block at k*20(SI)
// and the Q8_1 block at k*36(DI). Needs Y12 = nib4, Y14 = ones16; Y8, Y9 are clobbered.
#define Q4_1BLK(k, Y) \
	NIBBLES(k*20+4); \
	VPMADDUBSW (k*36+4)(DI), Y8, Y8; \
	VPMADDWD   Y14, Y8, Y

// Q5_0BLK: the partial sums of (q-16)*x over the Q5_0 block at k*22(SI) and the Q8_0
// block at k*34(DI). Needs Y12 = nib4, Y13 = sixteens, Y14 = ones16; Y8, Y9 are
// clobbered.
#define Q5_0BLK(k, Y) \
	NIBBLES(k*22+6); \
	FIFTHBITS(k*22+2); \
	VPMADDUBSW (k*34+2)(DI), Y8, Y8; \
	VPMADDUBSW (k*34+2)(DI), Y13, Y9; \
	VPSUBW     Y9, Y8, Y8; \
	VPMADDWD   Y14, Y8, Y

// Q5_1BLK: the partial sums of q*x over the Q5_1 block at k*24(SI) and the Q8_1 block at
// k*36(DI). Needs Y12 = nib4, Y14 = ones16; Y8, Y9 are clobbered.
#define Q5_1BLK(k, Y) \
	NIBBLES(k*24+8); \
	FIFTHBITS(k*24+4); \
	VPMADDUBSW (k*36+4)(DI), Y8, Y8; \
	VPMADDWD   Y14, Y8, Y

// func dotQ4_1AVX2(w, x *byte, ng int) float32
// Sums the first 8*ng blocks of dotQ4_1Go.
TEXT ·dotQ4_1AVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    ng+16(FP), CX
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q41done
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU ones16<>(SB), Y14

q41loop:
	Q4_1BLK(0, Y0)
	Q4_1BLK(1, Y1)
	Q4_1BLK(2, Y2)
	Q4_1BLK(3, Y3)
	Q4_1BLK(4, Y4)
	Q4_1BLK(5, Y5)
	Q4_1BLK(6, Y6)
	Q4_1BLK(7, Y7)
	HSUM8
	HALF8(SI, 0, 20, X8, Y8)
	HALF8(DI, 0, 36, X9, Y9)
	VMULPS    Y9, Y8, Y8  // dd = dw*dx
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0  // dd*float32(sumi)
	HALF8(SI, 2, 20, X8, Y8)
	HALF8(DI, 2, 36, X9, Y9)
	VMULPS    Y9, Y8, Y8  // mw*sx
	VADDPS    Y8, Y0, Y0
	ADD8
	ADDQ      $160, SI
	ADDQ      $288, DI
	DECQ      CX
	JNZ       q41loop

q41done:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// func dotQ5_0AVX2(w, x *byte, ng int) float32
// Sums the first 8*ng blocks of dotQ5_0Go.
TEXT ·dotQ5_0AVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    ng+16(FP), CX
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q50done
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU sixteens<>(SB), Y13
	VMOVDQU ones16<>(SB), Y14

q50loop:
	Q5_0BLK(0, Y0)
	Q5_0BLK(1, Y1)
	Q5_0BLK(2, Y2)
	Q5_0BLK(3, Y3)
	Q5_0BLK(4, Y4)
	Q5_0BLK(5, Y5)
	Q5_0BLK(6, Y6)
	Q5_0BLK(7, Y7)
	HSUM8
	HALF8(SI, 0, 22, X8, Y8)
	HALF8(DI, 0, 34, X9, Y9)
	VMULPS    Y9, Y8, Y8  // dw*dx
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0
	ADD8
	ADDQ      $176, SI
	ADDQ      $272, DI
	DECQ      CX
	JNZ       q50loop

q50done:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// func dotQ5_1AVX2(w, x *byte, ng int) float32
// Sums the first 8*ng blocks of dotQ5_1Go.
TEXT ·dotQ5_1AVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    ng+16(FP), CX
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q51done
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU ones16<>(SB), Y14

q51loop:
	Q5_1BLK(0, Y0)
	Q5_1BLK(1, Y1)
	Q5_1BLK(2, Y2)
	Q5_1BLK(3, Y3)
	Q5_1BLK(4, Y4)
	Q5_1BLK(5, Y5)
	Q5_1BLK(6, Y6)
	Q5_1BLK(7, Y7)
	HSUM8
	HALF8(SI, 0, 24, X8, Y8)
	HALF8(DI, 0, 36, X9, Y9)
	VMULPS    Y9, Y8, Y8  // dd = dw*dx
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0  // dd*float32(sumi)
	HALF8(SI, 2, 24, X8, Y8)
	HALF8(DI, 2, 36, X9, Y9)
	VMULPS    Y9, Y8, Y8  // mw*sx
	VADDPS    Y8, Y0, Y0
	ADD8
	ADDQ      $192, SI
	ADDQ      $288, DI
	DECQ      CX
	JNZ       q51loop

q51done:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

DATA bias80<>+0(SB)/8, $0x8080808080808080
DATA bias80<>+8(SB)/8, $0x8080808080808080
DATA bias80<>+16(SB)/8, $0x8080808080808080
DATA bias80<>+24(SB)/8, $0x8080808080808080
GLOBL bias80<>(SB), RODATA|NOPTR, $32

// Q8_0VNNI puts in Y the eight int32 partial sums of w*x over the Q8_0 blocks at k*34(SI)
// and k*34(DI), as Σ(w+128)·x − Σ128·x: VPDPBUSD sums four u8·s8 products into int32
// without intermediate rounding, so both sums are exact. Needs Y13 = bias80; Y8, Y9
// are clobbered.
#define Q8_0VNNI(k, Y) \
	VPXOR    (k*34+2)(SI), Y13, Y8; \
	VPXOR    Y, Y, Y; \
	VPXOR    Y9, Y9, Y9; \
	VPDPBUSD (k*34+2)(DI), Y8, Y; \
	VPDPBUSD (k*34+2)(DI), Y13, Y9; \
	VPSUBD   Y9, Y, Y

// func dotQ8_0VNNI(w, x *byte, ng int) float32
// dotQ8_0AVX2 with AVX512-VNNI for the integer sums.
TEXT ·dotQ8_0VNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    ng+16(FP), CX
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q80vdone
	VMOVDQU bias80<>(SB), Y13

q80vloop:
	Q8_0VNNI(0, Y0)
	Q8_0VNNI(1, Y1)
	Q8_0VNNI(2, Y2)
	Q8_0VNNI(3, Y3)
	Q8_0VNNI(4, Y4)
	Q8_0VNNI(5, Y5)
	Q8_0VNNI(6, Y6)
	Q8_0VNNI(7, Y7)
	HSUM8
	HALF8(SI, 0, 34, X8, Y8)
	HALF8(DI, 0, 34, X9, Y9)
	VMULPS    Y9, Y8, Y8  // dw*dx
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0  // float32(sumi) * (dw*dx)
	ADD8
	ADDQ      $272, SI
	ADDQ      $272, DI
	DECQ      CX
	JNZ       q80vloop

q80vdone:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// Q4_0VNNI is Q4_0BLK with AVX512-VNNI: Σq·x − Σ8·x, each summed exactly into int32 by
// VPDPBUSD. Needs Y11 = hishift4, Y12 = nib4, Y13 = eights; Y8, Y9 are clobbered.
#define Q4_0VNNI(k, Y) \
	VBROADCASTI128 (k*18+2)(SI), Y8; \
	VPSRLVD        Y11, Y8, Y8; \
	VPAND          Y12, Y8, Y8; \
	VPXOR          Y, Y, Y; \
	VPXOR          Y9, Y9, Y9; \
	VPDPBUSD       (k*34+2)(DI), Y8, Y; \
	VPDPBUSD       (k*34+2)(DI), Y13, Y9; \
	VPSUBD         Y9, Y, Y

// func dotQ4_0VNNI(w, x *byte, ng int) float32
// dotQ4_0AVX2 with AVX512-VNNI for the integer sums.
TEXT ·dotQ4_0VNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    ng+16(FP), CX
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q40vdone
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU eights<>(SB), Y13
	VMOVDQU hishift4<>(SB), Y11

q40vloop:
	Q4_0VNNI(0, Y0)
	Q4_0VNNI(1, Y1)
	Q4_0VNNI(2, Y2)
	Q4_0VNNI(3, Y3)
	Q4_0VNNI(4, Y4)
	Q4_0VNNI(5, Y5)
	Q4_0VNNI(6, Y6)
	Q4_0VNNI(7, Y7)
	HSUM8
	HALF8(SI, 0, 18, X8, Y8)
	HALF8(DI, 0, 34, X9, Y9)
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0  // float32(sumi) * dw
	VMULPS    Y9, Y0, Y0  // ... * dx
	ADD8
	ADDQ      $144, SI
	ADDQ      $272, DI
	DECQ      CX
	JNZ       q40vloop

q40vdone:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// Q4_1VNNI is Q4_1BLK with AVX512-VNNI. Needs Y11 = hishift4, Y12 = nib4; Y8 is
// clobbered.
#define Q4_1VNNI(k, Y) \
	VBROADCASTI128 (k*20+4)(SI), Y8; \
	VPSRLVD        Y11, Y8, Y8; \
	VPAND          Y12, Y8, Y8; \
	VPXOR          Y, Y, Y; \
	VPDPBUSD       (k*36+4)(DI), Y8, Y

// Q5_0VNNI is Q5_0BLK with AVX512-VNNI: the fifth bits, loaded as the opmask K1, add 16
// to their bytes (AVX512BW). Needs Y12 = nib4, Y13 = sixteens; Y8, Y9, K1 are clobbered.
#define Q5_0VNNI(k, Y) \
	NIBBLES(k*22+6); \
	KMOVD    (k*22+2)(SI), K1; \
	VPADDB   Y13, Y8, K1, Y8; \
	VPXOR    Y, Y, Y; \
	VPXOR    Y9, Y9, Y9; \
	VPDPBUSD (k*34+2)(DI), Y8, Y; \
	VPDPBUSD (k*34+2)(DI), Y13, Y9; \
	VPSUBD   Y9, Y, Y

// Q5_1VNNI is Q5_1BLK with AVX512-VNNI, the fifth bits added as in Q5_0VNNI. Needs
// Y12 = nib4, Y13 = sixteens; Y8, Y9, K1 are clobbered.
#define Q5_1VNNI(k, Y) \
	NIBBLES(k*24+8); \
	KMOVD    (k*24+4)(SI), K1; \
	VPADDB   Y13, Y8, K1, Y8; \
	VPXOR    Y, Y, Y; \
	VPDPBUSD (k*36+4)(DI), Y8, Y

// func dotQ4_1VNNI(w, x *byte, ng int) float32
// dotQ4_1AVX2 with AVX512-VNNI for the integer sums.
TEXT ·dotQ4_1VNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    ng+16(FP), CX
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q41vdone
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU hishift4<>(SB), Y11

q41vloop:
	Q4_1VNNI(0, Y0)
	Q4_1VNNI(1, Y1)
	Q4_1VNNI(2, Y2)
	Q4_1VNNI(3, Y3)
	Q4_1VNNI(4, Y4)
	Q4_1VNNI(5, Y5)
	Q4_1VNNI(6, Y6)
	Q4_1VNNI(7, Y7)
	HSUM8
	HALF8(SI, 0, 20, X8, Y8)
	HALF8(DI, 0, 36, X9, Y9)
	VMULPS    Y9, Y8, Y8  // dd = dw*dx
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0  // dd*float32(sumi)
	HALF8(SI, 2, 20, X8, Y8)
	HALF8(DI, 2, 36, X9, Y9)
	VMULPS    Y9, Y8, Y8  // mw*sx
	VADDPS    Y8, Y0, Y0
	ADD8
	ADDQ      $160, SI
	ADDQ      $288, DI
	DECQ      CX
	JNZ       q41vloop

q41vdone:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// func dotQ5_0VNNI(w, x *byte, ng int) float32
// dotQ5_0AVX2 with AVX512-VNNI for the integer sums.
TEXT ·dotQ5_0VNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    ng+16(FP), CX
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q50vdone
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU sixteens<>(SB), Y13

q50vloop:
	Q5_0VNNI(0, Y0)
	Q5_0VNNI(1, Y1)
	Q5_0VNNI(2, Y2)
	Q5_0VNNI(3, Y3)
	Q5_0VNNI(4, Y4)
	Q5_0VNNI(5, Y5)
	Q5_0VNNI(6, Y6)
	Q5_0VNNI(7, Y7)
	HSUM8
	HALF8(SI, 0, 22, X8, Y8)
	HALF8(DI, 0, 34, X9, Y9)
	VMULPS    Y9, Y8, Y8  // dw*dx
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0
	ADD8
	ADDQ      $176, SI
	ADDQ      $272, DI
	DECQ      CX
	JNZ       q50vloop

q50vdone:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// func dotQ5_1VNNI(w, x *byte, ng int) float32
// dotQ5_1AVX2 with AVX512-VNNI for the integer sums.
TEXT ·dotQ5_1VNNI(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    ng+16(FP), CX
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q51vdone
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU sixteens<>(SB), Y13

q51vloop:
	Q5_1VNNI(0, Y0)
	Q5_1VNNI(1, Y1)
	Q5_1VNNI(2, Y2)
	Q5_1VNNI(3, Y3)
	Q5_1VNNI(4, Y4)
	Q5_1VNNI(5, Y5)
	Q5_1VNNI(6, Y6)
	Q5_1VNNI(7, Y7)
	HSUM8
	HALF8(SI, 0, 24, X8, Y8)
	HALF8(DI, 0, 36, X9, Y9)
	VMULPS    Y9, Y8, Y8  // dd = dw*dx
	VCVTDQ2PS Y0, Y0
	VMULPS    Y8, Y0, Y0  // dd*float32(sumi)
	HALF8(SI, 2, 24, X8, Y8)
	HALF8(DI, 2, 36, X9, Y9)
	VMULPS    Y9, Y8, Y8  // mw*sx
	VADDPS    Y8, Y0, Y0
	ADD8
	ADDQ      $192, SI
	ADDQ      $288, DI
	DECQ      CX
	JNZ       q51vloop

q51vdone:
	VZEROUPPER
	MOVSS X15, ret+24(FP)
	RET

// func dotQ4_0VNNIBlocks(w, x *byte, nb int, sumf float32) float32
// Continues dotQ4_0Go's sum sumf over nb blocks, one block at a time (for rows, or the
// ends of rows, shorter than a group of eight blocks), with AVX512-VNNI integer sums.
TEXT ·dotQ4_0VNNIBlocks(SB), NOSPLIT, $0-36
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVSS   sumf+24(FP), X15
	TESTQ   CX, CX
	JZ      q40bdone
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU eights<>(SB), Y13
	VMOVDQU hishift4<>(SB), Y11

q40bloop:
	Q4_0VNNI(0, Y0)
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VCVTDQ2PS    X0, X0      // float32(sumi)
	MOVWQZX      (SI), AX
	VMOVQ        AX, X1
	VCVTPH2PS    X1, X1      // dw
	MOVWQZX      (DI), AX
	VMOVQ        AX, X2
	VCVTPH2PS    X2, X2      // dx
	VMULSS       X1, X0, X0
	VMULSS       X2, X0, X0
	VADDSS       X0, X15, X15
	ADDQ         $18, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q40bloop

q40bdone:
	VZEROUPPER
	MOVSS X15, ret+32(FP)
	RET

// func dotQ4_0VNNIx4(w, x *byte, xstride, nb int, dst *[4]float32)
// dst[r] = dotQ4_0Go over nb blocks of the weight row w and the activation row at
// x+r·xstride, for r < 4: each weight block unpacked once, the four sums kept in the
// lanes of X15 and added to block after block, as dotQ4_0VNNIBlocks adds to one.
TEXT ·dotQ4_0VNNIx4(SB), NOSPLIT, $0-40
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    xstride+16(FP), R8
	MOVQ    nb+24(FP), CX
	LEAQ    (DI)(R8*1), R9
	LEAQ    (R9)(R8*1), R10
	LEAQ    (R10)(R8*1), R11
	VXORPS  X15, X15, X15
	TESTQ   CX, CX
	JZ      q40x4done
	VMOVDQU nib4<>(SB), Y12
	VMOVDQU eights<>(SB), Y13
	VMOVDQU hishift4<>(SB), Y11

q40x4loop:
	VBROADCASTI128 2(SI), Y8
	VPSRLVD        Y11, Y8, Y8
	VPAND          Y12, Y8, Y8
	VPXOR          Y0, Y0, Y0
	VPXOR          Y4, Y4, Y4
	VPDPBUSD       2(DI), Y8, Y0
	VPDPBUSD       2(DI), Y13, Y4
	VPSUBD         Y4, Y0, Y0
	VPXOR          Y1, Y1, Y1
	VPXOR          Y5, Y5, Y5
	VPDPBUSD       2(R9), Y8, Y1
	VPDPBUSD       2(R9), Y13, Y5
	VPSUBD         Y5, Y1, Y1
	VPXOR          Y2, Y2, Y2
	VPXOR          Y6, Y6, Y6
	VPDPBUSD       2(R10), Y8, Y2
	VPDPBUSD       2(R10), Y13, Y6
	VPSUBD         Y6, Y2, Y2
	VPXOR          Y3, Y3, Y3
	VPXOR          Y7, Y7, Y7
	VPDPBUSD       2(R11), Y8, Y3
	VPDPBUSD       2(R11), Y13, Y7
	VPSUBD         Y7, Y3, Y3
	VPHADDD        Y1, Y0, Y0
	VPHADDD        Y3, Y2, Y2
	VPHADDD        Y2, Y0, Y0
	VEXTRACTI128   $1, Y0, X1
	VPADDD         X1, X0, X0  // the four sumi
	VCVTDQ2PS      X0, X0
	MOVWQZX        (SI), AX
	VMOVQ          AX, X1
	VCVTPH2PS      X1, X1
	VBROADCASTSS   X1, X1      // dw
	MOVWQZX        (DI), AX
	MOVWQZX        (R9), BX
	SHLQ           $16, BX
	ORQ            BX, AX
	MOVWQZX        (R10), BX
	SHLQ           $32, BX
	ORQ            BX, AX
	MOVWQZX        (R11), BX
	SHLQ           $48, BX
	ORQ            BX, AX
	VMOVQ          AX, X2
	VCVTPH2PS      X2, X2      // the four dx
	VMULPS         X1, X0, X0
	VMULPS         X2, X0, X0
	VADDPS         X0, X15, X15
	ADDQ           $18, SI
	ADDQ           $34, DI
	ADDQ           $34, R9
	ADDQ           $34, R10
	ADDQ           $34, R11
	DECQ           CX
	JNZ            q40x4loop

q40x4done:
	MOVQ    dst+32(FP), DX
	VMOVUPS X15, (DX)
	VZEROUPPER
	RET
