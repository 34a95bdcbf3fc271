package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
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

// newRunFlags registers run's flags on fs; the sampling defaults are llama.cpp's. Every
// number is range-checked as it is parsed (model.SamplerOptions.Validate's ranges).
func newRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{model: addModelFlags(fs, modelDefaults{Ctx: 0, Batch: 512}), sampler: model.DefaultSamplerOptions(), nPredict: 128}
	d := &f.sampler
	inf := math.Inf(1)
	fs.StringVar(&f.prompt, "p", "", "`prompt` to continue (required)")
	fs.Func("n", fmt.Sprintf("`tokens` to generate; 0 or -1 = until end of text or a full context (default %d)", f.nPredict),
		intFlag(&f.nPredict, -1, maxTokens))
	fs.Func("temp", fmt.Sprintf("sampling `temperature`; <= 0 = greedy (default %g)", d.Temp), floatFlag(&d.Temp, -inf, inf))
	fs.Func("top-k", fmt.Sprintf("keep the `k` most likely tokens; 0 = all (default %d)", d.TopK), intFlag(&d.TopK, 0, math.MaxInt32))
	fs.Func("top-p", fmt.Sprintf("nucleus sampling `mass` from 0 to 1; 1 = off (default %g)", d.TopP), floatFlag(&d.TopP, 0, 1))
	fs.Func("min-p", fmt.Sprintf("drop tokens below `p` (0 to 1) times the best; 0 = off (default %g)", d.MinP), floatFlag(&d.MinP, 0, 1))
	fs.Func("repeat-penalty", fmt.Sprintf("repeat `penalty` >= 0; 1 = off (default %g)", d.RepeatPenalty), floatFlag(&d.RepeatPenalty, 0, inf))
	fs.Func("repeat-last-n", fmt.Sprintf("recent `tokens` the repeat penalty looks at; 0 = off (default %d)", d.RepeatLastN),
		intFlag(&d.RepeatLastN, 0, maxTokens))
	fs.Int64Var(&f.seed, "seed", -1, "sampling `seed`; negative = random")
	fs.BoolVar(&f.json, "json", false, "print one JSON object {prompt_tokens, tokens, text} instead of streaming")
	fs.BoolVar(&f.plan, "plan", false, "print how the layers are placed on the devices, and exit")
	f.dist = addDistFlags(fs)
	return f
}

// parseRun parses and checks run's command line without touching a file or device; it
// returns the flags and the model options they ask for.
func parseRun(args []string, stderr io.Writer) (f *runFlags, mopts model.Options, help bool, err error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f = newRunFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer run -m FILE -p PROMPT [-n 128] [-temp 0.8] [-ngl N] [-plan]\n\nGenerate text from a prompt, streaming tokens as they are made.")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return nil, model.Options{}, help, err
	}
	if _, ranked, _ := f.dist.resolve(os.Getenv); f.prompt == "" && !f.plan && !ranked { // ranks: runRank checks rank 0
		return nil, model.Options{}, false, usageError{errors.New("run: -p: a prompt is required")}
	}
	if err := f.sampler.Validate(); err != nil { // the flags' ranges already hold it; kept in step with model
		return nil, model.Options{}, false, usageError{fmt.Errorf("run: %w", err)}
	}
	mopts, err = f.model.options(nil)
	return f, mopts, false, err
}

// runJSON is the output of 'infer run --json'.
type runJSON struct {
	PromptTokens []int32 `json:"prompt_tokens"`
	Tokens       []int32 `json:"tokens"`
	Text         string  `json:"text"`
}

// cmdRun implements 'infer run': generate text from a prompt.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, mopts, help, err := parseRun(args, stderr)
	if help || err != nil {
		return err
	}
	if cfg, ok, err := f.dist.resolve(os.Getenv); err != nil {
		return err
	} else if ok { // one rank of several (run_dist.go)
		return runRank(ctx, f, cfg, stdout, stderr)
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
	return f.generate(ctx, gm.Model, stdout, stderr)
}

// generate continues the prompt with m as the flags ask: the sampler and seed (a
// random one when negative), printed as JSON or streamed.
func (f *runFlags) generate(ctx context.Context, m *model.Model, stdout, stderr io.Writer) error {
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
// timings on stderr. The prompt is printed once it has been evaluated, with the first
// token (or at the end), so a prompt that fails prints nothing.
func runStreaming(ctx context.Context, m *model.Model, prompt string, opts model.GenerateOptions, stdout, stderr io.Writer) error {
	printed := false
	echo := func() error {
		if printed {
			return nil
		}
		printed = true
		_, err := io.WriteString(stdout, prompt)
		return err
	}
	res, err := model.Generate(ctx, m, prompt, opts, func(t model.Token) error {
		if err := echo(); err != nil {
			return err
		}
		_, err := stdout.Write(t.Piece)
		return err
	})
	if err != nil && !printed {
		return err
	}
	if perr := echo(); perr != nil {
		return perr
	}
	fmt.Fprintln(stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "prompt: %d tokens, %.2f tokens/s; generated: %d tokens, %.2f tokens/s; stop: %v; seed %d\n",
		len(res.PromptTokens), res.PromptTokensPerSecond(), len(res.Tokens), res.GenTokensPerSecond(), res.Stop, opts.Sampler.Seed)
	return nil
}
