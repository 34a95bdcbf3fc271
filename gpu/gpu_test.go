package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/gpu"
	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model"
	"github.com/infergo/infer/model/synth"
)

// placements are the device lists the tests run on: the CPU, one GPU, two GPUs (a
// split), and two virtual devices on one GPU (a split on one GPU).
var placements = []struct {
	name     string
	ordinals []int
}{
	{"cpu", nil}, {"1 GPU", []int{0}}, {"2 GPUs", []int{0, 1}}, {"virtual 0,0", []int{0, 0}},
}

// needGPUs skips t unless the ordinals exist (none: the CPU, always there).
func needGPUs(t *testing.T, ordinals []int) {
	t.Helper()
	if len(ordinals) == 0 {
		return
	}
	n, err := cuda.Count()
	if err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	for _, o := range ordinals {
		if o >= n {
			t.Skipf("needs GPU %d, found %d (run on nvidia-h200-x2)", o, n)
		}
	}
}

// tinyModel writes synth's tiny random-weight model (F32) once for the package's tests.
var tinyModel = sync.OnceValues(func() (string, error) {
	return writeTiny(filepath.Join(tempDir, "tiny-F32.gguf"), "F32")
})

// tempDir holds the test models; TestMain makes and removes it.
var tempDir string

func TestMain(m *testing.M) {
	var err error
	if tempDir, err = os.MkdirTemp("", "gpu-test"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tempDir)
	os.Exit(code)
}

func writeTiny(path, ftype string) (string, error) {
	shape, err := synth.LookupShape("tiny")
	if err != nil {
		return "", err
	}
	ft, err := synth.LookupFileType(ftype)
	if err != nil {
		return "", err
	}
	plan, err := synth.NewPlan(shape, ft)
	if err != nil {
		return "", err
	}
	return path, synth.Write(path, plan, synth.Options{Seed: 1, Threads: 1})
}

// models are the files the concurrency test runs: synth's tiny model (always), and the
// small stories models of the shared test data when present.
func models(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"synth-tiny-F32": func(t *testing.T) string {
			p, err := tinyModel()
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		"stories260K-F32":  func(t *testing.T) string { return testdata.Path(t, "stories260K-F32.gguf") },
		"stories260K-Q8_0": func(t *testing.T) string { return testdata.Path(t, "stories260K-Q8_0.gguf") },
	}
}

// call is one Generate call of the test: a prompt and a seed.
type call struct {
	prompt string
	seed   uint64
}

var prompts = []string{"Once upon a time", "The little dog", "Lily and Ben went to the park", "One day", "She said"}

// generate runs one call on m and returns its tokens.
func generate(m *model.Model, c call) ([]int32, error) {
	opts := model.GenerateOptions{NPredict: 24, Sampler: model.SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95, Seed: c.seed}}
	res, err := model.Generate(context.Background(), m, c.prompt, opts, nil)
	if err != nil {
		return nil, err
	}
	return res.Tokens, nil
}

// TestConcurrentGenerate is issue 10's scenario: N goroutines each make M Generate
// calls on one model at once, and every result equals the same call made alone,
// sequentially, on the same model; on the CPU, one GPU, two GPUs and two virtual
// devices on one GPU. Run it with -race.
func TestConcurrentGenerate(t *testing.T) {
	const goroutines, rounds = 4, 8
	for name, file := range models(t) {
		t.Run(name, func(t *testing.T) {
			path := file(t)
			for _, pl := range placements {
				t.Run(pl.name, func(t *testing.T) {
					needGPUs(t, pl.ordinals)
					m, err := gpu.Load(context.Background(), path, gpu.Options{Ordinals: pl.ordinals,
						Model: model.Options{ContextSize: 128, BatchSize: 32, Threads: 1}})
					if err != nil {
						t.Fatal(err)
					}
					defer func() {
						if err := m.Close(); err != nil {
							t.Error(err)
						}
					}()
					calls := make([][]call, goroutines)
					want := make([][][]int32, goroutines)
					for g := range calls {
						for r := range rounds {
							c := call{prompts[(g+r)%len(prompts)], uint64(1000*g + r)}
							tokens, err := generate(m.Model, c)
							if err != nil {
								t.Fatal(err)
							}
							calls[g], want[g] = append(calls[g], c), append(want[g], tokens)
						}
					}
					var wg sync.WaitGroup
					errs := make(chan error, goroutines*rounds)
					for g := range goroutines {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for r, c := range calls[g] {
								got, err := generate(m.Model, c)
								if err != nil {
									errs <- fmt.Errorf("goroutine %d call %d: %w", g, r, err)
									continue
								}
								if !slices.Equal(got, want[g][r]) {
									errs <- fmt.Errorf("goroutine %d call %d (%q, seed %d): %v, alone %v", g, r, c.prompt, c.seed, got, want[g][r])
								}
							}
						}()
					}
					wg.Wait()
					close(errs)
					n := 0
					for err := range errs {
						n++
						t.Error(err)
					}
					t.Logf("%s on %s (%d stages): %d goroutines × %d calls, %d differ or fail", name, pl.name,
						len(m.Plan().Stages), goroutines, rounds, n)
					if m.OpenSessions() != 0 {
						t.Errorf("%d sessions left open", m.OpenSessions())
					}
				})
			}
		})
	}
}

// TestLoadPlacements loads on each placement and checks what Load set up: a device per
// ordinal, a stage per device, and a peer table with one pair per hop between devices.
func TestLoadPlacements(t *testing.T) {
	path, err := tinyModel()
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			needGPUs(t, pl.ordinals)
			m, err := gpu.Load(context.Background(), path, gpu.Options{Ordinals: pl.ordinals, Model: model.Options{ContextSize: 64}})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(m.Devices()); got != len(pl.ordinals) {
				t.Errorf("%d devices, want %d", got, len(pl.ordinals))
			}
			if got, want := len(m.Plan().Stages), max(len(pl.ordinals), 1); got != want {
				t.Errorf("%d stages, want %d", got, want)
			}
			hops := model.Neighbours(m.Plan())
			switch {
			case len(hops) == 0 && m.Peers() != nil:
				t.Error("a peer table without hops")
			case len(hops) > 0 && (m.Peers() == nil || len(m.Peers().Pairs()) != len(hops)):
				t.Errorf("hops %v, peer table %v", hops, m.Peers())
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if err := m.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

// TestLoadErrors checks Load's failures: a missing file, a cancelled context, and GPUs
// without a driver; each says what failed.
func TestLoadErrors(t *testing.T) {
	path, err := tinyModel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gpu.Load(context.Background(), filepath.Join(t.TempDir(), "absent.gguf"), gpu.Options{}); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := gpu.Load(ctx, path, gpu.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := cuda.Count(); err == nil {
		return
	}
	if _, err := gpu.Load(context.Background(), path, gpu.Options{Ordinals: []int{0}}); !errors.Is(err, cuda.ErrNoDriver) {
		t.Errorf("Load on GPU 0 without a driver: %v, want cuda.ErrNoDriver", err)
	}
}

// TestCloseFreesGPUMemory loads a model on a GPU the test owns, opens sessions with a
// large cache, runs them (recording decode graphs), and closes the model with the
// sessions still open: the GPU's free memory returns to where it was before the load.
func TestCloseFreesGPUMemory(t *testing.T) {
	needGPUs(t, []int{0})
	path, err := tinyModel()
	if err != nil {
		t.Fatal(err)
	}
	d, err := cuda.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	before, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(path, model.Options{Device: d, ContextSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	var ss []*model.Session
	for range 4 {
		s, err := m.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		for _, tokens := range [][]int32{{1, 2, 3}, {4}, {5}} {
			if _, err := s.Eval(tokens, false); err != nil {
				t.Fatal(err)
			}
		}
		ss = append(ss, s)
	}
	during, _, _ := d.MemInfo()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	after, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	// The device keeps its scratch (quantized activations, attention partials) until it
	// closes: at most a few MiB.
	const slack = 8 << 20
	t.Logf("free before %d MiB, with 4 sessions %d MiB, after Model.Close %d MiB", before>>20, during>>20, after>>20)
	if during+2*slack > before {
		t.Fatalf("the model and its sessions took only %d MiB: too little to see a leak", (before-during)>>20)
	}
	if after+slack < before {
		t.Errorf("Model.Close with open sessions left %d MiB allocated", (before-after)>>20)
	}
	for _, s := range ss {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
}
