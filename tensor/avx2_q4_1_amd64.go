package tensor

// The AVX2 (no AVX-512) kernels of avx2_q4_1_amd64.s: the x86 lane orders of
// dotQ4_1x86Go and dotQ4_0x86Go, one row.

//go:noescape
func dotQ4_1x86AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0x86AVX2(w, x *byte, nb int) float32
