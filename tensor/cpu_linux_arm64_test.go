package tensor

import (
	"encoding/binary"
	"testing"
)

// TestHWCAP reads AT_HWCAP out of auxiliary vectors: found anywhere before AT_NULL,
// missing, cut short.
func TestHWCAP(t *testing.T) {
	auxv := func(pairs ...uint64) []byte {
		b := make([]byte, 8*len(pairs))
		for i, v := range pairs {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
		return b
	}
	for _, tt := range []struct {
		name string
		auxv []byte
		want bool
	}{
		{"dotprod", auxv(6, 4096, atHWCAP, 0xfff|hwcapASIMDDP, 0, 0), true},
		{"no dotprod", auxv(atHWCAP, 0xfff, 0, 0), false},
		{"after AT_NULL", auxv(0, 0, atHWCAP, hwcapASIMDDP), false},
		{"no HWCAP", auxv(6, 4096, 0, 0), false},
		{"cut short", auxv(atHWCAP, hwcapASIMDDP)[:12], false},
		{"empty", nil, false},
	} {
		if got := hwcapHas(tt.auxv, hwcapASIMDDP); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
