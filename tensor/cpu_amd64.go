package tensor

// CPU features of the machine, computed once at start-up and never written again.
var (
	// hasAVX2 is set when the AVX2 and F16C instructions can be used: the CPU has them
	// and the operating system saves the YMM registers.
	hasAVX2 = levelCap >= LevelAVX2 && cpuHasAVX2()

	// hasVNNI is set when, besides AVX2, the AVX-512 VNNI and byte-masked instructions
	// can be used on YMM registers (AVX512F, AVX512BW, AVX512VL, AVX512_VNNI, and the OS
	// saves the AVX-512 state).
	hasVNNI = levelCap >= LevelAVX512 && hasAVX2 && cpuHasVNNI()

	// hasFMA is set when, besides AVX2, the CPU has the FMA3 instructions.
	hasFMA = hasAVX2 && cpuHasFMA()

	// hasAVX512 is set when, besides AVX2 and FMA, the AVX-512 foundation and
	// vector-length instructions can be used (the OS saves the ZMM state).
	hasAVX512 = levelCap >= LevelAVX512 && hasFMA && cpuHasAVX512()

	// hasWideVNNI is set when, besides hasVNNI, the CPU runs 512-bit instructions at full
	// width, so that a ZMM VPDPBUSD does twice a YMM one's work: every AVX-512 CPU but
	// AMD's Zen 4 (family 19h), which splits each into two 256-bit halves.
	hasWideVNNI = hasVNNI && hasAVX512 && !cpuIsZen4()

	// q40PrefetchNTA is set when the Q4_0 panel decode kernels (q40PanelX1,
	// q40PanelX1ZMM) prefetch the weights with PREFETCHNTA, else they use PREFETCHT0:
	// NTA on AMD, where it streamed best (Zen 2: 10.5-11 GB/s a thread against 9 with
	// T0); T0 elsewhere. On an Intel Xeon (Sapphire Rapids class) NTA lines skip the L2,
	// so that every token read synth-256-Q4_0's weights (0.9 MiB a core, which the 2 MiB
	// L2 holds) from the L3, and streaming a 1B Q4_0 from memory ran at half speed: with
	// T0 there (2 threads) synth-256-Q4_0 decodes 2.0x as fast at the AVX-512 level and
	// 2.6x at the AVX2 level, the 1B 2.1x and 1.7-2.1x. Zen 4 keeps NTA unmeasured. On
	// Zen 5 (family 1Ah, a 2-vCPU EPYC VM, 1 MiB L2 a core) the two measured alike: T0
	// over NTA, the median of the per-round ratios of interleaved runs, synth-256-Q4_0
	// tg32 1.008 (AVX-512 level) and 1.007 (AVX2 level) over 30 rounds, a 1B Q4_0 tg16
	// 0.995 and 0.995 over 60 (quartiles 0.93-1.10); it keeps NTA.
	q40PrefetchNTA = cpuIsAMD()
)

// Level returns the kernel level this process uses: the best the CPU and the operating
// system support, capped by the build tags infer_avx2 (no AVX-512) and infer_portable
// (no SIMD kernels at all), so that every level can be tested on a higher machine.
func Level() CPULevel {
	switch {
	case hasAVX512:
		return LevelAVX512
	case hasAVX2 && hasFMA:
		return LevelAVX2
	}
	return LevelPortable
}

// HasAVX512 reports whether AVX-512 F and VL, with AVX2, FMA and F16C, can be used: the
// CPU has them and the operating system saves their state. Packages with amd64 kernels
// of their own (backend/cpu) select them with it, so the CPU is probed in one place.
func HasAVX512() bool { return hasAVX512 }

// cpuid executes the CPUID instruction for leaf eax, sub-leaf ecx.
func cpuid(eax, ecx uint32) (a, b, c, d uint32)

// xgetbv0 returns XCR0, the register of the state components the OS saves.
func xgetbv0() (eax, edx uint32)

func cpuHasAVX2() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, c1, _ := cpuid(1, 0)
	const (
		osxsave = 1 << 27
		avx     = 1 << 28
		f16c    = 1 << 29
	)
	if c1&(osxsave|avx|f16c) != osxsave|avx|f16c {
		return false
	}
	if xcr0, _ := xgetbv0(); xcr0&6 != 6 { // XMM and YMM state
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	return b7&(1<<5) != 0 // AVX2
}

func cpuHasVNNI() bool {
	if xcr0, _ := xgetbv0(); xcr0&0xe6 != 0xe6 { // XMM, YMM, opmask, ZMM state
		return false
	}
	_, b7, c7, _ := cpuid(7, 0)
	const (
		avx512f  = 1 << 16
		avx512bw = 1 << 30
		avx512vl = 1 << 31
		vnni     = 1 << 11
	)
	const need = avx512f | avx512bw | avx512vl
	return b7&need == need && c7&vnni != 0
}

func cpuHasFMA() bool {
	_, _, c1, _ := cpuid(1, 0)
	return c1&(1<<12) != 0
}

func cpuHasAVX512() bool {
	if xcr0, _ := xgetbv0(); xcr0&0xe6 != 0xe6 { // XMM, YMM, opmask, ZMM state
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	const avx512f, avx512vl = 1 << 16, 1 << 31
	return b7&(avx512f|avx512vl) == avx512f|avx512vl
}

// cpuIsAMD reports whether the CPU's vendor is AMD ("AuthenticAMD").
func cpuIsAMD() bool {
	_, b, c, d := cpuid(0, 0)
	const auth, enti, camd = 0x68747541, 0x69746e65, 0x444d4163 // "AuthenticAMD"
	return b == auth && d == enti && c == camd
}

// cpuIsZen4 reports whether the CPU is an AMD of family 19h (Zen 3 and Zen 4; of them only
// Zen 4 has AVX-512).
func cpuIsZen4() bool {
	if !cpuIsAMD() {
		return false
	}
	a1, _, _, _ := cpuid(1, 0)
	family := (a1 >> 8) & 0xf
	if family == 0xf {
		family += (a1 >> 20) & 0xff
	}
	return family == 0x19
}
