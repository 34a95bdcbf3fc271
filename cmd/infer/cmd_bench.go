package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/infergo/infer/bench"
	"github.com/infergo/infer/model"
	"github.com/infergo/infer/tensor"
)

// benchFlags are the flags of 'infer bench', named and defaulted as llama-bench's.
type benchFlags struct {
	models   []string
	prompts  []int
	gens     []int
	depths   []int // -d: tokens already in the cache when a test starts
	threads  []int
	reps     int
	batch    int
	gpu      gpuFlags // -ngl -sm -ts -mg --device --peer -ub
	ctk      string
	output   string
	noWarmup bool
	dist     *distFlags // --world --rank --coordinator: one rank of several (bench_dist.go)
}

// cmdBench implements 'infer bench': llama-bench's pp/tg tests and table.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "transfer" {
		return cmdBenchTransfer(ctx, args[1:], stdout, stderr)
	}
	f, help, err := parseBenchFlags(args, stderr)
	if help || err != nil {
		return err
	}
	tests, err := bench.Tests(f.prompts, f.gens)
	if err == nil {
		tests, err = bench.AtDepths(tests, f.depths)
	}
	if err != nil {
		return usageError{err}
	}
	cfg, ranked, err := f.dist.resolve(os.Getenv)
	if err != nil {
		return err
	}
	if ranked && cfg.Rank != 0 {
		stdout = io.Discard // rank 0 prints the table
	}
	kv, err := kvType("-ctk", f.ctk)
	if err != nil {
		return err
	}
	cols := bench.Columns{NGL: f.gpu.ngl > 0, Threads: true, NBatch: f.batch != defaultBatch, NUBatch: f.ubatch() != defaultUBatch,
		SplitMode: f.gpu.sm != "", TensorSplit: f.gpu.ts != ""}
	p := bench.NewMarkdown(stdout, cols, buildInfo())
	if f.output == "json" {
		p = bench.NewJSON(stdout, buildInfo())
	}
	if err := p.Header(); err != nil {
		return err
	}
	for _, path := range f.models {
		for _, t := range f.threads {
			opts := model.Options{Threads: t, BatchSize: f.batch, MicroBatch: f.gpu.ub, KVType: kv, ContextSize: contextFor(tests), Wire: f.gpu.wire}
			if ranked { // one rank of several (bench_dist.go)
				err = benchRank(ctx, cfg, path, opts, tests, f, p)
			} else {
				err = benchModel(ctx, path, opts, tests, f, p)
			}
			if err != nil {
				return err
			}
		}
	}
	return p.Footer()
}

// benchModel loads one model with opts and runs every test on it, printing each row.
func benchModel(ctx context.Context, path string, opts model.Options, tests []bench.Test, f *benchFlags, p bench.Printer) error {
	m, err := f.gpu.load(ctx, path, opts)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer closeModel(m, opts.Logf)
	backendName, level := "CPU", tensor.Level().String()
	if len(m.Devices()) > 0 {
		backendName, level = "CUDA", ""
	}
	row := bench.Row{Backend: backendName, CPULevel: level, Threads: opts.Threads, NGL: f.gpu.ngl,
		SplitMode: f.gpu.sm, TensorSplit: f.gpu.ts, Batch: f.batch, UBatch: f.ubatch()}
	return benchTests(ctx, m.Model, path, tests, f, p, row)
}

// benchTests runs every test on one session of m (the model at path), printing row
// with the model's description, the test's result and the time filled in.
func benchTests(ctx context.Context, m *model.Model, path string, tests []bench.Test, f *benchFlags, p bench.Printer, row bench.Row) error {
	info, err := bench.Describe(path)
	if err != nil {
		return err
	}
	s, err := m.NewSession()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer s.Close()
	in := bench.Input{NVocab: info.NVocab, BOS: info.BOS, Seed: 1}
	for _, t := range tests {
		res, err := bench.Run(ctx, s, t, in, f.reps, !f.noWarmup)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		row.Model, row.Result, row.Time = info, res, time.Now()
		if err := p.Row(row); err != nil {
			return err
		}
	}
	return nil
}

// contextFor is the KV cache the tests need: the longest test with its depth, as
// llama-bench's n_ctx = n_depth + n_prompt + n_gen.
func contextFor(tests []bench.Test) int {
	n := 1
	for _, t := range tests {
		n = max(n, t.Context())
	}
	return n
}

// llama-bench's defaults for -b and -ub.
const (
	defaultBatch  = 2048
	defaultUBatch = 512
)

// ubatch is the micro-batch size the tests run with: -ub, or the default for -ub 0.
func (f *benchFlags) ubatch() int {
	if f.gpu.ub == 0 {
		return defaultUBatch
	}
	return f.gpu.ub
}

// parseBenchFlags parses and checks bench's command line.
func parseBenchFlags(args []string, stderr io.Writer) (*benchFlags, bool, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &benchFlags{prompts: []int{512}, gens: []int{128}, depths: []int{0}, threads: []int{runtime.NumCPU()}}
	fs.Func("m", "GGUF model `file`s (comma-separated or repeated; required)", func(s string) error {
		f.models = append(f.models, strings.Split(s, ",")...)
		return nil
	})
	fs.Func("p", "prompt `lengths` to test, comma-separated (pp tests; default 512)", intList(&f.prompts))
	fs.Func("n", "generation `lengths` to test, comma-separated (tg tests; default 128)", intList(&f.gens))
	setDepths := intList(&f.depths)
	fs.Func("d", "`depths` to run each test at, comma-separated: tokens already in the cache, not timed (default 0)", setDepths)
	fs.Func("n-depth", "same as -d", setDepths)
	fs.Func("t", "CPU `threads`, comma-separated (default all cores)", intList(&f.threads))
	fs.IntVar(&f.reps, "r", 5, "`repetitions` of each test")
	fs.IntVar(&f.batch, "b", defaultBatch, "batch size in `tokens` for prompt evaluation (llama-bench's -b; -ub cuts it into micro-batches)")
	addGPUFlags(fs, &f.gpu) // -ub defaults to 512, llama-bench's default
	f.gpu.sm = ""           // the split-mode column shows only when -sm is given (llama-bench's layer otherwise)
	fs.StringVar(&f.ctk, "ctk", "f16", "KV cache `type`: f16 or f32")
	fs.StringVar(&f.output, "o", "md", "output `format`: md or json")
	fs.BoolVar(&f.noWarmup, "no-warmup", false, "skip the warm-up run before each test")
	f.dist = addDistFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer bench -m FILE [-p 512] [-n 128] [-d 0] [-b 2048] [-ub 512] [-r 5] [-t N] [-o md|json]\n       infer bench transfer")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return nil, help, err
	}
	return f, false, f.check()
}

// check validates the parsed flags.
func (f *benchFlags) check() error {
	switch {
	case len(f.models) == 0:
		return usageError{errors.New("bench: -m: a model file is required")}
	case f.reps < 1 || f.batch < 1:
		return usageError{fmt.Errorf("bench: -r %d -b %d: must be at least 1", f.reps, f.batch)}
	case f.output != "md" && f.output != "json":
		return usageError{fmt.Errorf("bench: -o %q: want md or json", f.output)}
	}
	if err := f.gpu.check(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	switch {
	case f.gpu.ngl == 0 && (f.gpu.ts != "" || f.gpu.device != ""):
		return fmt.Errorf("bench: -ts %q --device %q: splitting needs CUDA devices and -ngl > 0", f.gpu.ts, f.gpu.device)
	}
	for _, t := range f.threads {
		if t < 1 {
			return usageError{fmt.Errorf("bench: -t %d: must be at least 1", t)}
		}
	}
	return nil
}

// intList returns a flag.Func setter for a comma-separated list of integers, replacing
// the default on first use.
func intList(dst *[]int) func(string) error {
	set := false
	return func(s string) error {
		if !set {
			*dst, set = nil, true
		}
		for _, part := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil {
				return fmt.Errorf("%q is not a list of integers", s)
			}
			*dst = append(*dst, n)
		}
		return nil
	}
}

// buildInfo names this build for the table footer: the VCS revision when the binary
// was built with one, and the Go version.
func buildInfo() string {
	rev := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 8 {
				rev = s.Value[:8]
			}
		}
	}
	return fmt.Sprintf("infer %s (%s)", rev, runtime.Version())
}
