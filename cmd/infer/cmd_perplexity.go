package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/infergo/infer/model"
)

// cmdPerplexity implements 'infer perplexity': score a text file the way
// llama-perplexity does. The running values and the final estimate go to stdout in
// llama.cpp's format; progress goes to stderr.
func cmdPerplexity(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs, mf, file, chunks := perplexityFlags(stderr)
	df := addDistFlags(fs)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cfg, ranks, err := df.resolve(os.Getenv)
	if err != nil {
		return err
	}
	if *file == "" && (!ranks || cfg.Rank == 0) {
		return usageError{errors.New("perplexity: -f: a text file is required")}
	}
	if mf.ctx == 0 {
		return usageError{errors.New("perplexity: -c must be positive")}
	}
	if *chunks < 0 {
		*chunks = 0 // llama.cpp's -1: all chunks
	}
	mopts, err := mf.options(nil)
	if err != nil {
		return err
	}
	mopts.BatchSize = min(mf.batch, mf.ctx)
	if ranks { // one rank of several (run_dist.go)
		rs, serr := startRank(ctx, cfg, df, mf, mopts)
		if serr != nil {
			return serr
		}
		defer rs.Close()
		if cfg.Rank != 0 {
			return rs.serve(ctx)
		}
		defer func() { rs.finish(err) }()
		return scorePerplexity(ctx, rs.m, *file, mf, *chunks, stdout, stderr)
	}
	gm, err := mf.gpu.load(ctx, mf.path, mopts)
	if err != nil {
		return err
	}
	defer closeModel(gm, mopts.Logf)
	return scorePerplexity(ctx, gm.Model, *file, mf, *chunks, stdout, stderr)
}

// scorePerplexity reads the text file and prints m's perplexity on it.
func scorePerplexity(ctx context.Context, m *model.Model, file string, mf *modelFlags, chunks int, stdout, stderr io.Writer) error {
	text, err := readText("perplexity", file)
	if err != nil {
		return err
	}
	opts := model.PerplexityOptions{Ctx: mf.ctx, Batch: mf.batch, Chunks: chunks}
	res, err := model.Perplexity(ctx, m, text, opts, func(c model.ChunkResult) {
		printChunk(stdout, stderr, c)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if res.Uncertainty == 0 {
		return errors.New("perplexity: unexpected negative standard deviation of log(prob)")
	}
	fmt.Fprintf(stdout, "Final estimate: PPL = %.4f +/- %.5f\n", res.PPL, res.Uncertainty)
	return nil
}

// perplexityFlags returns the flag set of 'infer perplexity', writing its help to
// stderr, and the model flags, -f and -chunks registered on it.
func perplexityFlags(stderr io.Writer) (fs *flag.FlagSet, mf *modelFlags, file *string, chunks *int) {
	fs = flag.NewFlagSet("perplexity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mf = addModelFlags(fs, modelDefaults{Ctx: 512, Batch: 2048})
	file = fs.String("f", "", "text `file` to score (required)")
	chunks = fs.Int("chunks", 0, "score at most `n` chunks; 0 = all")
	fs.Lookup("c").Usage = "chunk length in `tokens` (llama-perplexity's -c)"
	fs.Lookup("b").Usage = "`tokens` per forward pass, at most -c"
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer perplexity -m FILE -f TEXT [-c 512] [-b 2048] [-chunks N] [-ngl N]\n\nScore a text file the way llama-perplexity does.")
		fs.PrintDefaults()
	}
	return fs, mf, file, chunks
}

// printChunk writes one chunk's running perplexity to stdout as llama-perplexity does,
// and a progress line to stderr.
func printChunk(stdout, stderr io.Writer, c model.ChunkResult) {
	left := c.Elapsed * time.Duration(c.Of-c.Chunk)
	fmt.Fprintf(stderr, "perplexity: chunk %d/%d, %.2f seconds per pass, ETA %.2f minutes\n",
		c.Chunk, c.Of, c.Elapsed.Seconds(), left.Minutes())
	fmt.Fprintf(stdout, "[%d]%.4f,", c.Chunk, c.PPL)
}
