package tensor

// The AVX2 kernel of DotBF16F32 (avx2_bf16_amd64.s): the Go code's eight lanes.

//go:noescape
func dotBF16F32AVX2(w *uint16, x *float32, n8 int, s *[8]float32)

func dotBF16F32(n int, w, x []byte) float32 {
	if !hasAVX2 || n < 8 {
		return dotBF16F32Go(n, w, x)
	}
	a, b := uint16s(w, n), Float32s(x)[:n]
	var s [8]float32
	dotBF16F32AVX2(&a[0], &b[0], n/8, &s)
	sum := ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]))
	for i := n &^ 7; i < n; i++ {
		sum += float32(BF16ToF32(a[i]) * b[i])
	}
	return sum
}
