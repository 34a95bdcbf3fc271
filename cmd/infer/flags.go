package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/infergo/infer/model"
	"github.com/infergo/infer/tensor"
)

// modelFlags are the flags shared by the commands that load a model for inference
// (run, perplexity, bench), named as llama.cpp's tools name them.
type modelFlags struct {
	path    string // -m
	ctx     int    // -c
	batch   int    // -b
	threads int    // -t
	ctk     string // -ctk
	ctv     string // -ctv
	ngl     int    // -ngl, parsed for now
	device  string // --device, parsed for now
}

// modelDefaults are a command's defaults for the shared flags.
type modelDefaults struct {
	Ctx   int
	Batch int
}

// addModelFlags registers the shared model flags on fs with defaults d.
func addModelFlags(fs *flag.FlagSet, d modelDefaults) *modelFlags {
	f := &modelFlags{}
	fs.StringVar(&f.path, "m", "", "GGUF model `file` (required)")
	fs.IntVar(&f.ctx, "c", d.Ctx, "context size in `tokens` (0 = the model's training context)")
	fs.IntVar(&f.batch, "b", d.Batch, "batch size in `tokens` for prompt evaluation")
	fs.IntVar(&f.threads, "t", 0, "CPU `threads` (0 = all cores)")
	fs.StringVar(&f.ctk, "ctk", "f16", "KV cache `type` for K: f16 or f32")
	fs.StringVar(&f.ctv, "ctv", "f16", "KV cache `type` for V: f16 or f32 (must equal -ctk)")
	fs.IntVar(&f.ngl, "ngl", 0, "layers to offload to GPUs (not used yet)")
	fs.StringVar(&f.device, "device", "", "comma-separated compute `devices` (not used yet)")
	return f
}

// options checks the flags and returns the model.Options they ask for. logw, when not
// nil, receives the loader's log lines.
func (f *modelFlags) options(logw io.Writer) (model.Options, error) {
	if f.path == "" {
		return model.Options{}, usageError{errors.New("-m: a model file is required")}
	}
	if f.ctx < 0 || f.batch < 0 || f.threads < 0 || f.ngl < 0 {
		return model.Options{}, usageError{fmt.Errorf("-c %d -b %d -t %d -ngl %d: must not be negative", f.ctx, f.batch, f.threads, f.ngl)}
	}
	k, err := kvType("-ctk", f.ctk)
	if err != nil {
		return model.Options{}, err
	}
	v, err := kvType("-ctv", f.ctv)
	if err != nil {
		return model.Options{}, err
	}
	if k != v {
		return model.Options{}, usageError{fmt.Errorf("-ctk %s -ctv %s: K and V cache types must match", f.ctk, f.ctv)}
	}
	opts := model.Options{Threads: f.threads, ContextSize: f.ctx, BatchSize: f.batch, KVType: k}
	if logw != nil {
		opts.Logf = func(format string, args ...any) { fmt.Fprintf(logw, format+"\n", args...) }
	}
	return opts, nil
}

// kvType parses a KV cache type flag.
func kvType(name, s string) (tensor.DType, error) {
	switch strings.ToLower(s) {
	case "f16":
		return tensor.F16, nil
	case "f32":
		return tensor.F32, nil
	}
	return 0, usageError{fmt.Errorf("%s %q: want f16 or f32", name, s)}
}

// parseFlags parses args with fs, turning flag errors into usage errors and -h into a
// nil error with help reported.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	err = fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return true, nil
	}
	if err != nil {
		return false, usageError{err}
	}
	if fs.NArg() > 0 {
		return false, usageError{fmt.Errorf("%s: unexpected arguments %q", fs.Name(), fs.Args())}
	}
	return false, nil
}
