package tensor

import (
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// threadTime is the CPU time the calling thread has used: on a shared machine the
// benchmarks report it beside the wall time, as it does not count other processes' turns.
// It is CLOCK_THREAD_CPUTIME_ID's reading, to the nanosecond (getrusage's RUSAGE_THREAD
// moves at the scheduler's ticks only, too coarse for cpuTurns).
func threadTime() time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	_, _, _ = syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
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

// cpuTurns runs the kernels fs on a locked thread in turns, each once per iteration,
// and reports each one's bytes per CPU second (metric names[k]+"-cpuGB/s") and, for
// each after the first, the median over the turns of its speed relative to the first
// (names[k]+"/"+names[0]): on a noisy machine the turns share its slow changes of
// speed, and the median leaves out the turns a burst of noise hit, so the ratio holds
// better than separate benchmarks' figures.
func cpuTurns(b *testing.B, bytes int64, names []string, fs ...func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(bytes * int64(len(fs)))
	d := make([][]time.Duration, len(fs))
	for b.Loop() {
		for k, f := range fs {
			t0 := threadTime()
			f()
			d[k] = append(d[k], threadTime()-t0)
		}
	}
	reportTurns(b, bytes, names, d, "-cpuGB/s")
}
