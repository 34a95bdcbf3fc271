package tensor

// The float dots on arm64 (neon_float_arm64.s): the eight lanes and their reduction in
// NEON, the tail after the last group of eight in Go, as the Go code adds it.

//go:noescape
func dotF32NEON(w, x *byte, n8 int) float32

//go:noescape
func dotBF16F32NEON(w, x *byte, n8 int) float32

//go:noescape
func dotBF16NEON(w, x *byte, n8 int) float32

func dotF32(n int, w, x []byte) float32 {
	if !hasNEON || n < 8 {
		return dotF32Go(n, w, x)
	}
	a, b := Float32s(w)[:n], Float32s(x)[:n]
	sum := dotF32NEON(&w[0], &x[0], n/8)
	for i := n &^ 7; i < n; i++ {
		sum += float32(a[i] * b[i])
	}
	return sum
}

func dotBF16F32(n int, w, x []byte) float32 {
	if !hasNEON || n < 8 {
		return dotBF16F32Go(n, w, x)
	}
	a, b := uint16s(w, n), Float32s(x)[:n]
	sum := dotBF16F32NEON(&w[0], &x[0], n/8)
	for i := n &^ 7; i < n; i++ {
		sum += float32(BF16ToF32(a[i]) * b[i])
	}
	return sum
}

func dotBF16(n int, w, x []byte) float32 {
	if !hasNEON || n < 8 {
		return dotBF16Go(n, w, x)
	}
	a, b := uint16s(w, n), uint16s(x, n)
	sum := dotBF16NEON(&w[0], &x[0], n/8)
	for i := n &^ 7; i < n; i++ {
		sum += float32(BF16ToF32(a[i]) * BF16ToF32(b[i]))
	}
	return sum
}
