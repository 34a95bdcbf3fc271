package tensor

import (
	"encoding/binary"
	"os"
)

// cpuHasDotProd reports whether the kernel lists ASIMDDP in the AT_HWCAP entry of the
// auxiliary vector (/proc/self/auxv, pairs of 64-bit type and value); false when the
// vector cannot be read.
func cpuHasDotProd() bool {
	auxv, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return false
	}
	return hwcapHas(auxv, hwcapASIMDDP)
}

const (
	atHWCAP      = 16      // AT_HWCAP
	hwcapASIMDDP = 1 << 20 // HWCAP_ASIMDDP: SDOT, UDOT
)

// hwcapHas reports whether the AT_HWCAP value of the auxiliary vector auxv has all the
// bits of mask.
func hwcapHas(auxv []byte, mask uint64) bool {
	for ; len(auxv) >= 16; auxv = auxv[16:] {
		typ, val := binary.LittleEndian.Uint64(auxv), binary.LittleEndian.Uint64(auxv[8:])
		if typ == 0 { // AT_NULL
			break
		}
		if typ == atHWCAP {
			return val&mask == mask
		}
	}
	return false
}
