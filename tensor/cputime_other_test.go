//go:build !linux

package tensor

import (
	"testing"
	"time"
)

// cpuLoop runs f b.N times (without a CPU-time metric off Linux).
func cpuLoop(b *testing.B, bytes int64, f func()) {
	b.SetBytes(bytes)
	for b.Loop() {
		f()
	}
}

// cpuTurns is the Linux cpuTurns with wall time for CPU time.
func cpuTurns(b *testing.B, bytes int64, names []string, fs ...func()) {
	b.SetBytes(bytes * int64(len(fs)))
	d := make([][]time.Duration, len(fs))
	for b.Loop() {
		for k, f := range fs {
			t0 := time.Now()
			f()
			d[k] = append(d[k], time.Since(t0))
		}
	}
	reportTurns(b, bytes, names, d, "-GB/s")
}
