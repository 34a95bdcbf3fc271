//go:build !infer_avx2 && !infer_portable && !infer_neon

package tensor

// levelCap is the highest kernel level the build allows: no cap.
const levelCap = LevelNEONDot
