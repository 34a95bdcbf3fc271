package cpu

// hasAVX512 is set when the AVX-512 foundation and vector-length instructions (with
// AVX2, FMA and F16C) can be used: the CPU has them and the operating system saves the
// ZMM state. Computed once at
// start-up and never written again.
var hasAVX512 = cpuHasAVX512()

func cpuid(eax, ecx uint32) (a, b, c, d uint32)

func xgetbv0() (eax, edx uint32)

func cpuHasAVX512() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, c1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
		f16c    = 1 << 29
	)
	if c1&(fma|osxsave|avx|f16c) != fma|osxsave|avx|f16c {
		return false
	}
	if xcr0, _ := xgetbv0(); xcr0&0xe6 != 0xe6 { // XMM, YMM, opmask, ZMM state
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	const avx2, avx512f, avx512vl = 1 << 5, 1 << 16, 1 << 31
	return b7&(avx2|avx512f|avx512vl) == avx2|avx512f|avx512vl
}

//go:noescape
func vecDotF32Blocks(a, b *float32, nblk int) float32

//go:noescape
func sgemmF32Blocks(a, b *float32, nblk int) float32

// vecDotF32Fast returns vecDotF32(a, b, n) computed with vecDotF32Blocks when there is no
// block cut short by padding, and ok false otherwise.
func vecDotF32Fast(a, b []float32, n int) (float32, bool) {
	np := n &^ (4*lanes - 1)
	if !hasAVX512 || np > len(a) || len(b) < len(a) {
		return 0, false
	}
	var sum float32
	if np > 0 {
		sum = vecDotF32Blocks(&a[0], &b[0], np/(4*lanes))
	}
	for i := np; i < len(a); i++ {
		sum = fma32(a[i], b[i], sum)
	}
	return sum, true
}

// sgemmF32Fast returns sgemmF32(a, b) computed with sgemmF32Blocks.
func sgemmF32Fast(a, b []float32) (float32, bool) {
	nb := len(a) / lanes
	if !hasAVX512 || nb == 0 || len(b) < nb*lanes {
		return 0, false
	}
	return sgemmF32Blocks(&a[0], &b[0], nb), true
}

//go:noescape
func vecDotF16Blocks(a, b *uint16, nblk int) float32

//go:noescape
func sgemmF16Blocks(a, b *uint16, nblk int) float32

// vecDotF16Fast returns vecDotF16(a, b) computed with vecDotF16Blocks.
func vecDotF16Fast(a, b []uint16) (float32, bool) {
	np := len(a) &^ (4*lanes - 1)
	if !hasAVX512 || len(b) < len(a) {
		return 0, false
	}
	var s float32
	if np > 0 {
		s = vecDotF16Blocks(&a[0], &b[0], np/(4*lanes))
	}
	sum := float64(s)
	for i := np; i < len(a); i++ {
		sum += float64(fromF16(a[i]) * fromF16(b[i]))
	}
	return float32(sum), true
}

// sgemmF16Fast returns sgemmF16(a, b) computed with sgemmF16Blocks.
func sgemmF16Fast(a, b []uint16) (float32, bool) {
	nb := len(a) / lanes
	if !hasAVX512 || nb == 0 || len(b) < nb*lanes {
		return 0, false
	}
	return sgemmF16Blocks(&a[0], &b[0], nb), true
}

//go:noescape
func dotF16Seq(k *uint16, q *float32, n int) float64

//go:noescape
func madF16(acc, v *uint16, s float32, n int)

//go:noescape
func scaleF16(acc *uint16, s float32, n int)

//go:noescape
func swigluF32(dst, gate, up *float32, n8 int)

// spinPause executes PAUSE, easing a polling loop on the core and its sibling.
func spinPause()

//go:noescape
func fmaRowF16(acc *float32, v *uint16, p float32, n int)

//go:noescape
func scores8F16(k *uint16, idx *[8]int32, q *float32, hd int, scale float32, s *float32)
