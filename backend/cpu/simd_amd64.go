package cpu

import "github.com/infergo/infer/tensor"

// The kernel level, from tensor.Level (which probes the CPU once at start-up and honours
// the infer_avx2 and infer_portable build tags): hasAVX512 selects the AVX-512 kernels
// (simd_amd64.s, avx512_*_amd64.s), useAVX2 the AVX2+FMA+F16C kernels of avx2_amd64.s.
// The AVX2 kernels compute the bits of the AVX-512 order that simd.go defines, so they
// also serve an AVX-512 CPU wherever it has no kernel of its own: useAVX2 is set at both
// levels, and a call site tests hasAVX512 first where an AVX-512 kernel exists. Neither
// is set at the portable level.
var (
	hasAVX512 = tensor.HasAVX512()
	useAVX2   = hasAVX512 || tensor.Level() == tensor.LevelAVX2
)

//go:noescape
func vecDotF32Blocks(a, b *float32, nblk int) float32

//go:noescape
func sgemmF32Blocks(a, b *float32, nblk int) float32

// vecDotF32Fast returns vecDotF32(a, b, n) computed with vecDotF32Blocks when there is no
// block cut short by padding, and ok false otherwise.
func vecDotF32Fast(a, b []float32, n int) (float32, bool) {
	np := n &^ (4*lanes - 1)
	if np > len(a) || len(b) < len(a) {
		return 0, false
	}
	if useAVX2 && len(a) > 0 {
		var s float32
		vecDotF32RowsAVX2(&a[0], 0, &b[0], len(a), 1, &s) // len(a) is in n's block of 64
		return s, true
	}
	if !hasAVX512 {
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
	switch {
	case nb == 0 || len(b) < nb*lanes:
		return 0, false
	case useAVX2:
		return sgemmF32BlocksAVX2(&a[0], &b[0], nb), true
	case hasAVX512:
		return sgemmF32Blocks(&a[0], &b[0], nb), true
	}
	return 0, false
}

//go:noescape
func vecDotF16Blocks(a, b *uint16, nblk int) float32

//go:noescape
func sgemmF16Blocks(a, b *uint16, nblk int) float32

// vecDotF16Fast returns vecDotF16(a, b) computed with vecDotF16Blocks.
func vecDotF16Fast(a, b []uint16) (float32, bool) {
	np := len(a) &^ (4*lanes - 1)
	if len(b) < len(a) {
		return 0, false
	}
	if useAVX2 && len(a) > 0 {
		var s float32
		vecDotF16RowsAVX2(&a[0], 0, &b[0], len(a), 1, &s)
		return s, true
	}
	if !hasAVX512 {
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
	switch {
	case nb == 0 || len(b) < nb*lanes:
		return 0, false
	case useAVX2:
		return sgemmF16BlocksAVX2(&a[0], &b[0], nb), true
	case hasAVX512:
		return sgemmF16Blocks(&a[0], &b[0], nb), true
	}
	return 0, false
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
