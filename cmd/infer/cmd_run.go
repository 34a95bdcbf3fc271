package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/infergo/infer/model"
)

// runFlags are the flags of 'infer run' beyond the model flags.
type runFlags struct {
	model    *modelFlags
	prompt   string
	nPredict int
	sampler  model.SamplerOptions
	seed     int64
	json     bool
	plan     bool
	dist     *distFlags
}

// newRunFlags registers run's flags on fs; the sampling defaults are llama.cpp's.
func newRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{model: addModelFlags(fs, modelDefaults{Ctx: 0, Batch: 512}), sampler: model.DefaultSamplerOptions()}
	d := &f.sampler
	fs.StringVar(&f.prompt, "p", "", "`prompt` to continue (required)")
	fs.IntVar(&f.nPredict, "n", 128, "`tokens` to generate; 0 = until end of text or a full context")
	fs.Func("temp", fmt.Sprintf("sampling `temperature`; 0 = greedy (default %g)", d.Temp), float32Flag(&d.Temp))
	fs.IntVar(&d.TopK, "top-k", d.TopK, "keep the `k` most likely tokens; 0 = all")
	fs.Func("top-p", fmt.Sprintf("nucleus sampling `mass`; 1 = off (default %g)", d.TopP), float32Flag(&d.TopP))
	fs.Func("min-p", fmt.Sprintf("drop tokens below `p` times the best; 0 = off (default %g)", d.MinP), float32Flag(&d.MinP))
	fs.Func("repeat-penalty", fmt.Sprintf("repeat `penalty`; 1 = off (default %g)", d.RepeatPenalty), float32Flag(&d.RepeatPenalty))
	fs.IntVar(&d.RepeatLastN, "repeat-last-n", d.RepeatLastN, "recent `tokens` the repeat penalty looks at")
	fs.Int64Var(&f.seed, "seed", -1, "sampling `seed`; -1 = random")
	fs.BoolVar(&f.json, "json", false, "print one JSON object {prompt_tokens, tokens, text} instead of streaming")
	fs.BoolVar(&f.plan, "plan", false, "print how the layers are placed on the devices, and exit")
	f.dist = addDistFlags(fs)
	return f
}

// float32Flag returns a flag.Func setter for a float32.
func float32Flag(p *float32) func(string) error {
	return func(s string) error {
		var v float64
		if _, err := fmt.Sscan(s, &v); err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		*p = float32(v)
		return nil
	}
}

// runJSON is the output of 'infer run --json'.
type runJSON struct {
	PromptTokens []int32 `json:"prompt_tokens"`
	Tokens       []int32 `json:"tokens"`
	Text         string  `json:"text"`
}

// cmdRun implements 'infer run': generate text from a prompt.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := newRunFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer run -m FILE -p PROMPT [-n 128] [-temp 0.8] [-ngl N] [-plan]\n\nGenerate text from a prompt, streaming tokens as they are made.")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if cfg, ok, err := f.dist.resolve(os.Getenv); err != nil {
		return err
	} else if ok { // one rank of several (run_dist.go)
		return runRank(ctx, f, cfg, stdout, stderr)
	}
	if f.prompt == "" && !f.plan {
		return usageError{errors.New("run: -p: a prompt is required")}
	}
	mopts, err := f.model.options(nil)
	if err != nil {
		return err
	}
	if f.plan {
		p, err := f.model.gpu.plan(f.model.path, mopts)
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, p.String())
		return err
	}
	gm, err := f.model.gpu.load(ctx, f.model.path, mopts)
	if err != nil {
		return err
	}
	defer closeModel(gm, mopts.Logf)
	m := gm.Model
	gopts := model.GenerateOptions{NPredict: max(f.nPredict, 0), Sampler: f.sampler}
	gopts.Sampler.Seed = uint64(f.seed)
	if f.seed < 0 {
		gopts.Sampler.Seed = rand.Uint64()
	}
	if f.json {
		return runToJSON(ctx, m, f.prompt, gopts, stdout)
	}
	return runStreaming(ctx, m, f.prompt, gopts, stdout, stderr)
}

// runToJSON generates and prints one JSON object.
func runToJSON(ctx context.Context, m *model.Model, prompt string, opts model.GenerateOptions, stdout io.Writer) error {
	res, err := model.Generate(ctx, m, prompt, opts, nil)
	if err != nil {
		return err
	}
	out := runJSON{PromptTokens: res.PromptTokens, Tokens: res.Tokens, Text: res.Text}
	if out.Tokens == nil {
		out.Tokens = []int32{}
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// runStreaming prints the prompt and then each token as it is generated, and the
// timings on stderr.
func runStreaming(ctx context.Context, m *model.Model, prompt string, opts model.GenerateOptions, stdout, stderr io.Writer) error {
	if _, err := io.WriteString(stdout, prompt); err != nil {
		return err
	}
	res, err := model.Generate(ctx, m, prompt, opts, func(t model.Token) error {
		_, err := stdout.Write(t.Piece)
		return err
	})
	fmt.Fprintln(stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "prompt: %d tokens, %.2f tokens/s; generated: %d tokens, %.2f tokens/s; stop: %v; seed %d\n",
		len(res.PromptTokens), res.PromptTokensPerSecond(), len(res.Tokens), res.GenTokensPerSecond(), res.Stop, opts.Sampler.Seed)
	return nil
}
