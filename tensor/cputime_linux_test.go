package tensor

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadTime is the CPU time the calling thread has used: on a shared machine the
// benchmarks report it beside the wall time, as it does not count other processes' turns.
func threadTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuLoop runs f b.N times on a locked thread and reports the bytes per CPU second.
func cpuLoop(b *testing.B, bytes int64, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(bytes)
	t0 := threadTime()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if d := threadTime() - t0; d > 0 {
		b.ReportMetric(float64(bytes)*float64(n)/d.Seconds()/1e9, "cpuGB/s")
	}
}
