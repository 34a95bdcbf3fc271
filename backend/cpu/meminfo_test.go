package cpu

import (
	"errors"
	"runtime"
	"testing"
)

func TestParseMemInfo(t *testing.T) {
	tests := []struct {
		name        string
		text        string
		free, total uint64
		err         bool
	}{
		{"MemAvailable", "MemTotal:       24683584 kB\nMemFree:        21888412 kB\nMemAvailable:   24081004 kB\nBuffers:           32416 kB\n",
			24081004 << 10, 24683584 << 10, false},
		{"old kernel: free + buffers + cached", "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 300 kB\nSwapCached: 7 kB\n",
			420 << 10, 1000 << 10, false},
		{"available capped at total", "MemTotal: 10 kB\nMemAvailable: 20 kB\n", 10 << 10, 10 << 10, false},
		{"junk lines skipped", "garbage\nMemTotal: x kB\nMemTotal: 8 kB\nHugePages_Total: 0\nMemAvailable: 4 MB\nMemAvailable: 4 kB\n",
			4 << 10, 8 << 10, false},
		{"no total", "MemFree: 5 kB\n", 0, 0, true},
		{"empty", "", 0, 0, true},
	}
	for _, tt := range tests {
		free, total, err := parseMemInfo([]byte(tt.text))
		if (err != nil) != tt.err || free != tt.free || total != tt.total {
			t.Errorf("%s: %d, %d, %v; want %d, %d, error %v", tt.name, free, total, err, tt.free, tt.total, tt.err)
		}
	}
}

// TestMemInfo checks the device's figures on this machine: on Linux some memory is
// available and no more than the total; elsewhere the amount is unsupported.
func TestMemInfo(t *testing.T) {
	d := New(1)
	defer d.Close()
	free, total, err := d.MemInfo()
	if runtime.GOOS != "linux" {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("MemInfo on %s: %v, want errors.ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	if err != nil || free == 0 || free > total || total < 64<<20 {
		t.Errorf("MemInfo = %d free of %d, %v", free, total, err)
	}
}
