package model

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// refSample draws a token from refCandidates, the plain sort-everything chain, with
// Sample's draw: one uniform number against the cumulative probabilities.
func refSample(opts SamplerOptions, logits []float32, history []int32, rng *rand.Rand) int32 {
	cand := refCandidates(opts, slices.Clone(logits), history)
	switch len(cand) {
	case 0:
		return -1
	case 1:
		return cand[0].id
	}
	u := rng.Float64()
	var cum float64
	for _, c := range cand {
		cum += float64(c.p)
		if u < cum {
			return c.id
		}
	}
	return cand[len(cand)-1].id
}

// tokenTestLogits returns a row of n logits of one of several shapes: N(0, 3²) with
// ties and -Inf, the same shifted below zero (negative thresholds), a few distinct
// values (ties everywhere), large magnitudes, a peaked row.
func tokenTestLogits(rng *rand.Rand, n, shape int) []float32 {
	l := randomLogits(rng, n)
	for i := range l {
		switch shape {
		case 1:
			l[i] -= 40
		case 2:
			l[i] = float32(rng.IntN(4))
		case 3:
			l[i] *= 1e30
		case 4:
			if rng.IntN(500) == 0 {
				l[i] += 25
			}
		}
	}
	return l
}

// TestSamplerSameTokensAsReference checks that Sample draws, for many logit rows and
// seeds, the tokens that sorting the whole vocabulary and drawing with the same seed
// draws: the selection shortcuts change the work, not the result.
func TestSamplerSameTokensAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	configs := []SamplerOptions{
		DefaultSamplerOptions(),
		{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.1, RepeatLastN: 64},
		{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 0.8, RepeatLastN: 64},
		{Temp: 0.7, TopK: 5},
		{Temp: 1.5, TopK: 100, MinP: 0.02},
		{Temp: 1, MinP: 0.1},
		{Temp: 1},
		{},
		{RepeatPenalty: 1.3, RepeatLastN: 16},
	}
	draws := 0
	for trial := range 300 {
		n := 1 + rng.IntN(3000)
		if trial%25 == 0 {
			n = 32000
		}
		row := tokenTestLogits(rng, n+1, trial%5)
		logits := row[trial%2:][:n] // rows that start off an 8-byte boundary too
		history := make([]int32, 1+rng.IntN(80))
		for i := range history {
			history[i] = int32(rng.IntN(n + 2)) // a few out of range: ignored
		}
		for _, opts := range configs {
			seed := rng.Uint64()
			opts.Seed = seed
			s := NewSampler(opts, nil)
			ref := rand.New(rand.NewPCG(seed, seed))
			for d := range 4 {
				got, want := s.Sample(logits, history), refSample(opts, logits, history, ref)
				if got != want {
					t.Fatalf("trial %d (n %d, shape %d) %+v draw %d: token %d, reference %d", trial, n, trial%5, opts, d, got, want)
				}
				draws++
			}
		}
	}
	t.Logf("%d draws agree", draws)
}
