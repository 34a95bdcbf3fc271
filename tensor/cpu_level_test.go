package tensor

import (
	"runtime"
	"testing"
)

func TestCPULevelString(t *testing.T) {
	for _, tt := range []struct {
		l    CPULevel
		want string
	}{{LevelPortable, "portable"}, {LevelAVX2, "avx2"}, {LevelAVX512, "avx512"}, {LevelNEON, "neon"}, {LevelNEONDot, "neon-dotprod"}, {CPULevel(9), "unknown"}} {
		if got := tt.l.String(); got != tt.want {
			t.Errorf("CPULevel(%d).String() = %q, want %q", tt.l, got, tt.want)
		}
	}
}

// TestLevelCap checks that the build's cap holds: the level never exceeds it, and an
// amd64 level never claims AVX-512 without the AVX-512 flag. On arm64 the caps are
// infer_portable and infer_neon (no SDOT); infer_avx2 caps nothing there.
func TestLevelCap(t *testing.T) {
	l := Level()
	if (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" && levelCap >= LevelNEON) && l > levelCap {
		t.Fatalf("Level() = %v above the build's cap %v", l, levelCap)
	}
	if (l == LevelAVX512) != HasAVX512() {
		t.Fatalf("Level() = %v but HasAVX512() = %v", l, HasAVX512())
	}
	t.Logf("kernel level: %v", l)
}
