//go:build !linux

package tensor

import "testing"

// cpuLoop runs f b.N times (without a CPU-time metric off Linux).
func cpuLoop(b *testing.B, bytes int64, f func()) {
	b.SetBytes(bytes)
	for b.Loop() {
		f()
	}
}
