package model

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/split"
	"github.com/infergo/infer/tensor"
)

// TestPlanHostMemory checks that the CPU is planned against the host's available
// memory: a context whose KV cache cannot fit is ErrDoesNotFit before anything is
// allocated (it used to be planned against 1 PiB and crash the allocator), and a plan
// that fits reports the memory left.
func TestPlanHostMemory(t *testing.T) {
	free, total, err := cpu.HostMemory()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("the host's free memory is unknown on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	path := newTiny(9).file(t, tensor.F32)
	small, err := PlanFor(path, Options{Threads: 1, ContextSize: 1024, KVType: KVCacheF32})
	if err != nil {
		t.Fatal(err)
	}
	var kv int64
	for _, s := range small.Stages {
		kv += s.KV
		if s.Device.Free >= split.Unlimited || s.FreeAfter <= 0 || s.FreeAfter > int64(total) {
			t.Errorf("stage on %s: free %d, free after %d; want the host's available memory (of %d), less the KV cache",
				s.Device.Name, s.Device.Free, s.FreeAfter, total)
		}
	}
	perToken := kv / 1024
	ctx := int64(free) / perToken * 5 / 4 // a margin for other processes freeing memory meanwhile
	if ctx > maxContext {
		t.Skipf("the host has %d bytes available: the largest context (%d tokens of %d bytes) fits", free, maxContext, perToken)
	}
	opts := Options{Threads: 1, ContextSize: int(ctx), KVType: KVCacheF32}
	_, err = PlanFor(path, opts)
	if !errors.Is(err, ErrDoesNotFit) || !strings.Contains(err.Error(), "host memory") {
		t.Fatalf("PlanFor with a %d-token context: %v, want ErrDoesNotFit naming host memory", ctx, err)
	}
	t.Log(err)
	if m, err := Load(path, opts); !errors.Is(err, ErrDoesNotFit) {
		if m != nil {
			m.Close()
		}
		t.Errorf("Load with a %d-token context: %v, want ErrDoesNotFit", ctx, err)
	}
}

// TestContextLimit checks that a context beyond llama.cpp's 32-bit n_ctx is refused
// before the planner multiplies it into byte counts.
func TestContextLimit(t *testing.T) {
	path := newTiny(9).file(t, tensor.F32)
	for _, c := range []int{maxContext + 1, 1 << 62} {
		if _, err := PlanFor(path, Options{Threads: 1, ContextSize: c}); err == nil || !strings.Contains(err.Error(), "at most") {
			t.Errorf("context %d: %v, want an error", c, err)
		}
	}
}

// TestContextDefault checks llama.cpp's default context: 4096 tokens, capped to the
// training context; an explicit size is used as given.
func TestContextDefault(t *testing.T) {
	for _, tt := range []struct{ ask, train, want int }{
		{0, 131072, 4096}, // a 128k model gets 4096, not a 16 GiB cache
		{0, 2048, 2048},
		{0, 4096, 4096},
		{-1, 512, 512},
		{8192, 2048, 8192},
		{100, 131072, 100},
	} {
		got := Options{ContextSize: tt.ask}.resolve(Config{NCtxTrain: tt.train}).ContextSize
		if got != tt.want {
			t.Errorf("ContextSize %d, training context %d: resolved to %d, want %d", tt.ask, tt.train, got, tt.want)
		}
	}
}

// TestPlanRejectsBadRatios checks that split ratios that are infinite, NaN, negative,
// all zero or too large to sum are an error, not a plan with every layer on one slot.
func TestPlanRejectsBadRatios(t *testing.T) {
	path := newTiny(9).file(t, tensor.F32)
	inf := math.Inf(1)
	for _, r := range [][]float64{{inf, 1}, {1e308, 1e308}, {-1, 2}, {math.NaN(), 1}, {0, 0}} {
		devs := cpuDevices(t, 2)
		if p, err := PlanFor(path, Options{Threads: 1, Devices: devs, Split: SplitOptions{Ratios: r}}); err == nil {
			t.Errorf("ratios %v: no error; plan:\n%s", r, p)
		}
	}
	if _, err := PlanFor(path, Options{Threads: 1, Devices: cpuDevices(t, 2), Split: SplitOptions{Ratios: []float64{1e300, 1e300}}}); err != nil {
		t.Errorf("ratios 1e300/1e300: %v", err)
	}
}
