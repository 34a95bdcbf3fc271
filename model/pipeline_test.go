package model

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/tensor"
)

// cpuDevices returns n CPU devices of 1 thread each (virtual devices for splits),
// closed when the test ends.
func cpuDevices(t *testing.T, n int) []backend.Device {
	t.Helper()
	devs := make([]backend.Device, n)
	for i := range devs {
		d := cpu.New(1)
		t.Cleanup(func() { d.Close() })
		devs[i] = d
	}
	return devs
}

// equal weights for n device slots.
func equal(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// evalSteps loads path with opts, evaluates prompt with every row's logits, then three
// one-token decode steps, and returns all logits in order and the stage count.
func evalSteps(t *testing.T, path string, opts Options, prompt []int32) ([]float32, int) {
	t.Helper()
	m, s := openSession(t, path, opts)
	return sessionSteps(t, s, prompt), len(m.Plan().Stages)
}

// sessionSteps evaluates prompt on s with every row's logits, then three one-token decode
// steps, and returns all logits in order.
func sessionSteps(t *testing.T, s *Session, prompt []int32) []float32 {
	t.Helper()
	got, err := s.Eval(prompt, true)
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(got)
	for _, tok := range []int32{3, 1, 4} {
		got, err := s.Eval([]int32{tok}, false)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got...)
	}
	return out
}

// sameBits reports the first index where a and b differ bitwise, or -1.
func sameBits(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

func TestSplitBitIdentical(t *testing.T) {
	tiny := newTiny(5).file(t, tensor.F16)
	prompt := []int32{1, 7, 3, 9, 2, 5, 5, 8, 0, 10, 4, 6, 1, 2, 3, 9, 7, 6, 5, 4, 3}
	shared := func(name string) func(t *testing.T) string {
		return func(t *testing.T) string { return testdata.Path(t, name) }
	}
	models := []struct {
		name   string
		path   func(t *testing.T) string // found inside the subtest: the writer-made model needs no test data
		layers int
	}{
		{"writer-made F16", func(*testing.T) string { return tiny }, 2},
		{"stories260K-F32", shared("stories260K-F32.gguf"), 5},
		{"stories260K-Q4_K_M", shared("stories260K-Q4_K_M.gguf"), 5},
	}
	for _, mm := range models {
		t.Run(mm.name, func(t *testing.T) { splitBitIdentical(t, mm.path(t), mm.layers, prompt) })
	}
}

// splitBitIdentical checks that splits of the model at path over CPU slots give the
// logits of one device bit for bit.
func splitBitIdentical(t *testing.T, path string, layers int, prompt []int32) {
	base := Options{Threads: 1, ContextSize: 64, BatchSize: 8, MicroBatch: 8, KVType: KVCacheF32}
	want, _ := evalSteps(t, path, base, prompt)
	for _, tt := range []struct {
		name       string
		slots, ub  int
		wantStages int
	}{
		{"1 stage, micro-batches of 3", 1, 3, 1},
		{"2 stages", 2, 8, 2},
		{"4 stages", 4, 8, min(4, layers+1)},
		{"4 stages, micro-batches of 3", 4, 3, min(4, layers+1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			o.Devices, o.Split.Ratios, o.MicroBatch = cpuDevices(t, tt.slots), equal(tt.slots), tt.ub
			ref := want
			if tt.ub != base.MicroBatch { // micro-batches compute what batches of their size compute
				rb := base
				rb.BatchSize, rb.MicroBatch = tt.ub, tt.ub
				ref, _ = evalSteps(t, path, rb, prompt)
			}
			got, stages := evalSteps(t, path, o, prompt)
			if stages != tt.wantStages {
				t.Errorf("%d stages, want %d", stages, tt.wantStages)
			}
			if i := sameBits(got, ref); i >= 0 {
				t.Fatalf("logit %d of %d: %d stages %g, one device %g", i, len(ref), stages, got[i], ref[i])
			}
		})
	}
}

func TestSplitPerplexityIdentical(t *testing.T) {
	text := loadText(t)[:40000]
	path := testdata.Path(t, "stories260K-Q8_0.gguf")
	run := func(devs []backend.Device) PerplexityResult {
		o := Options{Threads: 1, ContextSize: 128, BatchSize: 128, MicroBatch: 64, Devices: devs}
		if devs != nil {
			o.Split.Ratios = equal(len(devs))
		}
		m, err := Load(path, o)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		var running []float64
		res, err := Perplexity(context.Background(), m, text, PerplexityOptions{Ctx: 128, Batch: 128, Chunks: 4},
			func(c ChunkResult) { running = append(running, c.PPL) })
		if err != nil {
			t.Fatal(err)
		}
		if len(running) != 4 {
			t.Fatalf("%d chunks scored, want 4", len(running))
		}
		return res
	}
	want := run(nil)
	for _, n := range []int{2, 4} {
		if got := run(cpuDevices(t, n)); got.PPL != want.PPL || got.Uncertainty != want.Uncertainty {
			t.Errorf("%d stages: PPL %v ± %v, one device %v ± %v", n, got.PPL, got.Uncertainty, want.PPL, want.Uncertainty)
		}
	}
}

// smallDev is a CPU device that reports little free memory.
type smallDev struct {
	*cpu.Device
	free uint64
}

func (d smallDev) Name() string                             { return "small" }
func (d smallDev) MemInfo() (free, total uint64, err error) { return d.free, d.free, nil }

func TestPlanRefusesBeforeAllocating(t *testing.T) {
	path := newTiny(3).file(t, tensor.F32)
	d := smallDev{Device: cpu.New(1), free: 1000}
	defer d.Close()
	_, err := Load(path, Options{Devices: []backend.Device{d}, ContextSize: 16})
	if err == nil || !strings.Contains(err.Error(), "device small needs") {
		t.Fatalf("Load on a 1000-byte device: %v, want a shortfall naming the device", err)
	}
	if _, err := PlanFor(path, Options{Devices: []backend.Device{d}, ContextSize: 16}); err == nil {
		t.Fatal("PlanFor on a 1000-byte device: no error")
	}
}

func TestPartialOffload(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	prompt := []int32{1, 403, 407, 261, 378, 1, 2, 3}
	base := Options{Threads: 1, ContextSize: 32, KVType: KVCacheF32}
	want, _ := evalSteps(t, path, base, prompt)
	o := base
	o.Devices, o.Split.GPULayers = cpuDevices(t, 1), 3 // layers 3, 4 and the head "offloaded"
	p, err := PlanFor(path, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Stages) != 2 || p.Stages[0].Slot != -1 || p.Stages[0].Last != 3 || p.Stages[1].Slot != 0 {
		t.Fatalf("plan:\n%s want layers 0-2 on the CPU, 3-4 and the head on slot 0", p)
	}
	got, _ := evalSteps(t, path, o, prompt)
	if i := sameBits(got, want); i >= 0 {
		t.Fatalf("logit %d: partial offload %g, CPU %g", i, got[i], want[i])
	}
	if n := Neighbours(p); len(n) != 0 {
		t.Errorf("Neighbours = %v, want none (the CPU hop needs no transfer set-up)", n)
	}
}

// recorder is a CPU device that counts Record calls; it runs enqueue every time.
type recorder struct {
	*cpu.Device
	keys map[string]int
}

func (r *recorder) Record(key string, enqueue func(backend.Kernels)) error {
	r.keys[key]++
	enqueue(r.Device)
	return nil
}

func TestDecodeIsRecorded(t *testing.T) {
	path := newTiny(4).file(t, tensor.F32)
	prompt := []int32{1, 2, 3, 4}
	want, _ := evalSteps(t, path, Options{Threads: 1, KVType: KVCacheF32}, prompt)
	for _, stages := range []int{1, 3} {
		keys := map[string]int{}
		devs := make([]backend.Device, stages)
		for i := range devs {
			r := &recorder{Device: cpu.New(1), keys: keys}
			defer r.Close()
			devs[i] = r
		}
		got, n := evalSteps(t, path, Options{Devices: devs, Split: SplitOptions{Ratios: equal(stages)}, KVType: KVCacheF32}, prompt)
		if i := sameBits(got, want); i >= 0 {
			t.Fatalf("%d stages: logit %d: recorded %g, direct %g", n, i, got[i], want[i])
		}
		if len(keys) != stages || n != stages {
			t.Fatalf("%d stages: Record keys %v, want one decode key per stage", n, keys)
		}
		for k, c := range keys {
			if c != 3 {
				t.Errorf("Record(%q) called %d times, want 3 (decode steps only)", k, c)
			}
		}
	}
}

func TestNeighbours(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	devs := cpuDevices(t, 3)
	devs = append(devs, devs[0]) // a slot repeated: the same device twice
	p, err := PlanFor(path, Options{Devices: devs, Split: SplitOptions{Ratios: []float64{1, 1, 0, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	got := Neighbours(p)
	if want := [][2]int{{0, 1}, {1, 3}}; !slices.Equal(got, want) {
		t.Errorf("Neighbours = %v, want %v; plan:\n%s", got, want, p)
	}
}

// TestWarmupRecordsFirst checks Session.Warmup on a device that records: the decode
// step is recorded by the warmup (one Record before the prompt), the session is empty
// after it, and every logit that follows is bit-identical to a session without it. On a
// session holding tokens, and on devices that do not record, Warmup evaluates nothing.
func TestWarmupRecordsFirst(t *testing.T) {
	path := newTiny(4).file(t, tensor.F32)
	prompt := []int32{1, 2, 3, 4}
	want, _ := evalSteps(t, path, Options{Threads: 1, KVType: KVCacheF32}, prompt)
	keys := map[string]int{}
	r := &recorder{Device: cpu.New(1), keys: keys}
	defer r.Close()
	_, s := openSession(t, path, Options{Devices: []backend.Device{r}, Split: SplitOptions{Ratios: equal(1)}, KVType: KVCacheF32})
	if err := s.Warmup(7); err != nil {
		t.Fatal(err)
	}
	if s.Pos() != 0 || len(keys) != 1 {
		t.Fatalf("after Warmup: Pos %d, Record keys %v; want 0 and one decode key", s.Pos(), keys)
	}
	got := sessionSteps(t, s, prompt)
	if i := sameBits(got, want); i >= 0 {
		t.Fatalf("logit %d after a warmup: %g, without one %g", i, got[i], want[i])
	}
	for k, c := range keys {
		if c != 4 {
			t.Errorf("Record(%q) called %d times, want 4 (the warmup and three decode steps)", k, c)
		}
	}
	pos, calls := s.Pos(), func() (n int) {
		for _, c := range keys {
			n += c
		}
		return n
	}
	if err := s.Warmup(7); err != nil || s.Pos() != pos || calls() != 4 {
		t.Errorf("Warmup on a session at %d: err %v, Pos %d, Record calls %v (want nothing done)", pos, err, s.Pos(), keys)
	}
	_, plain := openSession(t, path, Options{Threads: 1, KVType: KVCacheF32})
	if err := plain.Warmup(7); err != nil || plain.Pos() != 0 {
		t.Errorf("Warmup on the CPU: err %v, Pos %d", err, plain.Pos())
	}
}
