package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/infergo/infer/model"
)

// modelFlags are the flags shared by the commands that load a model for inference
// (run, perplexity), named as llama.cpp's tools name them.
type modelFlags struct {
	path    string // -m
	ctx     int    // -c
	batch   int    // -b
	threads int    // -t
	ctk     string // -ctk
	ctv     string // -ctv
	gpu     gpuFlags
}

// gpuFlags are the flags that place a model on GPUs, shared by run, perplexity and
// bench: llama.cpp's -ngl, -sm, -ts, -mg, --device and -ub, and --peer, --wire,
// --weight-cache and --kernel-dir.
type gpuFlags struct {
	ngl    int    // -ngl: layers on GPUs, the output head counting as one; 0 = CPU
	device string // --device: CUDA ordinals; a repeated ordinal is a virtual device
	sm     string // -sm: none (one GPU, -mg) or layer (split by layers; also "")
	ts     string // -ts: split ratios a/b/...
	mg     int    // -mg: the GPU (index into the device list) for -sm none
	peer   string // --peer: auto or off
	ub     int    // -ub: micro-batch tokens; 0 = the model's default (512)
	// wire (--wire) is the hidden state's format on the hops between stages: f32, exact,
	// or f16, half the bytes per hop for logits no longer bit-identical to one device.
	wire model.WireFormat
	// weightCache (--weight-cache) bounds each GPU's cache of dequantized weights for
	// batched matmuls (cuda.Options.WeightCacheBytes); 0 = off.
	weightCache byteSize
	// kernelDir (--kernel-dir) loads the CUDA kernels from a directory instead of the
	// embedded ones (cuda.Options.KernelDir).
	kernelDir string
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
	fs.IntVar(&f.ctx, "c", d.Ctx, fmt.Sprintf("context size in `tokens` (0 = %d, or the model's training context when shorter)", model.DefaultContextSize))
	fs.IntVar(&f.batch, "b", d.Batch, "batch size in `tokens` for prompt evaluation")
	fs.IntVar(&f.threads, "t", 0, "CPU `threads` (0 = all cores)")
	fs.StringVar(&f.ctk, "ctk", "f16", "KV cache `type` for K: f16 or f32")
	fs.StringVar(&f.ctv, "ctv", "f16", "KV cache `type` for V: f16 or f32 (must equal -ctk)")
	addGPUFlags(fs, &f.gpu)
	return f
}

// addGPUFlags registers the GPU placement flags on fs.
func addGPUFlags(fs *flag.FlagSet, g *gpuFlags) {
	fs.IntVar(&g.ngl, "ngl", 0, "`layers` to offload to GPUs, the output head counting as one (0 = CPU; 99 = all)")
	fs.StringVar(&g.device, "device", "", "comma-separated CUDA `ordinals` to split over; a repeated ordinal is a virtual device (default all GPUs)")
	fs.StringVar(&g.sm, "sm", "layer", "split `mode`: none (one GPU, see -mg) or layer")
	fs.StringVar(&g.ts, "ts", "", "split `ratios` over the devices, e.g. 3/1 (default by free memory)")
	fs.IntVar(&g.mg, "mg", 0, "main GPU `index` into the device list, used with -sm none")
	fs.IntVar(&g.mg, "main-gpu", 0, "main GPU `index`: the same as -mg")
	fs.StringVar(&g.peer, "peer", "auto", "GPU peer access `mode`: auto, or off to stage every hop through host memory")
	fs.IntVar(&g.ub, "ub", 512, "micro-batch `tokens`: longer batches are pipelined over the stages")
	fs.TextVar(&g.wire, "wire", model.WireF32, "hidden-state `format` between stages: f32 (exact) or f16 (half the bytes per hop; logits no longer bit-identical)")
	fs.StringVar(&g.kernelDir, "kernel-dir", "", "load the CUDA kernels from `dir` (<module>.ptx and fatbin/, as make kernels writes them) instead of the embedded ones")
	fs.Var(&g.weightCache, "weight-cache", "per-GPU cache of dequantized F16 weights for prompt batches, at most `size` bytes (e.g. 16G; K, M, G, T are powers of 1024; 0 = off); it leaves 1 GiB + 5% of each GPU free")
}

// byteSize is a flag.Value for a size in bytes: a number with an optional unit K, M, G
// or T (powers of 1024, optionally followed by "iB" or "B"), e.g. 16G, 1.5GiB, 512M, 0.
type byteSize int64

// String is the size with the largest unit that divides it: 16G, 1536M, 0.
func (b *byteSize) String() string {
	if b == nil || *b == 0 {
		return "0"
	}
	v := int64(*b)
	for _, u := range []string{"T", "G", "M", "K"} {
		if unit := sizeUnit(u); v%unit == 0 {
			return strconv.FormatInt(v/unit, 10) + u
		}
	}
	return strconv.FormatInt(v, 10)
}

// Set parses s with parseByteSize.
func (b *byteSize) Set(s string) error {
	v, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(v)
	return nil
}

// sizeUnit is the multiplier of unit letter u ("" for bytes), or 0.
func sizeUnit(u string) int64 {
	switch strings.ToUpper(u) {
	case "":
		return 1
	case "K":
		return 1 << 10
	case "M":
		return 1 << 20
	case "G":
		return 1 << 30
	case "T":
		return 1 << 40
	}
	return 0
}

// parseByteSize parses a byteSize: a non-negative number and an optional unit.
func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' })
	unit := strings.TrimSpace(t[len(num):])
	for _, suffix := range []string{"iB", "ib", "IB", "B", "b"} {
		if rest, ok := strings.CutSuffix(unit, suffix); ok && (rest != "" || suffix == "B" || suffix == "b") {
			unit = rest
			break
		}
	}
	mul := sizeUnit(unit)
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || mul == 0 || v < 0 || v != v || v*float64(mul) >= 1<<63 {
		return 0, fmt.Errorf("size %q: want bytes like 16G, 512M or 0", s)
	}
	return int64(v * float64(mul)), nil
}

// check validates the GPU flags without touching a device.
func (g *gpuFlags) check() error {
	switch {
	case g.ngl < 0 || g.mg < 0 || g.ub < 0:
		return usageError{fmt.Errorf("-ngl %d -mg %d -ub %d: must not be negative", g.ngl, g.mg, g.ub)}
	case g.ub > maxTokens:
		return usageError{fmt.Errorf("-ub %d: at most %d tokens", g.ub, maxTokens)}
	case g.sm != "" && g.sm != "none" && g.sm != "layer":
		return usageError{fmt.Errorf("-sm %q: want none or layer", g.sm)}
	case g.peer != "" && g.peer != "auto" && g.peer != "on" && g.peer != "off":
		return usageError{fmt.Errorf("--peer %q: want auto or off", g.peer)}
	}
	if _, err := parseRatios(g.ts); err != nil {
		return err
	}
	if _, err := parseOrdinals(g.device); err != nil {
		return err
	}
	return nil
}

// parseRatios parses -ts: finite non-negative numbers separated by '/' or ',', not all
// zero, whose sum is finite; "" is nil.
func parseRatios(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	bad := usageError{fmt.Errorf("-ts %q: want ratios like 3/1 (finite, not negative, not all 0)", s)}
	var out []float64
	var sum float64
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == ',' }) {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, bad
		}
		out = append(out, v)
		sum += v
	}
	if len(out) == 0 || sum == 0 || math.IsInf(sum, 0) {
		return nil, bad
	}
	return out, nil
}

// parseOrdinals parses --device: comma-separated non-negative integers; "" is nil.
func parseOrdinals(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		o, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || o < 0 {
			return nil, usageError{fmt.Errorf("--device %q: want CUDA ordinals like 0,1,0,1", s)}
		}
		out = append(out, o)
	}
	return out, nil
}

// options checks the flags and returns the model.Options they ask for, without the
// devices (see gpuFlags.open). logw, when not nil, receives the loader's log lines.
func (f *modelFlags) options(logw io.Writer) (model.Options, error) {
	if f.path == "" {
		return model.Options{}, usageError{errors.New("-m: a model file is required")}
	}
	if f.ctx < 0 || f.batch < 0 || f.threads < 0 {
		return model.Options{}, usageError{fmt.Errorf("-c %d -b %d -t %d: must not be negative", f.ctx, f.batch, f.threads)}
	}
	if err := checkCounts(f.ctx, f.batch, f.threads); err != nil {
		return model.Options{}, err
	}
	if err := f.gpu.check(); err != nil {
		return model.Options{}, err
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
	opts := model.Options{Threads: f.threads, ContextSize: f.ctx, BatchSize: f.batch, KVType: k, MicroBatch: f.gpu.ub,
		Wire: f.gpu.wire}
	if logw != nil {
		opts.Logf = logTo(logw)
	}
	return opts, nil
}

// Upper bounds of the counts the flags take: llama.cpp's n_ctx and n_batch are 32-bit,
// and every thread is a goroutine of the CPU device's pool.
const (
	maxTokens  = 1<<31 - 1
	maxThreads = 4096
)

// checkCounts rejects a context, batch or thread count beyond maxTokens or maxThreads.
func checkCounts(ctx, batch, threads int) error {
	if ctx > maxTokens || batch > maxTokens {
		return usageError{fmt.Errorf("-c %d -b %d: at most %d tokens", ctx, batch, maxTokens)}
	}
	if threads > maxThreads {
		return usageError{fmt.Errorf("-t %d: at most %d threads", threads, maxThreads)}
	}
	return nil
}

// readText reads the text file a command scores (-f); an empty file is an error, not
// a run that scores nothing.
func readText(cmd, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	if len(b) == 0 {
		return "", fmt.Errorf("%s: -f %s: the file is empty, there is nothing to score", cmd, path)
	}
	return string(b), nil
}

// kvType parses a KV cache type flag.
func kvType(name, s string) (model.KVCacheType, error) {
	t, err := model.ParseKVCacheType(s)
	if err != nil {
		return 0, usageError{fmt.Errorf("%s %q: want f16 or f32", name, s)}
	}
	return t, nil
}

// parseFlags parses args with fs, turning flag errors into usage errors and -h into a
// nil error with help reported (and printed).
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	err = parseQuietly(fs, args)
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

// parseQuietly parses args with fs without letting the flag package print: a bad
// flag becomes the one line main prints, not a line and the whole usage. -h still
// prints the usage.
func parseQuietly(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) && usage != nil {
		usage()
	}
	return err
}

// floatFlag returns a flag.Func setter for a float32 that must be finite and within
// [lo, hi], naming the range in its error.
func floatFlag(p *float32, lo, hi float64) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange):
			return fmt.Errorf("%q is not a number", s)
		case math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi || math.Abs(v) > math.MaxFloat32:
			if math.IsInf(hi, 1) {
				return fmt.Errorf("want a finite number >= %g", lo)
			}
			if math.IsInf(lo, -1) {
				return errors.New("want a finite number")
			}
			return fmt.Errorf("want a number from %g to %g", lo, hi)
		}
		*p = float32(v)
		return nil
	}
}

// intFlag returns a flag.Func setter for an int that must be within [lo, hi].
func intFlag(p *int, lo, hi int) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 0, strconv.IntSize)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange):
			return fmt.Errorf("%q is not an integer", s)
		case err != nil || v < int64(lo) || v > int64(hi):
			return fmt.Errorf("want an integer from %d to %d", lo, hi)
		}
		*p = int(v)
		return nil
	}
}
