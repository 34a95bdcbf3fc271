// The body of q40PanelX1 and q40PanelX1T0 (avx2_q4_0_amd64.s), included after each
// TEXT line with Q40PF defined as the prefetch instruction: PREFETCHNTA or PREFETCHT0.

	MOVQ w+0(FP), SI
	MOVQ dst+40(FP), AX
	MOVQ np+32(FP), DX

	// The first q40pfd bytes, which the loop's prefetches do not cover.
	Q40PF 0(SI)
	Q40PF 64(SI)
	Q40PF 128(SI)
	Q40PF 192(SI)
	Q40PF 256(SI)
	Q40PF 320(SI)
	Q40PF 384(SI)
	Q40PF 448(SI)
	Q40PF 512(SI)
	Q40PF 576(SI)
	Q40PF 640(SI)
	Q40PF 704(SI)
	Q40PF 768(SI)
	Q40PF 832(SI)
	Q40PF 896(SI)
	Q40PF 960(SI)
	Q40PF 1024(SI)
	Q40PF 1088(SI)

q40p1panel:
	MOVQ   x+8(FP), DI
	MOVQ   tab+16(FP), R8
	MOVQ   nb+24(FP), CX
	VXORPS Y0, Y0, Y0

q40p1loop:
	Q40PF q40pfd(SI)
	Q40PF q40pfd+64(SI)
	Q40PF q40pfd+128(SI)
	Q40P8
	VMOVAPS Y12, Y1
	Q40X(DI, 0, 16, Y0, Y1)
	ADDQ $144, SI
	ADDQ $34, DI
	ADDQ $32, R8
	DECQ CX
	JNZ  q40p1loop

	VMOVUPS Y0, (AX)
	ADDQ    $32, AX
	DECQ    DX
	JNZ     q40p1panel
	VZEROUPPER
	RET
