//go:build infer_neon && !infer_avx2 && !infer_portable

package tensor

// levelCap is the highest kernel level the build allows: -tags infer_neon tests and
// measures the plain NEON kernels (no SDOT) on an arm64 machine with the dot-product
// instructions. It does not cap the amd64 levels.
const levelCap = LevelNEON
