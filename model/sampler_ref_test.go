package model

import (
	"math"
	"slices"
)

// refCandidates is the sampler chain written the plain way (the implementation the fast
// Sampler replaced): copy the whole vocabulary, penalise, sort it all for top-k or
// top-p, filter, scale, softmax. The fast Sampler must give the same candidates in the
// same order.
func refCandidates(opts SamplerOptions, logits []float32, history []int32) []candidate {
	cand := make([]candidate, 0, len(logits))
	for i, l := range logits {
		cand = append(cand, candidate{id: int32(i), logit: l})
	}
	if pen := opts.RepeatPenalty; opts.RepeatLastN > 0 && pen != 0 && pen != 1 && len(history) > 0 {
		seen := map[int32]bool{}
		for _, t := range history[max(0, len(history)-opts.RepeatLastN):] {
			seen[t] = true
		}
		for i := range cand {
			if !seen[cand[i].id] {
				continue
			}
			if cand[i].logit <= 0 {
				cand[i].logit *= pen
			} else {
				cand[i].logit /= pen
			}
		}
	}
	if opts.Temp <= 0 {
		best := cand[0]
		for _, c := range cand[1:] {
			if c.logit > best.logit {
				best = c
			}
		}
		best.p = 1
		return []candidate{best}
	}
	sorted := false
	if opts.TopK > 0 {
		slices.SortFunc(cand, byLogit)
		cand = cand[:min(opts.TopK, len(cand))]
		sorted = true
	}
	if p := opts.TopP; p > 0 && p < 1 {
		if !sorted {
			slices.SortFunc(cand, byLogit)
		}
		softmax(cand)
		var cum float32
		for i, c := range cand {
			cum += c.p
			if cum >= p {
				cand = cand[:i+1]
				break
			}
		}
	}
	if opts.MinP > 0 {
		maxL := float32(math.Inf(-1))
		for _, c := range cand {
			maxL = max(maxL, c.logit)
		}
		floor := maxL + float32(math.Log(float64(opts.MinP)))
		kept := cand[:0]
		for _, c := range cand {
			if c.logit >= floor {
				kept = append(kept, c)
			}
		}
		cand = kept
	}
	for i := range cand {
		cand[i].logit /= opts.Temp
	}
	softmax(cand)
	return cand
}
