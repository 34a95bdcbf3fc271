package main

import (
	"context"
	"flag"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model"
	"github.com/infergo/infer/model/synth"
)

// archPTX, when set, loads the CUDA kernels' PTX from a directory (freshly compiled on
// the GPU machine, before it is committed).
var archPTX = flag.String("arch.ptx", "", "TestArchGPU: load kernel PTX from this `dir` instead of the embedded copy")

// loadArch is loadOn with devices opened by cuda.OpenPTXDir when -arch.ptx is set; the
// model is closed first, then the peer table, then the devices.
func loadArch(t *testing.T, path string, opts model.Options, ordinals []int) *model.Model {
	t.Helper()
	if *archPTX == "" || len(ordinals) == 0 {
		return loadOn(t, path, opts, ordinals, cuda.PeerOptions{})
	}
	var devs []*cuda.Device
	for _, o := range ordinals {
		d, err := cuda.OpenPTXDir(o, *archPTX)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		devs, opts.Devices = append(devs, d), append(opts.Devices, d)
		opts.Split.Ratios = append(opts.Split.Ratios, 1)
	}
	plan, err := model.PlanFor(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if pairs := model.Neighbours(plan); len(pairs) > 0 {
		peers, err := cuda.NewPeers(devs, pairs, cuda.PeerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { peers.Close() })
	}
	opts.Split.Plan = plan
	m, err := model.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// archFiles are the qwen2/qwen3 models TestArchGPU runs: arch/'s four, and two written
// by synth (tiny qwen2 in Q4_K_M; tiny-qwen3, whose head size 128 is not n_embd/n_head,
// in Q8_0).
func archFiles(t *testing.T) []string {
	var files []string
	for _, rm := range testdata.LoadArchReference(t).Models {
		files = append(files, testdata.Path(t, "arch/"+rm.File))
	}
	tiny, _ := synth.LookupShape("tiny")
	tiny, _ = tiny.WithArch("qwen2")
	tq3, _ := synth.LookupShape("tiny-qwen3")
	for _, w := range []struct {
		s   synth.Shape
		typ string
	}{{tiny, "Q4_K_M"}, {tq3, "Q8_0"}} {
		ft, _ := synth.LookupFileType(w.typ)
		p, err := synth.NewPlan(w.s, ft)
		if err != nil {
			t.Fatal(err)
		}
		name := w.s.Name
		if !strings.Contains(name, w.s.Arch) {
			name += "-" + w.s.Arch
		}
		path := filepath.Join(t.TempDir(), name+"-"+w.typ+".gguf")
		if err := synth.Write(path, p, synth.Options{Seed: 9}); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	return files
}

// TestArchGPU runs the qwen2 and qwen3 models on CUDA: perplexity (-c 128 -b 128, 20
// chunks) with an F32 and an F16 cache within 0.3% of the CPU's; over 2 GPUs the same
// perplexity and, over 2 GPUs and 4 virtual stages, logits bit-identical to one GPU
// (prompt in micro-batches of 16, then decode steps); greedy text of the stories260K
// files as llama.cpp's. With one GPU the splits are 2 and 4 virtual stages on it.
func TestArchGPU(t *testing.T) {
	needGPUs(t, 1)
	splits := [][]int{{0, 1}, {0, 1, 0, 1}}
	if n, _ := cuda.Count(); n < 2 { // one GPU: virtual stages on it
		splits = [][]int{{0, 0}, {0, 0, 0, 0}}
	}
	prompt := make([]int32, 50)
	for i := range prompt {
		prompt[i] = int32(1 + (i*37)%500)
	}
	t.Logf("| file | cache | CPU PPL | 1 GPU PPL | GPU-CPU | split %v |", splits[0])
	for _, path := range archFiles(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".gguf")
		t.Run(name, func(t *testing.T) {
			for _, kv := range []model.KVCacheType{model.KVCacheF32, model.KVCacheF16} {
				opts := model.Options{ContextSize: 128, BatchSize: 128, KVType: kv, Threads: 8}
				cpu := perplexity(t, loadArch(t, path, opts, nil), 20)
				one := perplexity(t, loadArch(t, path, opts, []int{0}), 20)
				rel := math.Abs(one.PPL-cpu.PPL) / cpu.PPL
				p2 := perplexity(t, loadArch(t, path, opts, splits[0]), 20)
				two := "identical"
				if p2.PPL != one.PPL || p2.Uncertainty != one.Uncertainty {
					two = "DIFFERENT"
					t.Errorf("kv %v: PPL on %v %v ± %v, one GPU %v ± %v", kv, splits[0], p2.PPL, p2.Uncertainty, one.PPL, one.Uncertainty)
				}
				t.Logf("| %s | %v | %.4f | %.4f | %+.4f%% | %s |", name, kv, cpu.PPL, one.PPL, 100*(one.PPL/cpu.PPL-1), two)
				if rel > 3e-3 {
					t.Errorf("kv %v: PPL GPU %.6f, CPU %.6f: %.4f%% apart, want within 0.3%%", kv, one.PPL, cpu.PPL, 100*rel)
				}
			}
			opts := model.Options{ContextSize: 128, BatchSize: 64, MicroBatch: 16}
			one := evalAll(t, loadArch(t, path, opts, []int{0}), prompt, 4)
			for _, devs := range splits {
				if i := firstDiff(evalAll(t, loadArch(t, path, opts, devs), prompt, 4), one); i >= 0 {
					t.Errorf("%v: logits differ from one GPU's from logit %d", devs, i)
				}
			}
			if strings.HasPrefix(name, "stories260K") {
				archGreedy(t, name+".gguf", loadArch(t, path, model.Options{ContextSize: 256}, []int{0}))
			}
		})
	}
}

// archGreedy checks m's greedy text against llama-simple's for arch/file.
func archGreedy(t *testing.T, file string, m *model.Model) {
	t.Helper()
	for _, rm := range testdata.LoadArchReference(t).Models {
		if rm.File != file {
			continue
		}
		for _, g := range rm.Greedy {
			res, err := model.Generate(context.Background(), m, g.Prompt, model.GenerateOptions{NPredict: g.NPredict}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Text + "\n"; got != g.GeneratedText {
				t.Errorf("%q on the GPU: %q, llama.cpp %q", g.Prompt, got, g.GeneratedText)
			} else {
				t.Logf("%q: greedy text as llama.cpp's", g.Prompt)
			}
		}
	}
}
