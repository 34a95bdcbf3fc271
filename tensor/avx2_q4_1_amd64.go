package tensor

// The AVX2 (no AVX-512) Q4_1 kernel of avx2_q4_1_amd64.s: the x86 lane order of
// dotQ4_1x86Go, one row.

//go:noescape
func dotQ4_1x86AVX2(w, x *byte, nb int) float32
