package model

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SamplerOptions choose how the next token is picked from a row of logits. The zero
// value is greedy decoding with every filter off; DefaultSamplerOptions returns
// llama.cpp's defaults. Validate reports values out of range; Generate checks them.
type SamplerOptions struct {
	Temp          float32 // temperature, finite; <= 0 picks the argmax (greedy), lowest id on ties
	TopK          int     // keep the K most likely tokens, K >= 0; 0 keeps all
	TopP          float32 // in [0, 1]: keep the smallest set of probability mass >= TopP; 0 and 1 are off
	MinP          float32 // in [0, 1]: drop tokens less likely than MinP times the most likely; 0 is off
	RepeatPenalty float32 // >= 0, finite: divide (positive) or multiply (negative) repeated tokens' logits; off at 0 or 1
	RepeatLastN   int     // how many recent tokens the repeat penalty looks at, >= 0; 0 turns it off
	Seed          uint64  // seeds the PCG generator when NewSampler gets no *rand.Rand
}

// DefaultSamplerOptions returns llama.cpp's default sampling settings: temperature
// 0.8, top-k 40, top-p 0.95, min-p 0.05, repeat penalty 1.0 (off) over the last 64 tokens.
func DefaultSamplerOptions() SamplerOptions {
	return SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1, RepeatLastN: 64}
}

// Validate reports the first option out of its documented range: a NaN or infinite
// float, a negative count, a probability outside [0, 1].
func (o SamplerOptions) Validate() error {
	finite := func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
	switch {
	case !finite(o.Temp):
		return fmt.Errorf("sampler: temperature %v: want a finite number", o.Temp)
	case o.TopK < 0:
		return fmt.Errorf("sampler: top-k %d: want 0 (off) or more", o.TopK)
	case !finite(o.TopP) || o.TopP < 0 || o.TopP > 1:
		return fmt.Errorf("sampler: top-p %v: want a probability in [0, 1]", o.TopP)
	case !finite(o.MinP) || o.MinP < 0 || o.MinP > 1:
		return fmt.Errorf("sampler: min-p %v: want a probability in [0, 1]", o.MinP)
	case !finite(o.RepeatPenalty) || o.RepeatPenalty < 0:
		return fmt.Errorf("sampler: repeat penalty %v: want a finite number >= 0", o.RepeatPenalty)
	case o.RepeatLastN < 0:
		return fmt.Errorf("sampler: repeat-last-n %d: want 0 (off) or more", o.RepeatLastN)
	}
	return nil
}

// A Sampler picks tokens from logits with llama.cpp's default chain: repeat penalty,
// top-k, top-p, min-p, temperature, then a draw from the remaining distribution.
//
// It does not sort the vocabulary: top-k selects the K best logits with a heap in one
// pass, top-p without top-k sorts only as many of the best tokens as its mass needs,
// and min-p without either keeps the tokens above its threshold in one pass. The
// candidates and their order, and so the tokens a seed draws, are those of sorting the
// whole vocabulary (most likely first, lower id on ties) and cutting it.
//
// A Sampler never panics on out-of-range options (see SamplerOptions.Validate): it
// keeps at least the most likely token. It is not safe for concurrent use.
type Sampler struct {
	opts SamplerOptions
	rng  *rand.Rand
	cand []candidate // scratch: the surviving tokens, (n_vocab) at most
	keys []uint64    // scratch: the top-k heap's rank keys
	pen  []float32   // scratch: the penalised logits (all, or only the marked ones)
	mark []uint64    // scratch: a bit for each penalised token
	ids  []int32     // scratch: the penalised tokens
}

// candidate is one token still in the running, with its logit and, after softmax, its
// probability.
type candidate struct {
	id    int32
	logit float32
	p     float32
}

// NewSampler returns a sampler with opts. rng drives the random draw; when it is nil the
// sampler uses a PCG generator seeded with opts.Seed. NewSampler does not check opts;
// call opts.Validate first to report bad ones.
func NewSampler(opts SamplerOptions, rng *rand.Rand) *Sampler {
	if rng == nil {
		rng = rand.New(rand.NewPCG(opts.Seed, opts.Seed))
	}
	return &Sampler{opts: opts, rng: rng}
}

// Sample returns the next token for one row of logits (NVocab floats), or -1 when the
// row is empty. history is the sequence so far (prompt and generated tokens), used by
// the repeat penalty. logits are not modified.
func (s *Sampler) Sample(logits []float32, history []int32) int32 {
	cand := s.candidates(logits, history)
	switch len(cand) {
	case 0:
		return -1
	case 1:
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
	if len(logits) == 0 {
		return s.cand
	}
	src, over := logits, false
	if s.penaltyOn(history) {
		if s.opts.RepeatPenalty > 1 && (s.opts.TopK > 0 || !(s.opts.Temp > 0)) {
			s.overlayPenalties(logits, history) // selectTop reads the penalised few
			over = true
		} else {
			src = s.penalize(logits, history)
		}
	}
	if !(s.opts.Temp > 0) {
		if over {
			s.selectTopOver(src, 1, true)
			s.cand[0].p = 1
			return s.cand
		}
		s.cand = append(s.cand, candidate{id: argmaxLogit(src), p: 1})
		s.cand[0].logit = src[s.cand[0].id]
		return s.cand
	}
	built := false // s.cand holds the chain's candidates so far
	if k := s.opts.TopK; k > 0 {
		s.selectTopOver(src, min(k, len(src)), over)
		built = true
	}
	if p := s.opts.TopP; p > 0 && p < 1 {
		if built {
			s.topP(p)
		} else {
			s.topPAll(src, p)
			built = true
		}
	}
	if mp := s.opts.MinP; mp > 0 {
		if built {
			s.minP(mp)
		} else {
			s.minPAll(src, mp)
			built = true
		}
	}
	if !built {
		for i, l := range src {
			s.cand = append(s.cand, candidate{id: int32(i), logit: l})
		}
	}
	if len(s.cand) == 0 { // min-p above 1, or NaN logits: keep the best token, as llama.cpp keeps one
		if over {
			src = s.penalize(logits, history)
		}
		id := argmaxLogit(src)
		s.cand = append(s.cand, candidate{id: id, logit: src[id]})
	}
	for i := range s.cand {
		s.cand[i].logit /= s.opts.Temp
	}
	softmax(s.cand)
	return s.cand
}

// penaltyOn reports whether the repeat penalty changes any logit for history.
func (s *Sampler) penaltyOn(history []int32) bool {
	pen := s.opts.RepeatPenalty
	return s.opts.RepeatLastN > 0 && pen != 0 && pen != 1 && len(history) > 0
}

// penalize returns logits with the repeat penalty applied, as llama.cpp's penalties
// sampler does, to the tokens among the last RepeatLastN of history: a copy when the
// penalty is on, logits themselves when it is off.
func (s *Sampler) penalize(logits []float32, history []int32) []float32 {
	if !s.penaltyOn(history) {
		return logits
	}
	s.pen = append(s.pen[:0], logits...)
	s.markPenalties(logits, history)
	return s.pen
}

// overlayPenalties is penalize without the copy: it writes the penalised logits into
// s.pen at their ids only and marks them (penalised), for selectTop to read in place
// of logits. A penalty above 1 only lowers logits, so the blocks selectTop skips by
// the logits hold no penalised token that could enter.
func (s *Sampler) overlayPenalties(logits []float32, history []int32) {
	if cap(s.pen) < len(logits) {
		s.pen = make([]float32, len(logits))
	}
	s.pen = s.pen[:len(logits)]
	s.markPenalties(logits, history)
}

// markPenalties applies the repeat penalty to s.pen[t] for each distinct token t among
// the last RepeatLastN of history (ids outside logits are ignored), from logits[t], and
// marks t. len(s.pen) must be len(logits).
func (s *Sampler) markPenalties(logits []float32, history []int32) {
	for _, t := range s.ids { // the previous call's marks
		s.mark[t>>6] = 0
	}
	s.ids = s.ids[:0]
	if n := (len(logits) + 63) / 64; len(s.mark) < n {
		s.mark = make([]uint64, n)
	}
	pen := s.opts.RepeatPenalty
	for _, t := range history[max(0, len(history)-s.opts.RepeatLastN):] {
		if t < 0 || int(t) >= len(logits) || s.penalised(t) {
			continue
		}
		s.mark[t>>6] |= 1 << (t & 63)
		s.ids = append(s.ids, t)
		if l := logits[t]; l <= 0 {
			s.pen[t] = l * pen
		} else {
			s.pen[t] = l / pen
		}
	}
}

// penalised reports whether markPenalties marked token t.
func (s *Sampler) penalised(t int32) bool {
	return s.mark[t>>6]&(1<<(t&63)) != 0
}

// byLogit orders candidates by descending logit, lower id first on ties (NaN last).
func byLogit(a, b candidate) int {
	if c := cmp.Compare(b.logit, a.logit); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// selectTop sets s.cand to the k best of logits in byLogit order: a min-heap of the
// rank keys (rankKey) of the k best so far, replaced at its root by each logit that
// beats it, skipping the blocks of logits that cannot (blockAbove). Later ids lose
// ties, so a logit equal to the root's never enters.
func (s *Sampler) selectTop(logits []float32, k int) {
	s.selectTopOver(logits, k, false)
}

// selectTopOver is selectTop over logits with the penalised logits that
// overlayPenalties wrote in s.pen in place of theirs when over is true.
func (s *Sampler) selectTopOver(logits []float32, k int, over bool) {
	at := func(i int) float32 { // the logit of token i, penalised when over
		if over && s.penalised(int32(i)) {
			return s.pen[i]
		}
		return logits[i]
	}
	h := s.keys[:0]
	for i := range k {
		h = append(h, rankKey(at(i), int32(i)))
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	thr := keyLogit(h[0])
	i := k
	for ; thr != thr && i < len(logits); i++ { // a NaN root is beaten by any number
		if l := at(i); l == l {
			h[0] = rankKey(l, int32(i))
			siftDown(h, 0)
			thr = keyLogit(h[0])
		}
	}
	// The root is a number from here on: only greater numbers replace it.
	for i < len(logits) {
		i = blockAbove(logits, i, thr)
		end := min(i+blockSize, len(logits))
		for j, l := range logits[i:end] {
			if l > thr && over {
				l = at(i + j)
			}
			if l > thr {
				h[0] = rankKey(l, int32(i+j))
				siftDown(h, 0)
				thr = keyLogit(h[0])
			}
		}
		i = end
	}
	slices.Sort(h)
	s.keys = h
	s.cand = s.cand[:0]
	for j := len(h) - 1; j >= 0; j-- {
		id := keyID(h[j])
		s.cand = append(s.cand, candidate{id: id, logit: at(int(id))})
	}
}

// rankKey packs a token into a key that orders as byLogit reversed, the best token
// the largest: the logit's bits mapped to an unsigned order (-0 as +0, NaN below every
// number) above the complement of the id.
func rankKey(l float32, id int32) uint64 {
	var o uint32 // NaN
	if l == l {
		b := math.Float32bits(l)
		switch {
		case l == 0:
			o = 1 << 31
		case b>>31 != 0:
			o = ^b
		default:
			o = b | 1<<31
		}
	}
	return uint64(o)<<32 | uint64(^uint32(id))
}

// keyID returns the id packed in a rank key.
func keyID(key uint64) int32 {
	return int32(^uint32(key))
}

// keyLogit returns the logit of a rank key (+0 for -0, a NaN for NaN), which compares
// as the token's logit.
func keyLogit(key uint64) float32 {
	o := uint32(key >> 32)
	if o >= 1<<31 {
		return math.Float32frombits(o &^ (1 << 31))
	}
	return math.Float32frombits(^o)
}

// siftDown restores the min-heap of rank keys below i, the worst token at the root.
func siftDown(h []uint64, i int) {
	x := h[i]
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h[r] < h[c] {
			c = r
		}
		if h[c] >= x {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = x
}

// worse reports whether a comes after b in byLogit's order: a lower logit (NaN below
// every number), or the same logit and a higher id.
func worse(a, b candidate) bool {
	return rankKey(a.logit, a.id) < rankKey(b.logit, b.id)
}

// topP keeps the most likely of the sorted candidates until their probability mass
// reaches p.
func (s *Sampler) topP(p float32) {
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

// topPAll is topP over the whole vocabulary (top-k off): it selects and sorts the best
// 64 tokens, then 4 times as many, until their mass reaches p, the probabilities being
// taken against the whole vocabulary's softmax.
func (s *Sampler) topPAll(logits []float32, p float32) {
	maxL := maxLogit(logits)
	var sum float32
	for _, l := range logits {
		sum += float32(math.Exp(float64(l - maxL)))
	}
	for n := 64; ; n *= 4 {
		s.selectTop(logits, min(n, len(logits)))
		var cum float32
		for i := range s.cand {
			s.cand[i].p = float32(math.Exp(float64(s.cand[i].logit-maxL))) / sum
			cum += s.cand[i].p
			if cum >= p {
				s.cand = s.cand[:i+1]
				return
			}
		}
		if len(s.cand) == len(logits) {
			return
		}
	}
}

// minP drops the candidates whose probability is below mp times the largest, compared
// in logit space as llama.cpp does (logit >= max + log(mp)).
func (s *Sampler) minP(mp float32) {
	maxL := float32(math.Inf(-1))
	for _, c := range s.cand {
		maxL = max(maxL, c.logit)
	}
	floor := maxL + float32(math.Log(float64(mp)))
	kept := s.cand[:0]
	for _, c := range s.cand {
		if c.logit >= floor {
			kept = append(kept, c)
		}
	}
	s.cand = kept
}

// minPAll is minP over the whole vocabulary (top-k and top-p off): one pass for the
// maximum, one that keeps the tokens at or above the floor, in id order.
func (s *Sampler) minPAll(logits []float32, mp float32) {
	floor := maxLogit(logits) + float32(math.Log(float64(mp)))
	s.cand = appendAtLeast(s.cand, logits, floor)
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
