//go:build infer_portable

package tensor

// levelCap is the highest kernel level the build allows: -tags infer_portable runs the
// Go code only, as on a machine without SIMD kernels.
const levelCap = LevelPortable
