package model

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Chunking is how llama-perplexity cuts a tokenized text: chunks of Ctx tokens, each
// evaluated from an empty cache with its first token replaced by BOS and its second
// half scored. Seq chunks share each pass (n_seq = Batch/Ctx when the batch holds
// several chunks); a chunk longer than Batch is evaluated in ceil(Ctx/Batch) batches.
type Chunking struct {
	Ctx    int // tokens per chunk (n_ctx)
	Batch  int // tokens per pass (n_batch), at most Seq·Ctx
	Seq    int // chunks per pass (n_seq)
	Chunks int // chunks scored (n_chunk)
}

// PlanChunks returns llama-perplexity's chunking of a text of n tokens with opts,
// with its checks: chunks of at least 4 tokens and a text of at least 2·Ctx tokens.
func PlanChunks(n int, opts PerplexityOptions) (Chunking, error) {
	c := Chunking{Ctx: opts.Ctx, Batch: opts.Batch}
	if c.Ctx == 0 {
		c.Ctx = 512
	}
	if c.Ctx < 4 {
		return c, fmt.Errorf("perplexity: context of %d tokens: need at least 4", c.Ctx)
	}
	if opts.Batch < 0 || opts.Chunks < 0 || opts.MicroBatch < 0 {
		return c, fmt.Errorf("perplexity: negative batch (%d), chunk count (%d) or micro-batch (%d)", opts.Batch, opts.Chunks, opts.MicroBatch)
	}
	if n < 2*c.Ctx {
		return c, fmt.Errorf("perplexity: need at least %d tokens for a context of %d; the text has %d", 2*c.Ctx, c.Ctx, n)
	}
	if c.Batch == 0 {
		c.Batch = c.Ctx
	}
	c.Seq = max(1, c.Batch/c.Ctx)
	c.Batch = min(c.Batch, c.Seq*c.Ctx)
	c.Chunks = n / c.Ctx
	if opts.Chunks > 0 {
		c.Chunks = min(c.Chunks, opts.Chunks)
	}
	return c, nil
}

// first is the first scored position of a chunk: each chunk scores positions
// first..Ctx-2, each predicting the next token.
func (c Chunking) first() int { return c.Ctx / 2 }

// scored is the number of tokens each chunk scores.
func (c Chunking) scored() int { return c.Ctx - 1 - c.first() }

// perPass is the most chunks one pass evaluates.
func (c Chunking) perPass() int { return min(c.Seq, c.Chunks) }

// batches is the number of batches one chunk is evaluated in.
func (c Chunking) batches() int { return (c.Ctx + c.Batch - 1) / c.Batch }

// chunkBatch is one sequence's part of one pass: its tokens and where the logits of its
// last logits rows go.
type chunkBatch struct {
	tokens []int32
	logits int
	out    []float32
}

// evaluator runs the passes of a chunked evaluation: sequence i of a pass is a cache
// of its own (a Session), batch i of eval goes to sequence i.
type evaluator interface {
	// reset empties the caches of the first n sequences.
	reset(n int)
	// eval appends batches[i].tokens to sequence i and writes the logits of its last
	// batches[i].logits rows to batches[i].out.
	eval(ctx context.Context, batches []chunkBatch) error
}

// modelEvaluator runs the passes of a chunked evaluation on a model: a session per
// sequence and one Batch that packs them.
type modelEvaluator struct {
	sessions []*Session
	batch    *Batch // nil for one rank of a multi-process model: sessions are evaluated alone
	in       []SeqInput
}

// newModelEvaluator opens the sessions and batch for chunking c, in micro-batches of
// ub tokens (0 = passMicroBatch's choice).
func newModelEvaluator(m *Model, c Chunking, ub int) (*modelEvaluator, error) {
	if c.Ctx > m.opts.ContextSize {
		return nil, fmt.Errorf("chunks of %d tokens do not fit a session of %d (Options.ContextSize)", c.Ctx, m.opts.ContextSize)
	}
	e := &modelEvaluator{}
	n := c.perPass()
	if m.rank != nil && n > 1 {
		return nil, fmt.Errorf("a multi-process model evaluates one sequence per pass: %d chunks a pass asked (make the batch the chunk length)", n)
	}
	for range n {
		s, err := m.NewSession()
		if err != nil {
			e.close()
			return nil, err
		}
		e.sessions = append(e.sessions, s)
	}
	if m.rank != nil {
		return e, nil
	}
	var err error
	rows := min(c.Batch, n*c.Ctx)
	if e.batch, err = m.NewBatch(BatchOptions{Rows: rows, MicroBatch: passMicroBatch(ub, rows, len(m.stages))}); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// planRunner chunks n tokens as opts asks and returns a runner of the chunks over
// sessions of m, and the function that closes them; op names the run in errors. m must
// have a tokenizer.
func planRunner(m *Model, n int, opts PerplexityOptions, op string) (*chunkRunner, func(), error) {
	if m.Tokenizer() == nil {
		return nil, nil, errNoTokenizer(op)
	}
	c, err := PlanChunks(n, opts)
	if err != nil {
		return nil, nil, err
	}
	r, done, err := newChunkRunner(m, c, opts.MicroBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	return r, done, nil
}

// newChunkRunner returns a runner of chunking c over sessions of m, in micro-batches of
// ub tokens (0 = passMicroBatch's choice), and the function that closes them. m has a
// tokenizer (the callers check).
func newChunkRunner(m *Model, c Chunking, ub int) (*chunkRunner, func(), error) {
	ev, err := newModelEvaluator(m, c, ub)
	if err != nil {
		return nil, nil, err
	}
	tok := m.Tokenizer()
	return &chunkRunner{ev: ev, c: c, nVocab: m.cfg.NVocab, bos: tok.BOS(), addBOS: tok.AddBOS()}, ev.close, nil
}

// passMicroBatch is the micro-batch of a chunked evaluation's passes of rows tokens on a
// model of the given number of stages: ub when asked for; else, on one stage, the whole
// pass, since micro-batches exist to pipeline the stages and one stage has nothing to
// overlap (measured on an H200 for a 7B Q4_0, -c 512 -b 2048: 0.19 s less than in
// micro-batches of 512, the same perplexity to float order); over several stages 0, the
// model's (Options.MicroBatch: llama.cpp's -ub, 512).
func passMicroBatch(ub, rows, stages int) int {
	if ub > 0 || stages != 1 {
		return ub
	}
	return rows
}

func (e *modelEvaluator) reset(n int) {
	for _, s := range e.sessions[:n] {
		s.Reset()
	}
}

func (e *modelEvaluator) eval(ctx context.Context, batches []chunkBatch) error {
	if e.batch == nil { // a rank of a multi-process model (rank.go): one session alone
		for i, b := range batches {
			lg, err := e.sessions[i].evalLast(ctx, b.tokens, b.logits)
			if err != nil {
				return err
			}
			copy(b.out, lg)
		}
		return nil
	}
	e.in = e.in[:0]
	for i, b := range batches {
		e.in = append(e.in, SeqInput{Session: e.sessions[i], Tokens: b.tokens, Logits: b.logits, Out: b.out})
	}
	_, err := e.batch.Eval(ctx, e.in)
	return err
}

// close releases the sessions and the batch.
func (e *modelEvaluator) close() {
	if e.batch != nil {
		e.batch.Close()
	}
	for _, s := range e.sessions {
		s.Close()
	}
}

// rowScorer consumes the logits of the scored rows of a chunked evaluation.
type rowScorer interface {
	// row scores row j of chunk k: logits (nVocab) at position first+j, predicting
	// next. It is called concurrently for different rows.
	row(k, j int, logits []float32, next int32)
	// chunkDone is called once every row of chunk k is scored, in chunk order, with
	// the chunk's share of its pass's time. An error stops the evaluation.
	chunkDone(k int, elapsed time.Duration) error
}

// chunkRunner evaluates the chunks of a tokenized text as llama-perplexity does and
// hands each scored row's logits to a rowScorer. While the evaluator computes pass p+1
// (on a GPU, asynchronously to the host), the host scores pass p, over all cores.
type chunkRunner struct {
	ev      evaluator
	c       Chunking
	nVocab  int
	bos     int32
	addBOS  bool
	workers int          // goroutines scoring rows; 0 = GOMAXPROCS
	logits  [2][]float32 // per pass parity: (Seq, Ctx-first, nVocab) logits of rows first..Ctx-1
	batches []chunkBatch
	pieces  [][]int32 // per sequence: its batch when its first token is replaced by BOS
	times   RunTimes
}

// RunTimes split the time of a chunked run (Perplexity, KLDivergence).
type RunTimes struct {
	Eval  time.Duration // evaluating the passes, the logits' downloads included
	Score time.Duration // waiting for host scoring that the next pass did not hide
}

// run evaluates the c.Chunks chunks of tokens, scoring them with sc. Cancelling ctx
// stops it within one pass. before, if not nil, is called with each pass's first chunk
// and chunk count before the pass is evaluated, while the previous pass may still be
// being scored (to read what the scorer needs for the pass).
func (r *chunkRunner) run(ctx context.Context, tokens []int32, sc rowScorer, before func(k, n int) error) error {
	c, V := r.c, r.nVocab
	for i := range r.logits {
		r.logits[i] = make([]float32, c.perPass()*(c.Ctx-c.first())*V)
	}
	r.pieces = make([][]int32, c.Seq)
	var pending *passScore // the previous pass, being scored
	for p, k := 0, 0; k < c.Chunks; p, k = p+1, k+c.Seq {
		n := min(c.Seq, c.Chunks-k)
		if before != nil {
			if err := before(k, n); err != nil {
				pending.stop()
				return err
			}
		}
		t0 := time.Now()
		buf := r.logits[p%2]
		if err := r.pass(ctx, tokens, k, n, buf); err != nil {
			pending.stop()
			return fmt.Errorf("chunk %d: %w", k+1, err)
		}
		elapsed := time.Since(t0)
		r.times.Eval += elapsed
		if err := r.report(pending, sc); err != nil {
			return err
		}
		pending = r.score(tokens, k, n, buf, sc, elapsed)
	}
	return r.report(pending, sc)
}

// report waits for a pass's scoring and reports its chunks, timing the wait.
func (r *chunkRunner) report(ps *passScore, sc rowScorer) error {
	t0 := time.Now()
	err := ps.report(sc)
	r.times.Score += time.Since(t0)
	return err
}

// pass evaluates chunks k..k+n-1 in one pass (one batch per sequence, or several when
// a chunk is longer than a batch), leaving the logits of positions first..Ctx-1 of
// chunk k+i in buf's i-th (Ctx-first, nVocab) block.
func (r *chunkRunner) pass(ctx context.Context, tokens []int32, k, n int, buf []float32) error {
	c, V, first := r.c, r.nVocab, r.c.first()
	rowsPerChunk := c.Ctx - first
	r.ev.reset(n)
	for j := range c.batches() {
		start := j * c.Batch
		size := min(c.Batch, c.Ctx-start)
		lo := max(first, start)
		r.batches = r.batches[:0]
		for i := range n {
			piece := tokens[(k+i)*c.Ctx+start : (k+i)*c.Ctx+start+size]
			if j == 0 && r.addBOS {
				r.pieces[i] = append(r.pieces[i][:0], piece...)
				r.pieces[i][0] = r.bos
				piece = r.pieces[i]
			}
			b := chunkBatch{tokens: piece, logits: max(0, start+size-lo)}
			if b.logits > 0 {
				off := i*rowsPerChunk + lo - first
				b.out = buf[off*V : (off+b.logits)*V]
			}
			r.batches = append(r.batches, b)
		}
		if err := r.ev.eval(ctx, r.batches); err != nil {
			return fmt.Errorf("eval tokens %d..%d: %w", start, start+size-1, err)
		}
	}
	return nil
}

// passScore is the scoring of one pass's rows, running on other goroutines.
type passScore struct {
	k, n    int
	elapsed time.Duration
	wg      sync.WaitGroup
}

// score starts scoring the rows of chunks k..k+n-1 from buf over r.workers goroutines.
func (r *chunkRunner) score(tokens []int32, k, n int, buf []float32, sc rowScorer, elapsed time.Duration) *passScore {
	c, V, first := r.c, r.nVocab, r.c.first()
	rowsPerChunk, scored := c.Ctx-first, c.scored()
	total := n * scored
	workers := r.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, total)
	ps := &passScore{k: k, n: n, elapsed: elapsed}
	var next atomic.Int64
	const grab = 4 // rows per grab
	ps.wg.Add(workers)
	for range workers {
		go func() {
			defer ps.wg.Done()
			for {
				lo := int(next.Add(grab)) - grab
				if lo >= total {
					return
				}
				for u := lo; u < min(lo+grab, total); u++ {
					i, j := u/scored, u%scored
					off := (i*rowsPerChunk + j) * V
					sc.row(k+i, j, buf[off:off+V], tokens[(k+i)*c.Ctx+first+j+1])
				}
			}
		}()
	}
	return ps
}

// stop waits for the pass's rows (nothing when ps is nil).
func (ps *passScore) stop() {
	if ps != nil {
		ps.wg.Wait()
	}
}

// report waits for the pass's rows and reports its chunks to sc in order (nothing when
// ps is nil).
func (ps *passScore) report(sc rowScorer) error {
	if ps == nil {
		return nil
	}
	ps.wg.Wait()
	for i := range ps.n {
		if err := sc.chunkDone(ps.k+i, ps.elapsed/time.Duration(ps.n)); err != nil {
			return err
		}
	}
	return nil
}
