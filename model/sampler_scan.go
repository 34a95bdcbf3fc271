package model

import "math"

// The passes over the whole vocabulary (the argmax, the top-k heap, the min-p filter)
// look for the few logits above a threshold among 32k to 152k. They test blocks of 8
// logits with one chain of comparisons, which the branch predictor learns to skip, and
// check the rare block that holds one logit by logit.

// blockSize is how many logits blockAbove tests at once.
const blockSize = 8

// blockAbove returns the start of the first block of blockSize logits from i on that
// holds one greater than thr, or the start of the last, shorter block (len(logits)
// when there is none): every logit it skips is <= thr, or NaN. thr must not be NaN.
func blockAbove(logits []float32, i int, thr float32) int {
	for ; i+blockSize <= len(logits); i += blockSize {
		s := (*[blockSize]float32)(logits[i : i+blockSize])
		if s[0] > thr || s[1] > thr || s[2] > thr || s[3] > thr || s[4] > thr || s[5] > thr || s[6] > thr || s[7] > thr {
			return i
		}
	}
	return i
}

// beats reports whether logit l beats the threshold thr in byLogit's order for a later
// id: it is greater, or it is a number and thr is NaN.
func beats(l, thr float32) bool {
	return l > thr || thr != thr && l == l
}

// argmaxLogit returns the index of the largest logit, the lowest on ties; NaN loses to
// any number. logits must not be empty.
func argmaxLogit(logits []float32) int32 {
	best, bv := 0, logits[0]
	for i := 1; i < len(logits); {
		if bv == bv {
			i = blockAbove(logits, i, bv)
		}
		for end := min(i+blockSize, len(logits)); i < end; i++ {
			if l := logits[i]; beats(l, bv) {
				best, bv = i, l
			}
		}
	}
	return int32(best)
}

// maxLogit returns the largest logit, NaN only when every logit is NaN.
func maxLogit(logits []float32) float32 {
	return logits[argmaxLogit(logits)]
}

// appendAtLeast appends to cand, in id order, the logits >= floor (not NaN).
func appendAtLeast(cand []candidate, logits []float32, floor float32) []candidate {
	if floor != floor {
		return cand
	}
	thr := math.Nextafter32(floor, float32(math.Inf(-1))) // x > thr is x >= floor
	if math.IsInf(float64(floor), -1) {
		for i, l := range logits {
			if l == l {
				cand = append(cand, candidate{id: int32(i), logit: l})
			}
		}
		return cand
	}
	for i := 0; i < len(logits); {
		i = blockAbove(logits, i, thr)
		for end := min(i+blockSize, len(logits)); i < end; i++ {
			if l := logits[i]; l >= floor {
				cand = append(cand, candidate{id: int32(i), logit: l})
			}
		}
	}
	return cand
}
