//go:build infer_avx2 && !infer_portable

package tensor

// levelCap is the highest kernel level the build allows: -tags infer_avx2 tests and
// measures the AVX2 kernels on an AVX-512 machine.
const levelCap = LevelAVX2
