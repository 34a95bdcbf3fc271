package tensor

// CPULevel is a family of CPU kernels: the instructions the hot loops may use. The amd64
// levels are ordered (LevelPortable < LevelAVX2 < LevelAVX512), and so are arm64's
// (LevelPortable < LevelNEON < LevelNEONDot); an amd64 level and an arm64 one are
// compared with == only.
type CPULevel uint8

// The kernel levels, lowest first.
const (
	LevelPortable CPULevel = iota // Go code only, any GOARCH
	LevelAVX2                     // amd64 with AVX2, FMA and F16C
	LevelAVX512                   // amd64 with AVX-512 F/VL (and BW/VNNI where present)
	LevelNEON                     // arm64 with Advanced SIMD
	LevelNEONDot                  // arm64 with Advanced SIMD and the dot-product instructions (SDOT)
)

// String is the level's name as `infer bench` prints it: "portable", "avx2", "avx512",
// "neon", "neon-dotprod".
func (l CPULevel) String() string {
	switch l {
	case LevelPortable:
		return "portable"
	case LevelAVX2:
		return "avx2"
	case LevelAVX512:
		return "avx512"
	case LevelNEON:
		return "neon"
	case LevelNEONDot:
		return "neon-dotprod"
	}
	return "unknown"
}
