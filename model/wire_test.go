package model

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/tensor"
)

func TestParseWireFormat(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want WireFormat
		ok   bool
	}{
		{"f32", WireF32, true}, {"F16", WireF16, true}, {"f16", WireF16, true},
		{"", 0, false}, {"q8_0", 0, false}, {"bf16", 0, false},
	} {
		got, err := ParseWireFormat(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseWireFormat(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		var u WireFormat
		if err := u.UnmarshalText([]byte(tt.in)); u != tt.want || (err == nil) != tt.ok {
			t.Errorf("UnmarshalText(%q) = %v, %v", tt.in, u, err)
		}
	}
	for _, w := range []WireFormat{WireF32, WireF16} {
		b, err := w.MarshalText()
		if back, perr := ParseWireFormat(string(b)); err != nil || perr != nil || back != w {
			t.Errorf("%v: MarshalText %q, %v; parsed back %v, %v", w, b, err, back, perr)
		}
	}
	if WireF32.DType() != tensor.F32 || WireF16.DType() != tensor.F16 {
		t.Errorf("DType: %v, %v", WireF32.DType(), WireF16.DType())
	}
	if _, err := WireFormat(2).MarshalText(); err == nil || WireFormat(2).String() != "WireFormat(2)" {
		t.Errorf("WireFormat(2): %q, MarshalText error %v", WireFormat(2).String(), err)
	}
}

func TestLoadRejectsUnknownWire(t *testing.T) {
	path := newTiny(3).file(t, tensor.F32)
	if _, err := Load(path, Options{Wire: 7, ContextSize: 16}); err == nil {
		t.Fatal("Load with WireFormat(7): no error")
	}
}

// Tolerances of the f16 wire: the largest |logit(split, f16 wire) − logit(one device)|
// allowed over a prompt and three decode steps.
//
// With float weights, every hop rounds x by at most u = 2⁻¹¹ relative (F16 keeps 11
// significant bits). RMSNorm makes each block see x's direction, not its scale, so a
// logit moves by roughly u·|logit| per hop, times the blocks' gain: over the three hops
// of 4 stages with |logit| ≤ 17 on stories260K that is 3·2⁻¹¹·17 ≈ 0.025, so 5e-2
// leaves a factor 2 for the gain. Measured: 4.5e-3 (stories260K-F32), 5.6e-3 (the
// writer-made F16 model).
//
// With quantized weights, the CPU path quantizes x to Q8_0/Q8_K before each matmul
// (llama.cpp's path), and a rounding of x can flip an element to the next Q8 step, a
// change of up to 1/127 of its block's largest value instead of u: the difference is that
// of one more activation rounding, the same order as what llama.cpp's default F16 KV
// cache does to these models (F16 vs F32 cache: 0.22 on Q8_0, 0.20 on Q4_K_M). Measured
// with the f16 wire: 0.18 (Q8_0), 0.25 (Q4_K_M); allowed: 0.5, 3% of the largest logit.
const (
	wireTolFloat     = 5e-2
	wireTolQuantized = 0.5
)

func TestF16Wire(t *testing.T) {
	prompt := []int32{1, 7, 3, 9, 2, 5, 5, 8, 0, 10, 4, 6, 1, 2, 3, 9, 7, 6, 5, 4, 3}
	tiny := newTiny(5).file(t, tensor.F16)
	models := []struct {
		name, file string // file "" is the writer-made model, which needs no test data
		tol        float64
	}{
		{"writer-made F16", "", wireTolFloat},
		{"stories260K-F32", "stories260K-F32.gguf", wireTolFloat},
		{"stories260K-Q8_0", "stories260K-Q8_0.gguf", wireTolQuantized},
		{"stories260K-Q4_K_M", "stories260K-Q4_K_M.gguf", wireTolQuantized},
	}
	for _, mm := range models {
		t.Run(mm.name, func(t *testing.T) {
			path := tiny
			if mm.file != "" {
				path = testdata.Path(t, mm.file)
			}
			f16WireSplits(t, mm.name, path, mm.tol, prompt)
		})
	}
}

// f16WireSplits compares the splits of the model at path, on the f32 and f16 wires,
// with one device: bit-identical on the f32 wire, within tol on the f16 wire.
func f16WireSplits(t *testing.T, name, path string, tol float64, prompt []int32) {
	worst, differs := 0.0, false
	for _, tt := range []struct {
		name      string
		slots, ub int
		wire      WireFormat
		exact     bool
	}{
		{"1 stage, f16 wire ignored", 1, 8, WireF16, true},
		{"2 stages, f32 wire", 2, 8, WireF32, true},
		{"2 stages, f16 wire", 2, 8, WireF16, false},
		{"4 stages, f16 wire", 4, 8, WireF16, false},
		{"4 stages, f16 wire, micro-batches of 3", 4, 3, WireF16, false},
	} {
		// One device with batches of the micro-batch size computes the same rows.
		base := Options{Threads: 1, ContextSize: 64, BatchSize: tt.ub, MicroBatch: tt.ub, KVType: KVCacheF32}
		want, _ := evalSteps(t, path, base, prompt)
		o := base
		o.BatchSize, o.Devices, o.Split.Ratios, o.Wire = 8, cpuDevices(t, tt.slots), equal(tt.slots), tt.wire
		got, stages := evalSteps(t, path, o, prompt)
		d, at := maxAbsDiff(got, want)
		switch {
		case len(got) != len(want):
			t.Fatalf("%s/%s: %d logits, want %d", name, tt.name, len(got), len(want))
		case tt.exact && sameBits(got, want) >= 0:
			t.Errorf("%s/%s: max |diff| %g at %d, want bit-identical", name, tt.name, d, at)
		case !tt.exact && !(d < tol):
			t.Errorf("%s/%s (%d stages): max |diff| %g at %d, want < %g", name, tt.name, stages, d, at, tol)
		}
		if !tt.exact {
			worst, differs = max(worst, d), differs || sameBits(got, want) >= 0
		}
	}
	t.Logf("%s: f16 wire, max |logit diff| vs one device %.3g (tolerance %g)", name, worst, tol)
	if !differs {
		t.Errorf("%s: every f16-wire split is bit-identical to one device: is the option active?", name)
	}
}

// sharedSpy is a CPU device that implements backend.SharedAllocator and notes the
// type and shape of each boundary buffer asked of it.
type sharedSpy struct {
	*cpu.Device
	got *[]string
}

func (d sharedSpy) AllocShared(dt tensor.DType, rows, cols int, peer backend.Device) (backend.Buffer, error) {
	*d.got = append(*d.got, fmt.Sprintf("%v(%d, %d)", dt, rows, cols))
	return d.Alloc(dt, rows, cols)
}

// TestWireBoundaryBuffers checks that the buffer a hop writes into on the consumer is
// a shared allocation of the wire's type and the batch's shape: F32 x on the f32 wire,
// the F16 wire buffer on the f16 wire (half the bytes), one per stage after the first.
func TestWireBoundaryBuffers(t *testing.T) {
	path := newTiny(4).file(t, tensor.F32)
	for _, w := range []WireFormat{WireF32, WireF16} {
		var got []string
		devs := make([]backend.Device, 3)
		for i := range devs {
			d := sharedSpy{Device: cpu.New(1), got: &got}
			defer d.Close()
			devs[i] = d
		}
		m, err := Load(path, Options{Devices: devs, Split: SplitOptions{Ratios: equal(3)}, Wire: w, ContextSize: 16})
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Eval([]int32{1}, false); err != nil { // the first Eval allocates the scratch
			t.Fatal(err)
		}
		one := fmt.Sprintf("%v(16, %d)", w.DType(), m.Config().NEmbd) // (batch, dim)
		want := []string{one, one}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%v wire: shared allocations %v, want %v", w, got, want)
		}
		s.Close()
		m.Close()
	}
}

func TestF16WireRecorded(t *testing.T) {
	path := newTiny(4).file(t, tensor.F32)
	prompt := []int32{1, 2, 3, 4}
	o := Options{Split: SplitOptions{Ratios: equal(3)}, KVType: KVCacheF32, Wire: WireF16}
	o.Devices = cpuDevices(t, 3)
	want, _ := evalSteps(t, path, o, prompt)
	keys := map[string]int{}
	o.Devices = make([]backend.Device, 3)
	for i := range o.Devices {
		r := &recorder{Device: cpu.New(1), keys: keys}
		defer r.Close()
		o.Devices[i] = r
	}
	got, _ := evalSteps(t, path, o, prompt)
	if i := sameBits(got, want); i >= 0 {
		t.Fatalf("logit %d: recorded %g, direct %g", i, got[i], want[i])
	}
	if len(keys) != 3 {
		t.Errorf("Record keys %v, want one decode key per stage", keys)
	}
}

func TestF16WirePerplexity(t *testing.T) {
	text := loadText(t)[:40000]
	run := func(path string, n int, w WireFormat) PerplexityResult {
		o := Options{Threads: 1, ContextSize: 128, BatchSize: 128, MicroBatch: 64, Wire: w,
			Devices: cpuDevices(t, n), Split: SplitOptions{Ratios: equal(n)}}
		m, err := Load(path, o)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		res, err := Perplexity(context.Background(), m, text, PerplexityOptions{Ctx: 128, Batch: 128, Chunks: 4}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, file := range []string{"stories260K-F32.gguf", "stories260K-Q8_0.gguf"} {
		path := testdata.Path(t, file)
		for _, n := range []int{2, 4} {
			want, got := run(path, n, WireF32), run(path, n, WireF16)
			rel := math.Abs(got.PPL-want.PPL) / want.PPL
			t.Logf("%s, %d stages: PPL f32 wire %.6f, f16 wire %.6f (relative diff %.2g)", file, n, want.PPL, got.PPL, rel)
			if !(rel < 1e-3) {
				t.Errorf("%s, %d stages: PPL f16 wire %v, f32 wire %v: relative diff %g, want < 0.1%%", file, n, got.PPL, want.PPL, rel)
			}
		}
	}
}
