package model

import (
	"context"
	"fmt"
	"math"
	"time"
)

// PerplexityOptions configure Perplexity. The zero value scores every chunk of 512
// tokens, one chunk per pass.
type PerplexityOptions struct {
	Ctx int // tokens per chunk (llama-perplexity -c); 0 = 512. Sessions must hold Ctx tokens.
	// Batch is the tokens per pass (-b); 0 = Ctx. As in llama-perplexity, a batch of
	// at least two chunks packs n_seq = Batch/Ctx chunks into each pass, each in its
	// own session; a batch shorter than a chunk evaluates each chunk in several passes.
	Batch      int
	Chunks     int // score at most this many chunks (--chunks); 0 = all of the text
	MicroBatch int // the most tokens a stage computes at a time; 0 = the pass on one stage, else Options.MicroBatch
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
	Elapsed time.Duration // this chunk's share of its pass's time
}

// PerplexityResult is the outcome of Perplexity.
type PerplexityResult struct {
	Chunking    Chunking      // how the text was cut into chunks and passes
	PPL         float64       // final perplexity
	Uncertainty float64       // the "+/-" of llama.cpp's final estimate; 0 when the variance is not positive
	MeanNLL     float64       // mean negative log-likelihood over all scored tokens
	TextTokens  int           // tokens in the whole text, BOS included
	Scored      int           // tokens scored
	Chunks      []ChunkResult // running values, one per chunk
	Times       RunTimes      // where the time went
}

// Perplexity scores text the way llama.cpp's llama-perplexity does: it tokenizes the
// whole text (with BOS when the vocabulary adds it) and scores the tokens with
// PerplexityOfTokens.
func Perplexity(ctx context.Context, m *Model, text string, opts PerplexityOptions, progress func(ChunkResult)) (PerplexityResult, error) {
	tok := m.Tokenizer()
	if tok == nil {
		return PerplexityResult{}, errNoTokenizer("perplexity")
	}
	return PerplexityOfTokens(ctx, m, tok.Encode(text, true), opts, progress)
}

// PerplexityOfTokens scores a tokenized text the way llama-perplexity does: it cuts it
// into chunks of opts.Ctx tokens (PlanChunks), replaces each chunk's first token by BOS,
// evaluates each chunk from an empty KV cache, n_seq chunks per pass, and scores the
// second half of every chunk (the positions Ctx/2 ... Ctx-2, each predicting the next
// token) in float64, in chunk order. progress, if not nil, is called after every chunk.
// Cancelling ctx stops it within one pass (between micro-batches).
func PerplexityOfTokens(ctx context.Context, m *Model, tokens []int32, opts PerplexityOptions, progress func(ChunkResult)) (PerplexityResult, error) {
	r, done, err := planRunner(m, len(tokens), opts, "perplexity")
	if err != nil {
		return PerplexityResult{}, err
	}
	defer done()
	return r.perplexity(ctx, tokens, progress)
}

// perplexity scores tokens with r's chunking.
func (r *chunkRunner) perplexity(ctx context.Context, tokens []int32, progress func(ChunkResult)) (PerplexityResult, error) {
	c := r.c
	res := PerplexityResult{Chunking: c, TextTokens: len(tokens), Chunks: make([]ChunkResult, 0, c.Chunks)}
	sc := &pplScorer{c: c, nll: make([]float64, c.Chunks*c.scored()), res: &res, progress: progress}
	err := r.run(ctx, tokens, sc, nil)
	res.Times = r.times
	if err != nil {
		return res, fmt.Errorf("perplexity: %w", err)
	}
	sc.finish()
	return res, nil
}

// pplScorer accumulates the negative log-likelihood of every scored token.
type pplScorer struct {
	c         Chunking
	nll       []float64 // per scored token, (Chunks, scored)
	sum, sum2 float64   // over the chunks done, in order
	res       *PerplexityResult
	progress  func(ChunkResult)
}

// finish sets the result's mean negative log-likelihood, perplexity and uncertainty
// from the sums over every scored token.
func (p *pplScorer) finish() {
	res := p.res
	res.MeanNLL = p.sum / float64(res.Scored)
	res.PPL = math.Exp(res.MeanNLL)
	if v := p.sum2/float64(res.Scored) - res.MeanNLL*res.MeanNLL; v > 0 {
		res.Uncertainty = math.Sqrt(v/float64(res.Scored-1)) * res.PPL
	}
}

func (p *pplScorer) row(k, j int, logits []float32, next int32) {
	p.nll[k*p.c.scored()+j] = nllOf(logits, next)
}

func (p *pplScorer) chunkDone(k int, elapsed time.Duration) error {
	n := p.c.scored()
	for _, v := range p.nll[k*n : (k+1)*n] {
		p.sum += v
		p.sum2 += v * v
	}
	p.res.Scored += n
	cr := running(p.sum, p.sum2, p.res.Scored)
	cr.Chunk, cr.Of, cr.Start, cr.Elapsed = k+1, p.c.Chunks, k*p.c.Ctx, elapsed
	p.res.Chunks = append(p.res.Chunks, cr)
	if p.progress != nil {
		p.progress(cr)
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
