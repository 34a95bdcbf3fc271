// Encodings of the A64 Advanced SIMD instructions that Go's assembler lacks (register
// numbers as arguments; checked against llvm-mc -mattr=+dotprod), and the block pieces
// the kernels of neon_arm64.s share.

// Integer.
#define WSDOT(d, n, m)      WORD $(0x4E809400 | ((m)<<16) | ((n)<<5) | (d)) // SDOT Vd.4S, Vn.16B, Vm.16B
#define WSMULL(d, n, m)     WORD $(0x0E20C000 | ((m)<<16) | ((n)<<5) | (d)) // SMULL Vd.8H, Vn.8B, Vm.8B
#define WSMULL2(d, n, m)    WORD $(0x4E20C000 | ((m)<<16) | ((n)<<5) | (d)) // SMULL2 Vd.8H, Vn.16B, Vm.16B
#define WSADDLP(d, n)       WORD $(0x4E602800 | ((n)<<5) | (d))             // SADDLP Vd.4S, Vn.8H
#define WSADALP(d, n)       WORD $(0x4E606800 | ((n)<<5) | (d))             // SADALP Vd.4S, Vn.8H
#define WADDP(d, n, m)      WORD $(0x4EA0BC00 | ((m)<<16) | ((n)<<5) | (d)) // ADDP Vd.4S, Vn.4S, Vm.4S
#define WMLAE(d, n, m, i)   WORD $(0x6F800000 | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d)) // MLA Vd.4S, Vn.4S, Vm.S[i]
#define WEOR(d, n, m)       WORD $(0x6E201C00 | ((m)<<16) | ((n)<<5) | (d)) // EOR Vd.16B, Vn.16B, Vm.16B
#define WAND(d, n, m)       WORD $(0x4E201C00 | ((m)<<16) | ((n)<<5) | (d)) // AND Vd.16B, Vn.16B, Vm.16B
#define WORR(d, n, m)       WORD $(0x4EA01C00 | ((m)<<16) | ((n)<<5) | (d)) // ORR Vd.16B, Vn.16B, Vm.16B
#define WUSHR8(d, n, s)     WORD $(0x6F000400 | ((16-(s))<<16) | ((n)<<5) | (d)) // USHR Vd.16B, Vn.16B, #s
#define WSHL8(d, n, s)      WORD $(0x4F085400 | ((s)<<16) | ((n)<<5) | (d)) // SHL Vd.16B, Vn.16B, #s
#define WSUB8(d, n, m)      WORD $(0x6E208400 | ((m)<<16) | ((n)<<5) | (d)) // SUB Vd.16B, Vn.16B, Vm.16B
#define WSXTL8(d, n)        WORD $(0x0F08A400 | ((n)<<5) | (d))             // SXTL Vd.8H, Vn.8B
#define WSXTL8H(d, n)       WORD $(0x4F08A400 | ((n)<<5) | (d))             // SXTL2 Vd.8H, Vn.16B
#define WSXTL16(d, n)       WORD $(0x0F10A400 | ((n)<<5) | (d))             // SXTL Vd.4S, Vn.4H
#define WSXTL16H(d, n)      WORD $(0x4F10A400 | ((n)<<5) | (d))             // SXTL2 Vd.4S, Vn.8H
#define WSADDLV(d, n)       WORD $(0x4E303800 | ((n)<<5) | (d))             // SADDLV Hd, Vn.16B
#define WSQXTN(d, n)        WORD $(0x0E614800 | ((n)<<5) | (d))             // SQXTN Vd.4H, Vn.4S
#define WSQXTN2(d, n)       WORD $(0x4E614800 | ((n)<<5) | (d))             // SQXTN2 Vd.8H, Vn.4S
#define WSQXTNB(d, n)       WORD $(0x0E214800 | ((n)<<5) | (d))             // SQXTN Vd.8B, Vn.8H
#define WSQXTNB2(d, n)      WORD $(0x4E214800 | ((n)<<5) | (d))             // SQXTN2 Vd.16B, Vn.8H

#define WMUL4(d, n, m)    WORD $(0x4EA09C00 | ((m)<<16) | ((n)<<5) | (d)) // MUL Vd.4S, Vn.4S, Vm.4S
#define WUSHL8B(d, n, m) WORD $(0x2E204400 | ((m)<<16) | ((n)<<5) | (d)) // USHL Vd.8B, Vn.8B, Vm.8B
#define WZIP1S(d, n, m)  WORD $(0x0E803800 | ((m)<<16) | ((n)<<5) | (d)) // ZIP1 Vd.2S, Vn.2S, Vm.2S
#define WZIP2S(d, n, m)  WORD $(0x0E807800 | ((m)<<16) | ((n)<<5) | (d)) // ZIP2 Vd.2S, Vn.2S, Vm.2S
#define WUXTL8(d, n)     WORD $(0x2F08A400 | ((n)<<5) | (d))             // UXTL Vd.8H, Vn.8B
#define WUXTL16(d, n)    WORD $(0x2F10A400 | ((n)<<5) | (d))             // UXTL Vd.4S, Vn.4H
#define WUXTL16H(d, n)   WORD $(0x6F10A400 | ((n)<<5) | (d))             // UXTL2 Vd.4S, Vn.8H
#define WDUPS2(d, n)     WORD $(0x4E140400 | ((n)<<5) | (d))             // DUP Vd.4S, Vn.S[2]
#define WADD4(d, n, m)   WORD $(0x4EA08400 | ((m)<<16) | ((n)<<5) | (d)) // ADD Vd.4S, Vn.4S, Vm.4S

// Floating point.
#define WSCVTF4(d, n)       WORD $(0x4E21D800 | ((n)<<5) | (d))             // SCVTF Vd.4S, Vn.4S
#define WSCVTFS(d, n)       WORD $(0x5E21D800 | ((n)<<5) | (d))             // SCVTF Sd, Sn
#define WFMLAE(d, n, m, i)  WORD $(0x4F801000 | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d)) // FMLA Vd.4S, Vn.4S, Vm.S[i]
#define WFMULE(d, n, m, i)  WORD $(0x4F809000 | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d)) // FMUL Vd.4S, Vn.4S, Vm.S[i]
#define WFADD4(d, n, m)     WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d)) // FADD Vd.4S, Vn.4S, Vm.4S
#define WFADDP4(d, n, m)    WORD $(0x6E20D400 | ((m)<<16) | ((n)<<5) | (d)) // FADDP Vd.4S, Vn.4S, Vm.4S
#define WFMUL4(d, n, m)     WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d)) // FMUL Vd.4S, Vn.4S, Vm.4S
#define WFABS4(d, n)        WORD $(0x4EA0F800 | ((n)<<5) | (d))             // FABS Vd.4S, Vn.4S
#define WFMAX4(d, n, m)     WORD $(0x4E20F400 | ((m)<<16) | ((n)<<5) | (d)) // FMAX Vd.4S, Vn.4S, Vm.4S
#define WFMIN4(d, n, m)     WORD $(0x4EA0F400 | ((m)<<16) | ((n)<<5) | (d)) // FMIN Vd.4S, Vn.4S, Vm.4S
#define WFMAXV(d, n)        WORD $(0x6E30F800 | ((n)<<5) | (d))             // FMAXV Sd, Vn.4S
#define WFMINV(d, n)        WORD $(0x6EB0F800 | ((n)<<5) | (d))             // FMINV Sd, Vn.4S
#define WFCVTNS4(d, n)      WORD $(0x4E21A800 | ((n)<<5) | (d))             // FCVTNS Vd.4S, Vn.4S
#define WFCVTL(d, n)        WORD $(0x0E217800 | ((n)<<5) | (d))             // FCVTL Vd.4S, Vn.4H
#define WFCVTL2(d, n)       WORD $(0x4E217800 | ((n)<<5) | (d))             // FCVTL2 Vd.4S, Vn.8H

// Lane dots of 16 int8 pairs Va·Vb into the four int32 lanes of Vo, lane l the sum of
// the products of bytes 4l..4l+3 (llama.cpp's x86 lane order): DOTS with SDOT, DOTN
// without (SMULL to int16 products, pairwise long adds; V14 and V15 scratch).
#define DOTS(o, a, b) WEOR(o, o, o); WSDOT(o, a, b)
#define DOTN(o, a, b) WSMULL(14, a, b); WSMULL2(15, a, b); WSADDLP(14, 14); WSADDLP(15, 15); WADDP(o, 14, 15)

// Accumulating dots of 16 int8 pairs into Vo, for kernels that need only the sum of its
// lanes: DOTSA's lanes hold sums of four products, DOTNA's sums of pairs (V14, V15
// scratch).
#define DOTSA(o, a, b) WSDOT(o, a, b)
#define DOTNA(o, a, b) WSMULL(14, a, b); WSMULL2(15, a, b); WSADALP(o, 14); WSADALP(o, 15)

// HALF(mem, r, f): the F16 value at mem, converted exactly to float32 in Ff (via Rr).
#define HALF(mem, r, f) MOVHU mem, r; FMOVS r, f; FCVTHS f, f

// One pair c of Q4_K sub-blocks: the 32 quant bytes at R5 (advanced), the 64
// activations at R6 (advanced); Va += Σ low nibbles·q8, Vb += Σ high nibbles·q8
// (V28 = 0x0F).
#define Q4KPAIR(DOTA, a, b) \
	VLD1.P 32(R5), [V0.B16, V1.B16]; \
	VLD1.P 64(R6), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	WAND(6, 0, 28); \
	WAND(7, 1, 28); \
	WUSHR8(8, 0, 4); \
	WUSHR8(9, 1, 4); \
	DOTA(a, 6, 2); \
	DOTA(a, 7, 3); \
	DOTA(b, 8, 4); \
	DOTA(b, 9, 5)

// More encodings (MLA by vector lanes, loads to lanes).
#define WFMLA4(d, n, m)   WORD $(0x4E20CC00 | ((m)<<16) | ((n)<<5) | (d)) // FMLA Vd.4S, Vn.4S, Vm.4S
#define WLD4S(t, n)       WORD $(0x4C400800 | ((n)<<5) | (t))             // LD4 {Vt.4S-Vt+3.4S}, [Xn]
#define WINSS(d, i, n)    WORD $(0x6E000400 | (((i)<<3|4)<<16) | ((n)<<5) | (d)) // MOV Vd.S[i], Vn.S[0]

// unpackScaleMinK4 of the 12 scale bytes q at R0+4: sc0-3 in V10, sc4-7 in V11, m0-3
// in V12, m4-7 in V13 (V26 = 0x3F, V27 = shifts 0×4, -4×4, V28 = 0x0F):
// [sc0-3, m0-3] = q0-7 & 63; [sc4-7, m4-7] = ([q8-11, q8-11] >> [0, 4]) & 15 | (q0-7 >> 6) << 4.
#define Q4KSCALES \
	ADD    $4, R0, R5; \
	VLD1   (R5), [V0.B16]; \
	WDUPS2(1, 0); \
	WAND(2, 0, 26); \
	WUSHL8B(1, 1, 27); \
	WAND(1, 1, 28); \
	WUSHR8(3, 0, 6); \
	WSHL8(3, 3, 4); \
	WORR(1, 1, 3); \
	WZIP1S(4, 2, 1); \
	WZIP2S(5, 2, 1); \
	WUXTL8(4, 4); \
	WUXTL8(5, 5); \
	WUXTL16(10, 4); \
	WUXTL16H(11, 4); \
	WUXTL16(12, 5); \
	WUXTL16H(13, 5)
