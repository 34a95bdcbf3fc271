package tensor

// CPU features of the machine, computed once at start-up and never written again.
var (
	// hasNEON is set unless the build caps the level at portable: Advanced SIMD is part
	// of every arm64 CPU Go runs on.
	hasNEON = levelCap != LevelPortable

	// hasDotProd is set when, besides NEON, the kernels may use SDOT (FEAT_DotProd): the
	// CPU has it (cpuHasDotProd) and the build does not cap the level at infer_neon.
	hasDotProd = hasNEON && levelCap != LevelNEON && cpuHasDotProd()
)

// Level returns the kernel level this process uses: neon-dotprod where the CPU has the
// dot-product instructions, neon otherwise, capped by the build tags infer_neon (no
// SDOT) and infer_portable (no SIMD kernels at all), so that every level can be tested
// on a higher machine.
func Level() CPULevel {
	switch {
	case hasDotProd:
		return LevelNEONDot
	case hasNEON:
		return LevelNEON
	}
	return LevelPortable
}

// HasAVX512 reports whether AVX-512 kernels can be used: never on arm64.
func HasAVX512() bool { return false }
