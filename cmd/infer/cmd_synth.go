package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/infergo/infer/bench"
	"github.com/infergo/infer/model/synth"
)

// cmdSynth implements 'infer synth': write a random-weight model with the exact shapes
// of a real one, weights generated directly in the requested type. --arch gives any
// shape the block of another architecture (qwen2: q, k, v biases; qwen3: per-head q and
// k norms).
func cmdSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shape := fs.String("shape", "tiny", "model `shape`: "+strings.Join(synth.ShapeNames(), ", "))
	typ := fs.String("type", "F16", "weight `type`: "+strings.Join(synth.FileTypeNames(), ", ")+
		" (the _M types write the base k-quant for every matrix, as llama-quantize --pure)")
	out := fs.String("o", "", "output `file` (required)")
	seed := fs.Uint64("seed", 1, "weight `seed`")
	threads := fs.Int("t", 0, "generator `threads` (0 = all cores)")
	layers := fs.Int("layers", 0, "override the number of blocks (0 = the shape's)")
	arch := fs.String("arch", "", "`architecture`: "+strings.Join(synth.Architectures, ", ")+" (default: the shape's)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer synth --shape SHAPE --type TYPE -o FILE [--arch ARCH] [--seed N] [--layers N] [-t N]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	p, err := synthPlan(*shape, *arch, *typ, *out, *layers, *threads)
	if err != nil {
		return err
	}
	start := time.Now()
	last := -1
	opts := synth.Options{Seed: *seed, Threads: *threads, Progress: func(done, total int64) {
		if pct := int(100 * done / max(total, 1)); total >= 256<<20 && pct/10 != last/10 {
			last = pct
			fmt.Fprintf(stderr, "synth: %3d%% of %.2f GiB\n", pct, float64(total)/(1<<30))
		}
	}}
	if err := synth.Write(*out, p, opts); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s %s, %s, %d layers, %s params, %s of tensors in %.1f s\n",
		*out, p.Shape.Name, p.FileType.Name, p.Shape.Architecture(), p.Shape.NLayer, bench.FormatParams(p.Shape.Params()),
		bench.FormatSize(p.Bytes()), time.Since(start).Seconds())
	return ctx.Err()
}

// synthPlan checks synth's flags and returns the plan they ask for.
func synthPlan(shape, arch, typ, out string, layers, threads int) (*synth.Plan, error) {
	if out == "" {
		return nil, usageError{errors.New("synth: -o: an output file is required")}
	}
	if layers < 0 || threads < 0 {
		return nil, usageError{fmt.Errorf("synth: --layers %d -t %d: must not be negative", layers, threads)}
	}
	s, err := synth.LookupShape(shape)
	if err != nil {
		return nil, usageError{err}
	}
	if layers > 0 {
		s = s.WithLayers(layers)
	}
	if arch != "" {
		if s, err = s.WithArch(arch); err != nil {
			return nil, usageError{err}
		}
	}
	ft, err := synth.LookupFileType(typ)
	if err != nil {
		return nil, usageError{err}
	}
	return synth.NewPlan(s, ft)
}
