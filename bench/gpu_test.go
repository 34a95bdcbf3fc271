package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/model"
)

// The end-to-end GPU benchmark reads its models from flags of the test binary, so that
// plain `go test ./bench/` skips it:
//
//	bench.test -test.run TestGPU -gpu.model /tmp/q4_0.gguf,/tmp/q8_0.gguf -gpu.out table.md
var (
	gpuModels = flag.String("gpu.model", "", "comma-separated GGUF `files` for TestGPU (empty: skip)")
	gpuReps   = flag.Int("gpu.reps", 3, "repetitions of each test")
	gpuOut    = flag.String("gpu.out", "", "also write the markdown table to this `file`")
	gpuPTX    = flag.String("gpu.ptx", "", "load kernel PTX from this `dir` instead of the embedded copy")
)

// llamaCppH200 are llama.cpp's figures for 7B models on one H200
// (../shared/docs/llamacpp-h200.md): pp512 and tg128 tokens per second, by the end of
// the model's description ("llama 7B Q4_K - Medium").
var llamaCppH200 = []struct {
	suffix string
	pp, tg float64
}{
	{"Q4_0", 10232, 212.9},
	{"Q8_0", 10462, 200.0},
	{"Q4_K - Medium", 9190, 195.5},
	{"F16", 18059, 163.4},
}

// llamaCpp returns llama.cpp's pp512 and tg128 figures for a model description, or
// zeros.
func llamaCpp(desc string) [2]float64 {
	for _, r := range llamaCppH200 {
		if strings.HasSuffix(desc, " "+r.suffix) {
			return [2]float64{r.pp, r.tg}
		}
	}
	return [2]float64{}
}

// TestGPU measures each model like llama-bench on CUDA device 0: pp512 (one batch of
// 512 tokens from an empty cache) and tg128 (128 one-token Evals after a BOS), after a
// warm-up, mean ± sample stddev over -gpu.reps repetitions, beside llama.cpp's figure.
func TestGPU(t *testing.T) {
	if *gpuModels == "" {
		t.Skip("bench: no -gpu.model given")
	}
	var dev *cuda.Device
	var err error
	if *gpuPTX != "" {
		dev, err = cuda.OpenPTXDir(0, *gpuPTX)
	} else {
		dev, err = cuda.Open(0)
	}
	if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice) {
		t.Skipf("bench: no CUDA device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	var table strings.Builder
	fmt.Fprintf(&table, "| model | size | test | t/s | llama.cpp t/s | ratio | load s |\n|---|---:|---|---:|---:|---:|---:|\n")
	for _, path := range strings.Split(*gpuModels, ",") {
		rows, err := gpuBench(dev, path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		table.WriteString(rows)
		t.Logf("%s done", filepath.Base(path))
	}
	t.Logf("%s on %s\n%s", time.Now().UTC().Format(time.RFC3339), dev.Name(), table.String())
	if *gpuOut != "" {
		if err := os.WriteFile(*gpuOut, []byte(table.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// gpuBench loads one model on dev, runs pp512 and tg128, and returns its table rows.
func gpuBench(dev *cuda.Device, path string) (string, error) {
	info, err := Describe(path)
	if err != nil {
		return "", err
	}
	start := time.Now()
	m, err := model.Load(path, model.Options{Device: dev, ContextSize: 512})
	if err != nil {
		return "", err
	}
	defer m.Close()
	loadS := time.Since(start).Seconds()
	s, err := m.NewSession()
	if err != nil {
		return "", err
	}
	defer s.Close()
	in := Input{NVocab: info.NVocab, BOS: info.BOS, Seed: 1}
	ref := llamaCpp(info.Desc)
	var rows strings.Builder
	for i, t := range []Test{{Prompt: 512}, {Gen: 128}} {
		r, err := Run(context.Background(), s, t, in, *gpuReps, true)
		if err != nil {
			return "", err
		}
		ratio := "-"
		if ref[i] > 0 {
			ratio = fmt.Sprintf("%.2f", r.Mean()/ref[i])
		}
		fmt.Fprintf(&rows, "| %s | %.2f GiB | %s | %.1f ± %.1f | %.1f | %s | %.1f |\n", info.Desc,
			float64(info.Size)/(1<<30), t.Name(), r.Mean(), r.Stddev(), ref[i], ratio, loadS)
	}
	return rows.String(), nil
}
