//go:build !infer_avx2 && !infer_portable

package tensor

// levelCap is the highest kernel level the build allows: no cap.
const levelCap = LevelNEON
