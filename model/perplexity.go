package model

import (
	"context"
	"fmt"
	"math"
	"time"
)

// PerplexityOptions configure Perplexity. The zero value scores every chunk of 512
// tokens, each evaluated in one batch.
type PerplexityOptions struct {
	Ctx    int // tokens per chunk (llama-perplexity -c); 0 = 512. The session must hold Ctx tokens.
	Batch  int // tokens per Eval call (-b); 0 or more than Ctx = Ctx
	Chunks int // score at most this many chunks (--chunks); 0 = all of the text
}

// ChunkResult is the running score after one chunk, as llama-perplexity prints it.
type ChunkResult struct {
	Chunk   int           // 1-based chunk number
	Of      int           // number of chunks being scored
	Start   int           // index of the chunk's first token in the tokenized text
	Scored  int           // tokens scored so far, over all chunks
	PPL     float64       // running perplexity: exp(MeanNLL)
	MeanNLL float64       // running mean negative log-likelihood (nats per token)
	StdErr  float64       // standard error of MeanNLL (--ppl-output-type 1's third column)
	Elapsed time.Duration // time spent on this chunk
}

// PerplexityResult is the outcome of Perplexity.
type PerplexityResult struct {
	PPL         float64       // final perplexity
	Uncertainty float64       // the "+/-" of llama.cpp's final estimate; 0 when the variance is not positive
	MeanNLL     float64       // mean negative log-likelihood over all scored tokens
	TextTokens  int           // tokens in the whole text, BOS included
	Scored      int           // tokens scored
	Chunks      []ChunkResult // running values, one per chunk
}

// Perplexity scores text the way llama.cpp's llama-perplexity does: it tokenizes the
// whole text (with BOS when the vocabulary adds it), cuts it into chunks of opts.Ctx
// tokens, replaces each chunk's first token by BOS, evaluates each chunk from an empty
// KV cache in batches of opts.Batch, and scores the second half of every chunk (the
// positions Ctx/2 ... Ctx-2, each predicting the next token) in float64. progress, if
// not nil, is called after every chunk. Cancelling ctx stops between batches.
func Perplexity(ctx context.Context, m *Model, text string, opts PerplexityOptions, progress func(ChunkResult)) (PerplexityResult, error) {
	tok := m.Tokenizer()
	if tok == nil {
		return PerplexityResult{}, errNoTokenizer("perplexity")
	}
	s, err := m.NewSession()
	if err != nil {
		return PerplexityResult{}, fmt.Errorf("perplexity: %w", err)
	}
	defer s.Close()
	sc := scorer{ev: s, limit: s.Ctx(), nVocab: tok.NVocab(), bos: tok.BOS(), addBOS: tok.AddBOS()}
	return sc.run(ctx, tok.Encode(text, true), opts, progress)
}

// evaluator is the part of a Session that perplexity needs.
type evaluator interface {
	Eval(tokens []int32, all bool) ([]float32, error)
	Reset()
}

// scorer computes perplexity over an evaluator; it is Perplexity without the model.
type scorer struct {
	ev     evaluator
	limit  int // tokens the evaluator holds; 0 = unchecked
	nVocab int
	bos    int32
	addBOS bool
	rows   []float32 // scratch: logits of the scored positions, (Ctx-Ctx/2, nVocab)
	piece  []int32   // scratch: the batch being evaluated
}

// run scores tokens, the tokenized text.
func (sc *scorer) run(ctx context.Context, tokens []int32, opts PerplexityOptions, progress func(ChunkResult)) (PerplexityResult, error) {
	nCtx, nBatch, nChunk, err := chunking(len(tokens), opts)
	if err != nil {
		return PerplexityResult{}, err
	}
	if sc.limit > 0 && nCtx > sc.limit {
		return PerplexityResult{}, fmt.Errorf("perplexity: chunks of %d tokens do not fit a session of %d (Options.ContextSize)", nCtx, sc.limit)
	}
	res := PerplexityResult{TextTokens: len(tokens), Chunks: make([]ChunkResult, 0, nChunk)}
	first := nCtx / 2
	var nll, nll2 float64
	for i := range nChunk {
		t0 := time.Now()
		start := i * nCtx
		chunk := tokens[start : start+nCtx]
		if err := sc.evalChunk(ctx, chunk, first, nBatch); err != nil {
			return res, fmt.Errorf("perplexity: chunk %d: %w", i+1, err)
		}
		for j := range nCtx - 1 - first {
			v := nllOf(sc.rows[j*sc.nVocab:(j+1)*sc.nVocab], chunk[first+j+1])
			nll += v
			nll2 += v * v
		}
		res.Scored += nCtx - 1 - first
		c := running(nll, nll2, res.Scored)
		c.Chunk, c.Of, c.Start, c.Elapsed = i+1, nChunk, start, time.Since(t0)
		res.Chunks = append(res.Chunks, c)
		if progress != nil {
			progress(c)
		}
	}
	res.MeanNLL = nll / float64(res.Scored)
	res.PPL = math.Exp(res.MeanNLL)
	if v := nll2/float64(res.Scored) - res.MeanNLL*res.MeanNLL; v > 0 {
		res.Uncertainty = math.Sqrt(v/float64(res.Scored-1)) * res.PPL
	}
	return res, nil
}

// chunking resolves opts against a text of n tokens into the chunk length, the batch
// length and the number of chunks, with llama-perplexity's checks.
func chunking(n int, opts PerplexityOptions) (nCtx, nBatch, nChunk int, err error) {
	nCtx = opts.Ctx
	if nCtx == 0 {
		nCtx = 512
	}
	if nCtx < 4 {
		return 0, 0, 0, fmt.Errorf("perplexity: context of %d tokens: need at least 4", nCtx)
	}
	if opts.Batch < 0 || opts.Chunks < 0 {
		return 0, 0, 0, fmt.Errorf("perplexity: negative batch (%d) or chunk count (%d)", opts.Batch, opts.Chunks)
	}
	if n < 2*nCtx {
		return 0, 0, 0, fmt.Errorf("perplexity: need at least %d tokens for a context of %d; the text has %d", 2*nCtx, nCtx, n)
	}
	nBatch = opts.Batch
	if nBatch == 0 || nBatch > nCtx {
		nBatch = nCtx
	}
	nChunk = n / nCtx
	if opts.Chunks > 0 {
		nChunk = min(nChunk, opts.Chunks)
	}
	return nCtx, nBatch, nChunk, nil
}

// evalChunk evaluates chunk from an empty cache, its first token replaced by BOS when
// the vocabulary adds one, and leaves the logits of positions first ... len(chunk)-1 in
// sc.rows.
func (sc *scorer) evalChunk(ctx context.Context, chunk []int32, first, nBatch int) error {
	sc.ev.Reset()
	sc.rows = sc.rows[:0]
	for j := 0; j < len(chunk); j += nBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(nBatch, len(chunk)-j)
		sc.piece = append(sc.piece[:0], chunk[j:j+n]...)
		if j == 0 && sc.addBOS {
			sc.piece[0] = sc.bos
		}
		want := j+n > first // this batch holds scored positions
		logits, err := sc.ev.Eval(sc.piece, want)
		if err != nil {
			return fmt.Errorf("eval tokens %d..%d: %w", j, j+n-1, err)
		}
		if !want {
			continue
		}
		if len(logits) != n*sc.nVocab {
			return fmt.Errorf("eval tokens %d..%d: got %d logits, want %d×%d", j, j+n-1, len(logits), n, sc.nVocab)
		}
		from := max(first-j, 0)
		sc.rows = append(sc.rows, logits[from*sc.nVocab:]...)
	}
	return nil
}

// running returns the running statistics after count scored tokens, with llama.cpp's
// formulas for --ppl-output-type 1.
func running(nll, nll2 float64, count int) ChunkResult {
	mean := nll / float64(count)
	c := ChunkResult{Scored: count, PPL: math.Exp(mean), MeanNLL: mean}
	if v := nll2/float64(count) - mean*mean; v > 0 && count > 1 {
		c.StdErr = math.Sqrt(v / float64(count-1))
	}
	return c
}

// nllOf returns -log softmax(row)[tok] as llama-perplexity's log_softmax computes it:
// the maximum in float32, each exp in float32, their sum and the logarithm in float64.
func nllOf(row []float32, tok int32) float64 {
	maxL := row[0]
	for _, l := range row[1:] {
		maxL = max(maxL, l)
	}
	var sum float64
	for _, l := range row {
		sum += float64(float32(math.Exp(float64(l - maxL))))
	}
	return -(float64(row[tok]-maxL) - math.Log(sum))
}
