package model

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// GenerateOptions configure Generate. The zero value decodes greedily until an
// end-of-generation token or a full context.
type GenerateOptions struct {
	NPredict int            // tokens to generate at most; 0 = until EOG or the context is full
	Sampler  SamplerOptions // how each token is picked
	Rand     *rand.Rand     // drives the sampler's draws; nil = PCG seeded with Sampler.Seed
}

// Token is one generated token, handed to Generate's callback as soon as it is sampled.
type Token struct {
	ID    int32
	Piece []byte // its text; a multi-byte character may be split across tokens
}

// StopReason says why Generate stopped.
type StopReason int

// The reasons Generate stops.
const (
	StopLength  StopReason = iota // NPredict tokens were generated
	StopEOG                       // the model produced an end-of-generation token (not included)
	StopContext                   // the KV cache is full
)

// String returns "length", "eog" or "context".
func (r StopReason) String() string {
	switch r {
	case StopLength:
		return "length"
	case StopEOG:
		return "eog"
	case StopContext:
		return "context"
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// Result is what Generate produced.
type Result struct {
	PromptTokens []int32 // the tokenized prompt, BOS included when the vocabulary adds it
	Tokens       []int32 // the generated tokens, without a final EOG
	Text         string  // the generated tokens' pieces, concatenated
	Stop         StopReason

	PromptDuration time.Duration // evaluating the prompt
	GenDuration    time.Duration // sampling and evaluating the generated tokens
}

// PromptTokensPerSecond is the prompt evaluation speed.
func (r Result) PromptTokensPerSecond() float64 {
	return perSecond(len(r.PromptTokens), r.PromptDuration)
}

// GenTokensPerSecond is the generation speed.
func (r Result) GenTokensPerSecond() float64 {
	return perSecond(len(r.Tokens), r.GenDuration)
}

func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Generate continues prompt. It tokenizes the prompt (with BOS when the vocabulary adds
// it), evaluates it in a new session, then samples one token at a time, calling onToken
// (when not nil) with each; an error from onToken stops generation and is returned.
// Generation stops after opts.NPredict tokens, at an end-of-generation token, or when
// the context is full. If ctx is cancelled, Generate returns what it has so far and
// ctx.Err(). Sampler options out of range (SamplerOptions.Validate) are an error.
func Generate(ctx context.Context, m *Model, prompt string, opts GenerateOptions, onToken func(Token) error) (Result, error) {
	if err := opts.Sampler.Validate(); err != nil {
		return Result{}, fmt.Errorf("generate: %w", err)
	}
	if m.Tokenizer() == nil {
		return Result{}, errNoTokenizer("generate")
	}
	s, err := m.NewSession()
	if err != nil {
		return Result{}, fmt.Errorf("generate: %w", err)
	}
	defer s.Close()
	g := generator{tok: m.Tokenizer(), s: s, limit: s.Ctx(), sampler: NewSampler(opts.Sampler, opts.Rand)}
	return g.run(ctx, prompt, opts.NPredict, onToken)
}

// textCoder is the part of a tokenizer that generation needs.
type textCoder interface {
	Encode(text string, addSpecial bool) []int32
	Piece(id int32) []byte
	IsEOG(id int32) bool
}

// stepper is the part of a Session that generation needs.
type stepper interface {
	Eval(tokens []int32, all bool) ([]float32, error)
	Pos() int
}

// warmer is a stepper that can make its decode step's recording before the prompt
// (Session.Warmup).
type warmer interface {
	Warmup(token int32) error
}

// generator is Generate without the model: a tokenizer, a session of limit tokens and a
// sampler.
type generator struct {
	tok     textCoder
	s       stepper
	limit   int
	sampler *Sampler
}

// run generates up to nPredict tokens (0 = no limit) after prompt.
func (g *generator) run(ctx context.Context, prompt string, nPredict int, onToken func(Token) error) (Result, error) {
	var res Result
	res.PromptTokens = g.tok.Encode(prompt, true)
	n := len(res.PromptTokens)
	switch {
	case n == 0:
		return res, errors.New("generate: the prompt has no tokens")
	case n >= g.limit:
		return res, fmt.Errorf("generate: prompt of %d tokens leaves no room in a context of %d", n, g.limit)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if w, ok := g.s.(warmer); ok {
		if err := w.Warmup(res.PromptTokens[0]); err != nil {
			return res, fmt.Errorf("generate: warmup: %w", err)
		}
	}
	t0 := time.Now()
	logits, err := g.s.Eval(res.PromptTokens, false)
	if err != nil {
		return res, fmt.Errorf("generate: prompt: %w", err)
	}
	res.PromptDuration = time.Since(t0)
	t1 := time.Now()
	text, err := g.decode(ctx, &res, logits, nPredict, onToken)
	res.GenDuration = time.Since(t1)
	res.Text = string(text)
	return res, err
}

// decode samples and evaluates tokens after the prompt, appending them to res.Tokens
// and setting res.Stop; it returns the generated text.
func (g *generator) decode(ctx context.Context, res *Result, logits []float32, nPredict int, onToken func(Token) error) ([]byte, error) {
	history := slices.Clone(res.PromptTokens)
	var text []byte
	for nPredict <= 0 || len(res.Tokens) < nPredict {
		if err := ctx.Err(); err != nil {
			return text, err
		}
		id := g.sampler.Sample(logits, history)
		if g.tok.IsEOG(id) {
			res.Stop = StopEOG
			return text, nil
		}
		piece := g.tok.Piece(id)
		res.Tokens = append(res.Tokens, id)
		text = append(text, piece...)
		history = append(history, id)
		if onToken != nil {
			if err := onToken(Token{ID: id, Piece: piece}); err != nil {
				return text, err
			}
		}
		if nPredict > 0 && len(res.Tokens) == nPredict {
			break
		}
		if g.s.Pos() >= g.limit {
			res.Stop = StopContext
			return text, nil
		}
		var err error
		if logits, err = g.s.Eval([]int32{id}, false); err != nil {
			return text, fmt.Errorf("generate: token %d: %w", len(res.Tokens), err)
		}
	}
	res.Stop = StopLength
	return text, nil
}
