package model

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// KL-divergence runs, as llama-perplexity's --kl-divergence-base and --kl-divergence:
// a base model (say F16) is scored once over a text, writing its log-probabilities at
// every scored position to a base file; a quantized model is then scored over the same
// tokens and compared with them position by position.

// WriteKLDBase scores tokens as PerplexityOfTokens does and writes the base file of
// llama-perplexity --kl-divergence-base to path: the header with the tokens of the
// chunks scored, then the quantized log-probabilities of every scored position. The
// file is written beside path and moved there only when complete, so a failed or
// cancelled run leaves none behind. The perplexity is computed from the same float32
// log-softmax the file records (llama.cpp's), within float32 rounding of Perplexity's.
func WriteKLDBase(ctx context.Context, m *Model, tokens []int32, path string, opts PerplexityOptions, progress func(ChunkResult)) (PerplexityResult, error) {
	r, done, err := planRunner(m, len(tokens), opts, "kl-divergence base")
	if err != nil {
		return PerplexityResult{}, err
	}
	defer done()
	return r.writeBase(ctx, tokens, path, progress)
}

// writeBase is WriteKLDBase over r.
func (r *chunkRunner) writeBase(ctx context.Context, tokens []int32, path string, progress func(ChunkResult)) (PerplexityResult, error) {
	c := r.c
	h := &KLDHeader{Ctx: c.Ctx, Vocab: r.nVocab, Chunks: c.Chunks, Tokens: tokens[:c.Chunks*c.Ctx]}
	w, err := createKLDBase(path, h)
	if err != nil {
		return PerplexityResult{}, fmt.Errorf("kl-divergence base: %w", err)
	}
	res := PerplexityResult{Chunking: c, TextTokens: len(tokens), Chunks: make([]ChunkResult, 0, c.Chunks)}
	sc := &baseScorer{pplScorer: pplScorer{c: c, nll: make([]float64, c.Chunks*c.scored()), res: &res, progress: progress},
		recs: newRecordRing(c, r.nVocab), w: w}
	err = r.run(ctx, tokens, sc, nil)
	res.Times = r.times
	if err != nil {
		w.abort()
		return res, fmt.Errorf("kl-divergence base: %w", err)
	}
	if err := w.commit(); err != nil {
		return res, fmt.Errorf("kl-divergence base: %w", err)
	}
	sc.finish()
	return res, nil
}

// baseScorer writes each scored row's record and scores its token.
type baseScorer struct {
	pplScorer
	recs recordRing
	w    *kldWriter
}

// recordRing holds the base-file records of the scored rows of two passes, one buffer
// per pass parity: a pass's are written or read while the previous pass's are in use.
type recordRing struct {
	c    Chunking
	rb   int       // bytes per record
	bufs [2][]byte // per pass parity: (Seq, scored) records
}

func newRecordRing(c Chunking, nVocab int) recordRing {
	r := recordRing{c: c, rb: recordBytes(nVocab)}
	for i := range r.bufs {
		r.bufs[i] = make([]byte, c.perPass()*c.scored()*r.rb)
	}
	return r
}

// chunks returns the records of chunks k..k+n-1, which are in one pass.
func (r *recordRing) chunks(k, n int) []byte {
	size := r.c.scored() * r.rb
	off := (k % r.c.Seq) * size
	return r.bufs[(k/r.c.Seq)%2][off : off+n*size]
}

// rec returns the record of row j of chunk k.
func (r *recordRing) rec(k, j int) []byte { return r.chunks(k, 1)[j*r.rb : (j+1)*r.rb] }

func (b *baseScorer) row(k, j int, logits []float32, next int32) {
	b.nll[k*b.c.scored()+j] = quantizeLogProbs(b.recs.rec(k, j), logits, next)
}

func (b *baseScorer) chunkDone(k int, elapsed time.Duration) error {
	if err := b.w.write(b.recs.chunks(k, 1)); err != nil {
		return err
	}
	return b.pplScorer.chunkDone(k, elapsed)
}

// KLDChunk is the running comparison after one chunk: a row of llama-perplexity's
// --kl-divergence table.
type KLDChunk struct {
	Chunk   int           // 1-based chunk number
	Of      int           // chunks being scored
	Elapsed time.Duration // this chunk's share of its pass's time
	KLDStats
}

// KLDResult is the outcome of KLDivergence: the running values after each chunk and
// the statistics over every scored token, with percentiles.
type KLDResult struct {
	Chunking Chunking   // how the base file's tokens were cut into passes
	Chunks   []KLDChunk // running values, one per chunk
	Stats    KLDStats   // over all scored tokens
	Times    RunTimes   // where the time went
}

// KLDivergence scores the tokens of the base file at path (written by WriteKLDBase or
// by llama-perplexity --kl-divergence-base) with m and compares every scored position
// with the base model's log-probabilities there, as llama-perplexity --kl-divergence
// does: perplexities of both, their ratio and correlation, the KL divergence of m's
// distribution from the base's, the change Δp of the probability of the right token,
// and how often both models' most likely tokens agree. opts.Ctx is ignored (the file
// sets the chunk length); opts.Batch packs chunks into passes as in Perplexity, which
// changes no value; opts.Chunks limits the chunks compared.
func KLDivergence(ctx context.Context, m *Model, path string, opts PerplexityOptions, progress func(KLDChunk)) (KLDResult, error) {
	tok := m.Tokenizer()
	if tok == nil {
		return KLDResult{}, errNoTokenizer("kl-divergence")
	}
	f, err := openKLDBase(path)
	if err != nil {
		return KLDResult{}, fmt.Errorf("kl-divergence: %w", err)
	}
	defer f.Close()
	h := f.h
	if h.Vocab != m.cfg.NVocab {
		return KLDResult{}, fmt.Errorf("kl-divergence: %s: vocabulary of %d tokens, the model's has %d", path, h.Vocab, m.cfg.NVocab)
	}
	opts.Ctx = h.Ctx
	c, err := PlanChunks(len(h.Tokens), opts)
	if err != nil {
		return KLDResult{}, fmt.Errorf("kl-divergence: %s: %w", path, err)
	}
	r, done, err := newChunkRunner(m, c, opts.MicroBatch)
	if err != nil {
		return KLDResult{}, fmt.Errorf("kl-divergence: %w", err)
	}
	defer done()
	return r.kld(ctx, f, progress)
}

// kld is KLDivergence over r, reading the records from f.
func (r *chunkRunner) kld(ctx context.Context, f *kldReader, progress func(KLDChunk)) (KLDResult, error) {
	c := r.c
	n := c.Chunks * c.scored()
	sc := &kldScorer{c: c, recs: newRecordRing(c, r.nVocab), progress: progress,
		t: kldTokens{nll: make([]float64, n), nllBase: make([]float64, n), kld: make([]float64, n),
			pDiff: make([]float64, n), same: make([]bool, n)}}
	sc.res.Chunking = c
	before := func(k, n int) error {
		if err := f.read(sc.recs.chunks(k, n)); err != nil {
			return fmt.Errorf("kl-divergence: log-probabilities of chunks %d..%d: %w", k+1, k+n, err)
		}
		return nil
	}
	err := r.run(ctx, f.h.Tokens, sc, before)
	sc.res.Times = r.times
	if err != nil {
		return sc.res, fmt.Errorf("kl-divergence: %w", err)
	}
	sc.res.Stats = sc.t.stats(n, true)
	return sc.res, nil
}

// kldScorer compares each scored row with its record in the base file.
type kldScorer struct {
	c        Chunking
	recs     recordRing
	t        kldTokens
	res      KLDResult
	progress func(KLDChunk)
}

func (s *kldScorer) row(k, j int, logits []float32, next int32) {
	u := k*s.c.scored() + j
	s.t.nll[u], s.t.nllBase[u], s.t.kld[u], s.t.pDiff[u], s.t.same[u] = kldRow(logits, s.recs.rec(k, j), next)
}

func (s *kldScorer) chunkDone(k int, elapsed time.Duration) error {
	cr := KLDChunk{Chunk: k + 1, Of: s.c.Chunks, Elapsed: elapsed, KLDStats: s.t.stats((k+1)*s.c.scored(), false)}
	s.res.Chunks = append(s.res.Chunks, cr)
	if s.progress != nil {
		s.progress(cr)
	}
	return nil
}

// kldRow compares one position's logits with its base record, as llama-perplexity's
// log_softmax for --kl-divergence does (in float32 where it computes in float): the
// negative log-likelihoods of tok under the model and the base, the KL divergence of
// the model's distribution from the base's (over the base's tokens above e^-16), the
// model's minus the base's probability of tok, and whether both put the same token
// first (the first of equal maxima).
func kldRow(logits []float32, rec []byte, tok int32) (nll, nllBase, kld, pDiff float64, same bool) {
	maxL, imax := logits[0], 0
	for i, l := range logits[1:] {
		if l > maxL {
			maxL, imax = l, i+1
		}
	}
	var sumExp float64
	for _, l := range logits {
		sumExp += float64(expf(l - maxL))
	}
	logSum := float32(math.Log(sumExp))
	le := binary.LittleEndian
	scale, minLogProb := math.Float32frombits(le.Uint32(rec)), math.Float32frombits(le.Uint32(rec[4:]))
	q := rec[8:]
	base := func(i int) float32 { return float32(scale*float32(le.Uint16(q[2*i:]))) + minLogProb }
	n := maxL + logSum - logits[tok]
	nb := -base(int(tok))
	maxL += logSum
	var sum float64
	imaxBase, pMax := -1, float32(0)
	for i, l := range logits {
		p := base(i)
		if i == 0 || p > pMax {
			pMax, imaxBase = p, i
		}
		if p > -16 {
			sum += float64(expf(p) * float32(p-l+maxL))
		}
	}
	pd := expf(-n) - expf(-nb)
	return float64(n), float64(nb), sum, float64(pd), imax == imaxBase
}
