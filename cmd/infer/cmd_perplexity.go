package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/infergo/infer/dist"
	"github.com/infergo/infer/model"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/tokenizer"
)

// perplexityCmd holds the flags of 'infer perplexity'.
type perplexityCmd struct {
	mf      *modelFlags
	file    string // -f
	chunks  int    // --chunks
	kldBase string // --kl-divergence-base
	kld     bool   // --kl-divergence
	json    bool   // --json
	ubSet   bool   // -ub was given: passes use it even on one device
	ctxSet  bool   // -c was given: with --kl-divergence it must agree with the base file
	dist    *distFlags
	// rank, when not nil, is this process's model of a multi-process run (rank 0);
	// load returns it instead of loading the model itself.
	rank *model.Model
}

// cmdPerplexity implements 'infer perplexity': score a text file the way
// llama-perplexity does, n_seq = -b / -c chunks per pass. With --kl-divergence-base
// alone it also writes the base model's log-probabilities to that file; with
// --kl-divergence it compares the model with such a file instead. The results go to
// stdout in llama.cpp's format (or as JSON with --json); progress and timings go to
// stderr.
func cmdPerplexity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, pc := perplexityFlags(stderr)
	if help, err := pc.parse(fs, args); help || err != nil {
		return err
	}
	cfg, ranks, err := pc.dist.resolve(os.Getenv)
	if err != nil {
		return err
	}
	mopts, err := pc.mf.options(nil)
	if err != nil {
		return err
	}
	if err := pc.check(ranks && cfg.Rank != 0); err != nil {
		return err
	}
	if ranks {
		return pc.runRank(ctx, cfg, mopts, stdout, stderr)
	}
	if pc.kld {
		return pc.runKLD(ctx, mopts, stdout, stderr)
	}
	return pc.runPerplexity(ctx, mopts, stdout, stderr)
}

// perplexityFlags returns the flag set of 'infer perplexity', writing its help to
// stderr, and the command's flags registered on it.
func perplexityFlags(stderr io.Writer) (*flag.FlagSet, *perplexityCmd) {
	fs := flag.NewFlagSet("perplexity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pc := &perplexityCmd{mf: addModelFlags(fs, modelDefaults{Ctx: 512, Batch: 2048})}
	fs.StringVar(&pc.file, "f", "", "text `file` to score (required, except with --kl-divergence)")
	fs.IntVar(&pc.chunks, "chunks", 0, "score at most `n` chunks; 0 = all")
	fs.StringVar(&pc.kldBase, "kl-divergence-base", "", "base log-probabilities `file`: written when given alone, read with --kl-divergence")
	fs.BoolVar(&pc.kld, "kl-divergence", false, "compare the model with the base file of --kl-divergence-base (its tokens replace -f)")
	fs.BoolVar(&pc.json, "json", false, "print the results (final values and per-chunk values) as JSON on stdout")
	pc.dist = addDistFlags(fs)
	fs.Lookup("c").Usage = "chunk length in `tokens` (llama-perplexity's -c)"
	fs.Lookup("b").Usage = "`tokens` per pass: n_seq = b/c chunks share a pass when b >= 2c; below c a chunk takes several"
	ub := fs.Lookup("ub")
	ub.Usage = "micro-batch `tokens` (default: the whole pass on one device; 512 over several, pipelined over the stages)"
	ub.DefValue = "0" // the default depends on the devices: Usage says it
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer perplexity -m FILE -f TEXT [-c 512] [-b 2048] [--chunks N] [-ngl N] [--kl-divergence-base FILE [--kl-divergence]] [--json]\n\nScore a text file the way llama-perplexity does, or compare a model with a base model's\nlog-probabilities (KL divergence).")
		fs.PrintDefaults()
	}
	return fs, pc
}

// parse parses args into fs, the set of perplexityFlags, and notes whether -ub was given.
func (pc *perplexityCmd) parse(fs *flag.FlagSet, args []string) (help bool, err error) {
	if help, err := parseFlags(fs, args); help || err != nil {
		return help, err
	}
	fs.Visit(func(f *flag.Flag) {
		pc.ubSet = pc.ubSet || f.Name == "ub"
		pc.ctxSet = pc.ctxSet || f.Name == "c"
	})
	return false, nil
}

// kldHeader reads the base file's header for --kl-divergence and sets -c to its
// context: the chunks are the base file's. An explicit -c that differs is an error.
func (pc *perplexityCmd) kldHeader() (*model.KLDHeader, error) {
	h, err := model.ReadKLDHeader(pc.kldBase)
	if err != nil {
		return nil, err
	}
	if pc.ctxSet && pc.mf.ctx != h.Ctx {
		return nil, usageError{fmt.Errorf("perplexity: -c %d conflicts with the context of %d of the base file %s: --kl-divergence evaluates its chunks; drop -c", pc.mf.ctx, h.Ctx, pc.kldBase)}
	}
	pc.mf.ctx = h.Ctx
	return h, nil
}

// check validates the flags that do not need a file; follower is set for a rank other
// than 0 of a multi-process run, which reads no text.
func (pc *perplexityCmd) check(follower bool) error {
	switch {
	case follower:
	case pc.kld && pc.kldBase == "":
		return usageError{errors.New("perplexity: --kl-divergence needs --kl-divergence-base FILE")}
	case pc.kld && pc.file != "":
		return usageError{errors.New("perplexity: --kl-divergence takes its tokens from the base file; drop -f")}
	case !pc.kld && pc.file == "":
		return usageError{errors.New("perplexity: -f: a text file is required")}
	case !pc.kld && pc.mf.ctx <= 0:
		return usageError{errors.New("perplexity: -c must be positive")}
	case pc.mf.batch <= 0:
		return usageError{errors.New("perplexity: -b must be positive")}
	}
	if pc.chunks < 0 {
		pc.chunks = 0 // llama.cpp's -1: all chunks
	}
	return nil
}

// options are the model.PerplexityOptions the flags ask for. Without -ub the micro-batch
// is left to the model: the whole pass on one device (nothing to pipeline), llama.cpp's
// 512 over several.
func (pc *perplexityCmd) options() model.PerplexityOptions {
	o := model.PerplexityOptions{Ctx: pc.mf.ctx, Batch: pc.mf.batch, Chunks: pc.chunks}
	if pc.ubSet {
		o.MicroBatch = pc.mf.gpu.ub
	}
	return o
}

// tokenized is the text file read and tokenized while the model loads.
type tokenized struct {
	tokens   []int32
	bytes    int
	duration time.Duration // reading and tokenizing
	err      error
}

// tokenize reads the text file and tokenizes it (with BOS, on every core) with the
// model file's vocabulary, on its own goroutine; the result arrives on the channel.
func (pc *perplexityCmd) tokenize() <-chan tokenized {
	done := make(chan tokenized, 1)
	go func() {
		t0 := time.Now()
		var r tokenized
		r.tokens, r.bytes, r.err = readTokens(pc.mf.path, pc.file)
		r.duration = time.Since(t0)
		done <- r
	}()
	return done
}

// readTokens reads text and tokenizes it with the vocabulary of the GGUF file at
// modelPath.
func readTokens(modelPath, text string) ([]int32, int, error) {
	b, err := readText("perplexity", text)
	if err != nil {
		return nil, 0, err
	}
	f, err := gguf.Open(modelPath)
	if err != nil {
		return nil, len(b), fmt.Errorf("perplexity: %w", err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, len(b), fmt.Errorf("perplexity: %s: %w", modelPath, err)
	}
	return tok.EncodeParallel(b, true, runtime.GOMAXPROCS(0)), len(b), nil
}

// load opens the GPUs the flags ask for and loads the model with mopts (or returns the
// rank's model of a multi-process run); close it with the returned function.
func (pc *perplexityCmd) load(ctx context.Context, mopts model.Options) (*model.Model, func(), error) {
	if pc.rank != nil {
		return pc.rank, func() {}, nil
	}
	gm, err := pc.mf.gpu.load(ctx, pc.mf.path, mopts)
	if err != nil {
		return nil, nil, err
	}
	return gm.Model, func() { closeModel(gm, mopts.Logf) }, nil
}

// runRank runs one rank of a multi-process perplexity run (run_dist.go): rank 0 scores
// the text as runPerplexity does, one chunk a pass (the ranks evaluate one sequence at a
// time), the others compute their stage until it is done. With --kl-divergence the
// context is the base file's, as on one process: on rank 0, and on any other rank given
// the same flags (a rank without them needs -c of the base file's context; the ranks
// check that their settings agree).
func (pc *perplexityCmd) runRank(ctx context.Context, cfg dist.Config, mopts model.Options, stdout, stderr io.Writer) (err error) {
	if pc.kld && pc.kldBase != "" {
		if _, err := pc.kldHeader(); err != nil {
			return err
		}
	}
	if pc.mf.batch > pc.mf.ctx {
		fmt.Fprintf(stderr, "perplexity: -b %d: one chunk of %d a pass over several processes\n", pc.mf.batch, pc.mf.ctx)
		pc.mf.batch = pc.mf.ctx
	}
	mopts.ContextSize = pc.mf.ctx
	mopts.BatchSize = min(pc.mf.batch, pc.mf.ctx)
	rs, err := startRank(ctx, cfg, pc.dist, pc.mf, mopts)
	if err != nil {
		return err
	}
	defer rs.Close()
	if cfg.Rank != 0 {
		return rs.serve(ctx)
	}
	defer func() { rs.finish(err) }()
	pc.rank = rs.m
	if pc.kld {
		return pc.runKLD(ctx, mopts, stdout, stderr)
	}
	return pc.runPerplexity(ctx, mopts, stdout, stderr)
}

// runPerplexity scores the text file, writing the base file when
// --kl-divergence-base is given.
func (pc *perplexityCmd) runPerplexity(ctx context.Context, mopts model.Options, stdout, stderr io.Writer) error {
	t0 := time.Now()
	mopts.ContextSize = pc.mf.ctx
	mopts.BatchSize = min(pc.mf.batch, pc.mf.ctx)
	text := pc.tokenize()
	fmt.Fprintln(stderr, "perplexity: tokenizing the input ..")
	m, closeModel, err := pc.load(ctx, mopts)
	if err != nil {
		<-text
		return err
	}
	defer closeModel()
	loadDur := time.Since(t0)
	tt := <-text
	if tt.err != nil {
		return tt.err
	}
	loaded := time.Now()
	fmt.Fprintf(stderr, "perplexity: tokenization took %g ms (%d bytes, %d tokens; the model loaded in %.2f s meanwhile)\n",
		float64(tt.duration.Microseconds())/1e3, tt.bytes, len(tt.tokens), loadDur.Seconds())
	opts := pc.options()
	c, err := model.PlanChunks(len(tt.tokens), opts)
	if err != nil {
		if len(tt.tokens) < 2*max(opts.Ctx, 1) {
			return fmt.Errorf("perplexity: %s: need at least %d tokens for a context of %d; the text has %d", pc.file, 2*opts.Ctx, opts.Ctx, len(tt.tokens))
		}
		return err
	}
	if pc.kldBase != "" {
		fmt.Fprintf(stderr, "perplexity: saving all logits to %s\n", pc.kldBase)
	}
	fmt.Fprintf(stderr, "perplexity: calculating perplexity over %d chunks, n_ctx=%d, batch_size=%d, n_seq=%d\n", c.Chunks, c.Ctx, c.Batch, c.Seq)
	p := newProgress(stderr, "perplexity", c)
	onChunk := func(cr model.ChunkResult) {
		p.chunk(cr.Chunk, cr.Elapsed)
		if !pc.json {
			fmt.Fprintf(stdout, "[%d]%.4f,", cr.Chunk, cr.PPL)
		}
	}
	var res model.PerplexityResult
	if pc.kldBase != "" {
		res, err = model.WriteKLDBase(ctx, m, tt.tokens, pc.kldBase, opts, onChunk)
	} else {
		res, err = model.PerplexityOfTokens(ctx, m, tt.tokens, opts, onChunk)
	}
	p.done()
	if err != nil {
		return err
	}
	timings(stderr, "perplexity", t0, loaded, c.Chunks*c.Ctx, res.Times)
	if pc.json {
		return writeJSON(stdout, perplexityJSON(res, pc.kldBase))
	}
	fmt.Fprintln(stdout)
	if res.Uncertainty == 0 {
		return errors.New("perplexity: unexpected negative standard deviation of log(prob)")
	}
	fmt.Fprintf(stdout, "Final estimate: PPL = %.4f +/- %.5f\n", res.PPL, res.Uncertainty)
	return nil
}

// runKLD compares the model with the base file.
func (pc *perplexityCmd) runKLD(ctx context.Context, mopts model.Options, stdout, stderr io.Writer) error {
	t0 := time.Now()
	h, err := pc.kldHeader()
	if err != nil {
		return err
	}
	mopts.ContextSize = h.Ctx
	mopts.BatchSize = min(pc.mf.batch, h.Ctx)
	m, closeModel, err := pc.load(ctx, mopts)
	if err != nil {
		return err
	}
	defer closeModel()
	loaded := time.Now()
	opts := pc.options()
	opts.Ctx = h.Ctx
	c, err := model.PlanChunks(len(h.Tokens), opts)
	if err != nil {
		return fmt.Errorf("kl-divergence: %s: %w", pc.kldBase, err)
	}
	fmt.Fprintf(stderr, "kl_divergence: computing over %d chunks, n_ctx=%d, batch_size=%d, n_seq=%d\n", c.Chunks, c.Ctx, c.Batch, c.Seq)
	p := newProgress(stderr, "kl_divergence", c)
	onChunk := func(kc model.KLDChunk) {
		p.chunk(kc.Chunk, kc.Elapsed)
		if !pc.json {
			if kc.Chunk == 1 {
				fmt.Fprintf(stdout, "\n%s\n", kldTableHeader)
			}
			printKLDChunk(stdout, kc)
		}
	}
	res, err := model.KLDivergence(ctx, m, pc.kldBase, opts, onChunk)
	p.done()
	if err != nil {
		return err
	}
	timings(stderr, "kl_divergence", t0, loaded, c.Chunks*c.Ctx, res.Times)
	if pc.json {
		return writeJSON(stdout, kldJSON(res, pc.kldBase))
	}
	fmt.Fprintln(stdout)
	if res.Stats.Tokens < 100 {
		return nil // llama.cpp prints no statistics over so few values
	}
	printKLDStats(stdout, res.Stats)
	return nil
}

// timings writes the run's wall-time split to stderr: from the start until the model
// is loaded (and the text tokenized), and the evaluation after it (tokens evaluated,
// not only scored).
func timings(stderr io.Writer, name string, t0, loaded time.Time, evaluated int, rt model.RunTimes) {
	load, eval := loaded.Sub(t0), time.Since(loaded)
	fmt.Fprintf(stderr, "%s: %.2f s to load and tokenize, %.2f s to evaluate and score (%.0f tokens/s; passes %.2f s, waiting for scores %.2f s), %.2f s in all\n",
		name, load.Seconds(), eval.Seconds(), float64(evaluated)/eval.Seconds(), rt.Eval.Seconds(), rt.Score.Seconds(), time.Since(t0).Seconds())
}
