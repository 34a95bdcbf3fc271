package model

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// SamplerOptions choose how the next token is picked from a row of logits. The zero
// value is greedy decoding with every filter off; DefaultSamplerOptions returns
// llama.cpp's defaults.
type SamplerOptions struct {
	Temp          float32 // temperature; <= 0 picks the argmax (greedy), lowest id on ties
	TopK          int     // keep the K most likely tokens; 0 keeps all
	TopP          float32 // keep the smallest set of probability mass >= TopP; off when <= 0 or >= 1
	MinP          float32 // drop tokens less likely than MinP times the most likely; off when <= 0
	RepeatPenalty float32 // divide (positive) or multiply (negative) repeated tokens' logits; off at 0 or 1
	RepeatLastN   int     // how many recent tokens the repeat penalty looks at; 0 turns it off
	Seed          uint64  // seeds the PCG generator when NewSampler gets no *rand.Rand
}

// DefaultSamplerOptions returns llama.cpp's default sampling settings: temperature
// 0.8, top-k 40, top-p 0.95, min-p 0.05, repeat penalty 1.0 (off) over the last 64 tokens.
func DefaultSamplerOptions() SamplerOptions {
	return SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1, RepeatLastN: 64}
}

// A Sampler picks tokens from logits with llama.cpp's default chain: repeat penalty,
// top-k, top-p, min-p, temperature, then a draw from the remaining distribution. A
// Sampler is not safe for concurrent use.
type Sampler struct {
	opts SamplerOptions
	rng  *rand.Rand
	cand []candidate       // scratch: the surviving tokens, (n_vocab) at most
	seen map[int32]float32 // scratch: repeat counts of the penalised window
}

// candidate is one token still in the running, with its logit and, after softmax, its
// probability.
type candidate struct {
	id    int32
	logit float32
	p     float32
}

// NewSampler returns a sampler with opts. rng drives the random draw; when it is nil the
// sampler uses a PCG generator seeded with opts.Seed.
func NewSampler(opts SamplerOptions, rng *rand.Rand) *Sampler {
	if rng == nil {
		rng = rand.New(rand.NewPCG(opts.Seed, opts.Seed))
	}
	return &Sampler{opts: opts, rng: rng, seen: make(map[int32]float32)}
}

// Sample returns the next token for one row of logits (NVocab floats). history is the
// sequence so far (prompt and generated tokens), used by the repeat penalty. logits are
// not modified.
func (s *Sampler) Sample(logits []float32, history []int32) int32 {
	cand := s.candidates(logits, history)
	if len(cand) == 1 {
		return cand[0].id
	}
	u := s.rng.Float64()
	var cum float64
	for _, c := range cand {
		cum += float64(c.p)
		if u < cum {
			return c.id
		}
	}
	return cand[len(cand)-1].id // rounding left u past the last bucket
}

// candidates runs the chain and returns the tokens that can be drawn with their
// probabilities (one token with p = 1 when greedy).
func (s *Sampler) candidates(logits []float32, history []int32) []candidate {
	s.cand = s.cand[:0]
	for i, l := range logits {
		s.cand = append(s.cand, candidate{id: int32(i), logit: l})
	}
	s.penalize(history)
	if s.opts.Temp <= 0 {
		best := s.cand[0]
		for _, c := range s.cand[1:] {
			if c.logit > best.logit {
				best = c
			}
		}
		best.p = 1
		s.cand = append(s.cand[:0], best)
		return s.cand
	}
	sorted := s.topK()
	s.topP(sorted)
	s.minP()
	for i := range s.cand {
		s.cand[i].logit /= s.opts.Temp
	}
	softmax(s.cand)
	return s.cand
}

// penalize applies the repeat penalty to the tokens among the last RepeatLastN of
// history, as llama.cpp's penalties sampler does.
func (s *Sampler) penalize(history []int32) {
	pen := s.opts.RepeatPenalty
	if s.opts.RepeatLastN <= 0 || pen == 0 || pen == 1 || len(history) == 0 {
		return
	}
	clear(s.seen)
	for _, t := range history[max(0, len(history)-s.opts.RepeatLastN):] {
		s.seen[t]++
	}
	for i := range s.cand {
		if _, ok := s.seen[s.cand[i].id]; !ok {
			continue
		}
		if s.cand[i].logit <= 0 {
			s.cand[i].logit *= pen
		} else {
			s.cand[i].logit /= pen
		}
	}
}

// byLogit orders candidates by descending logit, lower id first on ties.
func byLogit(a, b candidate) int {
	if c := cmp.Compare(b.logit, a.logit); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// topK keeps the TopK highest logits and reports whether the candidates are now sorted.
func (s *Sampler) topK() bool {
	k := s.opts.TopK
	if k <= 0 {
		return false
	}
	slices.SortFunc(s.cand, byLogit)
	s.cand = s.cand[:min(k, len(s.cand))]
	return true
}

// topP keeps the most likely tokens until their probability mass reaches TopP.
func (s *Sampler) topP(sorted bool) {
	p := s.opts.TopP
	if p <= 0 || p >= 1 {
		return
	}
	if !sorted {
		slices.SortFunc(s.cand, byLogit)
	}
	softmax(s.cand)
	var cum float32
	for i, c := range s.cand {
		cum += c.p
		if cum >= p {
			s.cand = s.cand[:i+1]
			return
		}
	}
}

// minP drops the tokens whose probability is below MinP times the largest, compared in
// logit space as llama.cpp does (logit >= max + log(MinP)).
func (s *Sampler) minP() {
	if s.opts.MinP <= 0 {
		return
	}
	maxL := float32(math.Inf(-1))
	for _, c := range s.cand {
		maxL = max(maxL, c.logit)
	}
	floor := maxL + float32(math.Log(float64(s.opts.MinP)))
	kept := s.cand[:0]
	for _, c := range s.cand {
		if c.logit >= floor {
			kept = append(kept, c)
		}
	}
	s.cand = kept
}

// softmax sets each candidate's p from the logits, in float32 as llama.cpp does.
func softmax(cand []candidate) {
	maxL := float32(math.Inf(-1))
	for _, c := range cand {
		maxL = max(maxL, c.logit)
	}
	var sum float32
	for i := range cand {
		cand[i].p = float32(math.Exp(float64(cand[i].logit - maxL)))
		sum += cand[i].p
	}
	for i := range cand {
		cand[i].p /= sum
	}
}
