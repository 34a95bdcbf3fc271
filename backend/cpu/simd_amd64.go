package cpu

import "github.com/infergo/infer/tensor"

// The kernel level, from tensor.Level (which probes the CPU once at start-up and honours
// the infer_avx2 and infer_portable build tags): hasAVX512 selects the AVX-512 kernels
// of avx512_*_amd64.s, useAVX2 the AVX2+FMA+F16C kernels of avx2_amd64.s.
// The AVX2 kernels compute the bits of the AVX-512 order that simd.go defines, so they
// also serve an AVX-512 CPU wherever it has no kernel of its own: useAVX2 is set at both
// levels, and a call site tests hasAVX512 first where an AVX-512 kernel exists. Neither
// is set at the portable level.
var (
	hasAVX512 = tensor.HasAVX512()
	useAVX2   = hasAVX512 || tensor.Level() == tensor.LevelAVX2
)

// vecDotF32Fast returns vecDotF32(a, b, n) computed by a row kernel when there is no
// block cut short by padding, and ok false otherwise.
func vecDotF32Fast(a, b []float32, n int) (float32, bool) {
	np := n &^ (4*lanes - 1)
	if !useAVX2 || len(a) == 0 || np > len(a) || len(b) < len(a) {
		return 0, false
	}
	var s float32 // len(a) is in n's block of 64
	if hasAVX512 {
		vecDotF32RowsAVX512(&a[0], 0, &b[0], len(a), 1, &s)
	} else {
		vecDotF32RowsAVX2(&a[0], 0, &b[0], len(a), 1, &s)
	}
	return s, true
}

// sgemmF32Fast returns sgemmF32(a, b) computed by sgemmF32BlocksAVX2.
func sgemmF32Fast(a, b []float32) (float32, bool) {
	nb := len(a) / lanes
	if !useAVX2 || nb == 0 || len(b) < nb*lanes {
		return 0, false
	}
	return sgemmF32BlocksAVX2(&a[0], &b[0], nb), true
}

// vecDotF16Fast returns vecDotF16(a, b) computed by vecDotF16RowsAVX2.
func vecDotF16Fast(a, b []uint16) (float32, bool) {
	if !useAVX2 || len(a) == 0 || len(b) < len(a) {
		return 0, false
	}
	var s float32
	vecDotF16RowsAVX2(&a[0], 0, &b[0], len(a), 1, &s)
	return s, true
}

// sgemmF16Fast returns sgemmF16(a, b) computed by sgemmF16BlocksAVX2.
func sgemmF16Fast(a, b []uint16) (float32, bool) {
	nb := len(a) / lanes
	if !useAVX2 || nb == 0 || len(b) < nb*lanes {
		return 0, false
	}
	return sgemmF16BlocksAVX2(&a[0], &b[0], nb), true
}

//go:noescape
func madF16(acc, v *uint16, s float32, n int)

//go:noescape
func scaleF16(acc *uint16, s float32, n int)

// spinPause executes PAUSE, easing a polling loop on the core and its sibling.
func spinPause()
