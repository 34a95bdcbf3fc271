package model

import (
	"math"
	"unsafe"
)

// The passes over the whole vocabulary (the argmax, the top-k heap, the min-p filter)
// look for the few logits above a threshold among 32k to 152k. blockAbove tests blocks
// of 16 logits at once, two to a 64-bit word, with integer arithmetic on their bits and
// no branch but one a block (SWAR), and the caller checks the rare block that holds one
// logit by logit.

// blockSize is how many logits blockAbove tests at once: 8 words of two.
const blockSize = 16

// Masks over the two 32-bit lanes of a word.
const (
	laneSigns = 0x8000000080000000 // the sign bit of each lane
	laneMags  = 0x7fffffff7fffffff // the other 31 bits
	laneOnes  = 0x0000000100000001 // multiplies a 32-bit value into both lanes
)

// blockAbove returns the start of the first block of blockSize logits from i on that
// may hold one greater than thr, or the start of the last, shorter block (at most
// len(logits) when there is none): every logit it skips is <= thr, or NaN. thr must
// not be NaN.
func blockAbove(logits []float32, i int, thr float32) int {
	if i >= len(logits) {
		return i
	}
	if uintptr(unsafe.Pointer(&logits[i]))%8 != 0 { // words start 8-byte aligned
		if !(logits[i] <= thr) {
			return i
		}
		i++
		if i == len(logits) {
			return i
		}
	}
	words := unsafe.Slice((*uint64)(unsafe.Pointer(&logits[i])), (len(logits)-i)/2)
	t := uint64(math.Float32bits(thr))
	var j int
	if t < 1<<31 {
		j = wordsAbovePositive(words, (0x7fffffff-t)*laneOnes, laneSigns)
	} else {
		j = wordsAboveNegative(words, (0x80000000-(t&0x7fffffff))*laneOnes, laneSigns, laneMags)
	}
	return i + 2*j
}

// wordsAbovePositive returns the first block of 8 words (blocks from 0) with a lane
// that may be greater than a threshold thr >= +0, or the start of the words left over.
// c holds 0x7fffffff - bits(thr) in each lane: a lane x with the sign clear is greater
// exactly when x + c carries into bit 31; a lane with the sign set is not, and its sum
// may carry into the next lane, making it pass only when it equals thr.
// The masks come as arguments so they stay in registers.
func wordsAbovePositive(words []uint64, c, signs uint64) int {
	j := 0
	for ; j+8 <= len(words); j += 8 {
		w := (*[8]uint64)(words[j : j+8])
		a := (w[0]+c)&^w[0] | (w[1]+c)&^w[1] | (w[2]+c)&^w[2] | (w[3]+c)&^w[3] |
			(w[4]+c)&^w[4] | (w[5]+c)&^w[5] | (w[6]+c)&^w[6] | (w[7]+c)&^w[7]
		if a&signs != 0 {
			break
		}
	}
	return j
}

// wordsAboveNegative is wordsAbovePositive for a threshold thr <= -0. c holds
// 0x80000000 - |bits(thr)| in each lane: a lane with the sign set is at most thr
// exactly when its magnitude plus c carries into bit 31; with the sign clear it is
// greater (or +0 against -0). A block passes unless every lane is negative and at
// most thr.
func wordsAboveNegative(words []uint64, c, signs, mags uint64) int {
	j := 0
	for ; j+8 <= len(words); j += 8 {
		w := (*[8]uint64)(words[j : j+8])
		a := w[0] & (w[0]&mags + c) & w[1] & (w[1]&mags + c) & w[2] & (w[2]&mags + c) & w[3] & (w[3]&mags + c) &
			w[4] & (w[4]&mags + c) & w[5] & (w[5]&mags + c) & w[6] & (w[6]&mags + c) & w[7] & (w[7]&mags + c)
		if a&signs != signs {
			break
		}
	}
	return j
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
