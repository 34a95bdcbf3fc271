package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Session is what a benchmark drives: a model's KV cache and forward pass
// (*model.Session satisfies it).
type Session interface {
	// Eval appends tokens at the current position and returns logits.
	Eval(tokens []int32, all bool) ([]float32, error)
	// Reset empties the KV cache.
	Reset()
}

// Test is one llama-bench test: Prompt tokens in one batch, then Gen tokens one by one,
// after Depth tokens already in the cache (llama-bench's -d; not timed).
type Test struct {
	Prompt int
	Gen    int
	Depth  int
}

// Name is llama-bench's name of the test: pp512, tg128 or pp512+tg128, followed by
// " @ d5071" when the test runs at a depth.
func (t Test) Name() string {
	var s string
	switch {
	case t.Gen == 0:
		s = fmt.Sprintf("pp%d", t.Prompt)
	case t.Prompt == 0:
		s = fmt.Sprintf("tg%d", t.Gen)
	default:
		s = fmt.Sprintf("pp%d+tg%d", t.Prompt, t.Gen)
	}
	if t.Depth > 0 {
		s += fmt.Sprintf(" @ d%d", t.Depth)
	}
	return s
}

// Tokens is the number of tokens a run evaluates and times (the depth is not counted).
func (t Test) Tokens() int { return t.Prompt + t.Gen }

// Context is the KV cache a run fills: the depth, the prompt and the generated tokens.
func (t Test) Context() int { return t.Depth + t.Prompt + t.Gen }

// Input says how a run builds its tokens: BOS first when the vocabulary adds one (as
// llama-bench does), the others uniformly random below NVocab.
type Input struct {
	NVocab int
	BOS    int32 // -1: no BOS, every token random
	Seed   uint64
}

// Result holds the timings of one test.
type Result struct {
	Test      Test
	SamplesNS []int64 // wall time of each repetition
}

// Run runs t reps times on s, after a warm-up run unless warmup is false, and returns
// the timings. Each run starts from an empty cache and, for a test at a depth, first
// evaluates t.Depth tokens (BOS first, as one prompt) outside the timed part, as
// llama-bench does; the warm-up, as llama-bench's, runs at depth 0.
func Run(ctx context.Context, s Session, t Test, in Input, reps int, warmup bool) (Result, error) {
	if t.Prompt < 0 || t.Gen < 0 || t.Depth < 0 || t.Tokens() == 0 || reps < 1 || in.NVocab < 1 {
		return Result{}, fmt.Errorf("bench: test %+v with %d repetitions over %d tokens: nothing to run", t, reps, in.NVocab)
	}
	rng := rand.New(rand.NewPCG(in.Seed, uint64(t.Prompt)<<32|uint64(t.Gen)))
	r := Result{Test: t}
	if warmup {
		s.Reset()
		if err := prompt(s, t.Prompt, in, rng); err != nil {
			return r, fmt.Errorf("bench: %s warm-up: %w", t.Name(), err)
		}
		if err := generate(s, min(t.Gen, 1), in, rng); err != nil {
			return r, fmt.Errorf("bench: %s warm-up: %w", t.Name(), err)
		}
	}
	for i := 0; i < reps; i++ {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		s.Reset()
		if err := prompt(s, t.Depth, in, rng); err != nil {
			return r, fmt.Errorf("bench: %s depth run %d: %w", t.Name(), i+1, err)
		}
		start := time.Now()
		err := prompt(s, t.Prompt, in, rng)
		if err == nil {
			err = generate(s, t.Gen, in, rng)
		}
		if err != nil {
			return r, fmt.Errorf("bench: %s run %d: %w", t.Name(), i+1, err)
		}
		r.SamplesNS = append(r.SamplesNS, max(1, time.Since(start).Nanoseconds()))
	}
	return r, nil
}

// token returns a random token, or BOS when first and the vocabulary adds one.
func (in Input) token(first bool, rng *rand.Rand) int32 {
	if first && in.BOS >= 0 {
		return in.BOS
	}
	return int32(rng.IntN(in.NVocab))
}

// prompt evaluates n tokens as one batch (Eval splits it by the model's batch size and
// returns once the logits are on the host, so nothing is left running after it).
func prompt(s Session, n int, in Input, rng *rand.Rand) error {
	if n == 0 {
		return nil
	}
	tokens := make([]int32, n)
	for i := range tokens {
		tokens[i] = in.token(i == 0, rng)
	}
	_, err := s.Eval(tokens, false)
	return err
}

// generate evaluates n tokens one at a time, as llama-bench's tg test does.
func generate(s Session, n int, in Input, rng *rand.Rand) error {
	tok := in.token(true, rng)
	for i := 0; i < n; i++ {
		if _, err := s.Eval([]int32{tok}, false); err != nil {
			return err
		}
		tok = in.token(false, rng)
	}
	return nil
}

// TokensPerSecond returns each repetition's throughput.
func (r Result) TokensPerSecond() []float64 {
	ts := make([]float64, len(r.SamplesNS))
	for i, ns := range r.SamplesNS {
		ts[i] = 1e9 * float64(r.Test.Tokens()) / float64(ns)
	}
	return ts
}

// Mean is the mean tokens per second over the repetitions, the figure llama-bench prints.
func (r Result) Mean() float64 { return mean(r.TokensPerSecond()) }

// Stddev is the sample standard deviation of tokens per second.
func (r Result) Stddev() float64 { return stddev(r.TokensPerSecond()) }

// MeanNS is the mean wall time of a repetition.
func (r Result) MeanNS() float64 { return mean(int64s(r.SamplesNS)) }

// StddevNS is the sample standard deviation of the repetitions' wall times.
func (r Result) StddevNS() float64 { return stddev(int64s(r.SamplesNS)) }

func int64s(v []int64) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return f
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// stddev is the sample standard deviation (n-1), computed as llama-bench does, from
// the sum of squares; 0 for fewer than two values.
func stddev(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m, n := mean(v), float64(len(v))
	var sq float64
	for _, x := range v {
		sq += x * x
	}
	return math.Sqrt(max(0, sq/(n-1)-m*m*n/(n-1)))
}

// ErrNoTests is returned by Tests when every count is 0.
var ErrNoTests = errors.New("bench: no tests: every prompt and generation count is 0")

// Tests returns llama-bench's tests for -p prompts -n gens: a pp test for each non-zero
// prompt count, then a tg test for each non-zero generation count.
func Tests(prompts, gens []int) ([]Test, error) {
	var ts []Test
	for _, p := range prompts {
		if p < 0 {
			return nil, fmt.Errorf("bench: prompt count %d is negative", p)
		}
		if p > 0 {
			ts = append(ts, Test{Prompt: p})
		}
	}
	for _, g := range gens {
		if g < 0 {
			return nil, fmt.Errorf("bench: generation count %d is negative", g)
		}
		if g > 0 {
			ts = append(ts, Test{Gen: g})
		}
	}
	if len(ts) == 0 {
		return nil, ErrNoTests
	}
	return ts, nil
}

// AtDepths returns tests run at each depth in turn, in llama-bench's order: every test
// at the first depth, then every test at the next one. A depth of 0 is the test as given.
func AtDepths(tests []Test, depths []int) ([]Test, error) {
	var ts []Test
	for _, d := range depths {
		if d < 0 {
			return nil, fmt.Errorf("bench: depth %d is negative", d)
		}
		for _, t := range tests {
			t.Depth = d
			ts = append(ts, t)
		}
	}
	return ts, nil
}
