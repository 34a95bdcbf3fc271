package tokenizer

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Parallel encoding of long texts (a perplexity corpus), token for token what Encode
// returns.
//
// SentencePiece merges never cross a position where no token of the vocabulary spans
// it: the merge of two symbols is a substring that is a token, so a symbol ending there
// and one starting there are never merged, and the merges on either side depend only
// on that side (they are taken by score, then leftmost, which orders each side alone
// the same way). The text is cut at such positions, preferably after a newline, and
// the pieces are encoded separately. Byte-level BPE merges stay within the words of the
// pre-tokenizer, which is cheap beside them: the words are found first, then merged in
// parallel.

// parallelMin is the shortest text EncodeParallel splits.
const parallelMin = 64 << 10

// EncodeParallel returns what Encode(text, addSpecial) returns, computed on up to
// workers goroutines. Texts shorter than 64 KiB, or workers below 2, take Encode's
// path.
func (t *Tokenizer) EncodeParallel(text string, addSpecial bool, workers int) []int32 {
	if workers < 2 || len(text) < parallelMin {
		return t.Encode(text, addSpecial)
	}
	out := make([]int32, 0, len(text)/3+2)
	if addSpecial && t.flags.bos {
		out = append(out, t.bos)
	}
	prevSpecial := true // as in Encode
	for _, s := range t.partition(text) {
		switch {
		case s.id != NoToken:
			out = append(out, s.id)
			prevSpecial = true
		case t.spm:
			if t.flags.spacePrefix && prevSpecial {
				s.text = " " + s.text
			}
			out = t.spmEncodeParallel(out, strings.ReplaceAll(s.text, " ", spaceMark), workers)
			prevSpecial = false
		default:
			out = t.bpeEncodeParallel(out, s.text, workers)
		}
	}
	if addSpecial && t.flags.eos {
		out = append(out, t.eos)
	}
	return out
}

// spmEncodeParallel appends the tokens of text (spaces escaped), encoding the pieces
// between safe cuts on up to workers goroutines.
func (t *Tokenizer) spmEncodeParallel(dst []int32, text string, workers int) []int32 {
	if len(text) < parallelMin {
		return t.spmEncode(dst, text)
	}
	maxLen := 0
	for _, tok := range t.tokens {
		maxLen = max(maxLen, len(tok))
	}
	bounds := []int{0}
	pieces := 4 * workers // more pieces than workers, to even out their lengths
	for i := 1; i < pieces; i++ {
		if c := t.spmCut(text, i*len(text)/pieces, maxLen); c > bounds[len(bounds)-1] && c < len(text) {
			bounds = append(bounds, c)
		}
	}
	bounds = append(bounds, len(text))
	return parallelParts(dst, len(bounds)-1, workers, func(i int) []int32 {
		return t.spmEncode(nil, text[bounds[i]:bounds[i+1]])
	})
}

// spmCut returns the first position at or after from, just after a newline, where the
// text can be cut (spmSafeCut), looking at most 64 KiB ahead; -1 if there is none.
func (t *Tokenizer) spmCut(text string, from, maxLen int) int {
	end := min(len(text), from+64<<10)
	for p := from; p < end; {
		i := strings.IndexByte(text[p:end], '\n')
		if i < 0 {
			return -1
		}
		c := p + i + 1
		if t.spmSafeCut(text, c, maxLen) {
			return c
		}
		p = c
	}
	return -1
}

// spmSafeCut reports whether no token of the vocabulary (at most maxLen bytes) is a
// run of whole characters of text that starts before c and ends after it.
func (t *Tokenizer) spmSafeCut(text string, c, maxLen int) bool {
	if c <= 0 || c >= len(text) || !utf8.RuneStart(text[c]) {
		return false
	}
	for a := max(0, c-maxLen+1); a < c; a++ {
		if !utf8.RuneStart(text[a]) {
			continue
		}
		for b := c + 1; b <= min(len(text), a+maxLen); b++ {
			if b < len(text) && !utf8.RuneStart(text[b]) {
				continue
			}
			if _, ok := t.ids[text[a:b]]; ok {
				return false
			}
		}
	}
	return true
}

// bpeEncodeParallel appends the tokens of text: its words are found first, then merged
// in contiguous runs on up to workers goroutines.
func (t *Tokenizer) bpeEncodeParallel(dst []int32, text string, workers int) []int32 {
	words := t.pre.preTokenize(text)
	n := min(len(words), 4*workers)
	if n < 2 {
		return t.bpeEncode(dst, text)
	}
	return parallelParts(dst, n, workers, func(i int) []int32 {
		s := &bpeSession{t: t, heap: bigramHeap[bpeBigram]{}}
		var out []int32
		for _, w := range words[i*len(words)/n : (i+1)*len(words)/n] {
			out = s.word(out, w)
		}
		return out
	})
}

// parallelParts appends to dst the results of encode(0), ..., encode(n-1), computed on
// up to workers goroutines.
func parallelParts(dst []int32, n, workers int, encode func(i int) []int32) []int32 {
	parts := make([][]int32, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				parts[i] = encode(i)
			}
		})
	}
	wg.Wait()
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return dst
}
