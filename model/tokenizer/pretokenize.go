package tokenizer

import "fmt"

// A splitter refines a split of cpts: lens are the lengths, in codepoints, of
// consecutive fragments covering cpts; it returns the lengths of the finer pieces.
// Each splitter is a hand-written equivalent of one regex of llama.cpp's
// unicode_regex_split: the matches and the gaps between them both become pieces.
type splitter func(cpts []rune, lens []int) []int

// preTokenizer is a named chain of splitters and the vocabulary flags that go with
// it in llama.cpp's llama_vocab::impl::load.
type preTokenizer struct {
	name         string
	split        []splitter
	ignoreMerges bool // a whole word that is a token is taken as is
	addBOS       bool // default of tokenizer.ggml.add_bos_token
}

// preTokenizerFor returns the pre-tokenizer llama.cpp selects for tokenizer.ggml.pre
// (an empty name means "default", as llama.cpp assumes with a warning).
func preTokenizerFor(pre string) (preTokenizer, error) {
	switch pre {
	case "", "default":
		// llama.cpp's fallback regex list (LLAMA_VOCAB_PRE_TYPE_DEFAULT):
		// [\p{P}\$\+<=>\^~\|]+, the GPT-2 regex, \p{N}+ and [0-9][0-9][0-9].
		split := []splitter{splitRuns(isDefaultPunct), splitGPT2, splitRuns(isDigitLike), splitDigits3}
		return preTokenizer{name: "default", split: split}, nil
	case "gpt-2", "phi-2", "gigachat", "a.x-4.0", "mellum", "exaone4",
		"mpt", "olmo", "jais", "trillion", "granite-docling":
		return preTokenizer{name: pre, split: []splitter{splitGPT2}}, nil
	case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
		"midm-2.0", "lfm2", "jina-v5-nano":
		return preTokenizer{name: pre, split: []splitter{splitLlama3}, ignoreMerges: true, addBOS: true}, nil
	case "qwen2", "deepseek-r1-qwen", "kormo":
		return preTokenizer{name: pre, split: []splitter{splitQwen2}}, nil
	case "dbrx", "smaug-bpe":
		return preTokenizer{name: pre, split: []splitter{splitLlama3}}, nil
	}
	return preTokenizer{}, fmt.Errorf("tokenizer: unsupported pre-tokenizer %q", pre)
}

// preTokenize splits text into words and returns each word GPT-2 byte-encoded, as
// unicode_regex_split does.
func (p preTokenizer) preTokenize(text string) []string {
	words := p.words(text)
	var enc []byte
	for i, w := range words {
		enc = byteEncode(enc[:0], []byte(w))
		words[i] = string(enc)
	}
	return words
}

// words splits text into pre-tokenizer words; invalid UTF-8 reaches them as U+FFFD.
func (p preTokenizer) words(text string) []string {
	cpts := decodeCpts(text)
	if len(cpts) == 0 {
		return nil
	}
	lens := []int{len(cpts)}
	for _, s := range p.split {
		lens = s(cpts, lens)
	}
	words := make([]string, 0, len(lens))
	var raw []byte
	start := 0
	for _, n := range lens {
		raw = raw[:0]
		for _, r := range cpts[start : start+n] {
			raw = appendCpt(raw, r)
		}
		words = append(words, string(raw))
		start += n
	}
	return words
}

// fragment gives a splitter bounded access to one fragment cpts[ini:end]: positions
// outside it read as "no codepoint", as the _get_cpt/_get_flags lambdas do.
type fragment struct {
	cpts     []rune
	ini, end int
	prev     int   // end of the last piece emitted
	out      []int // piece lengths
}

// in reports whether pos lies in the fragment.
func (f *fragment) in(pos int) bool { return pos >= f.ini && pos < f.end }

// at returns the codepoint at pos, or -1 outside the fragment.
func (f *fragment) at(pos int) rune {
	if f.in(pos) {
		return f.cpts[pos]
	}
	return -1
}

// emit ends a piece at end and returns its length (zero-length pieces are dropped).
func (f *fragment) emit(end int) int {
	n := end - f.prev
	if n > 0 {
		f.out = append(f.out, n)
	}
	f.prev = end
	return n
}

// eachFragment runs scan over every fragment of lens and collects the pieces.
func eachFragment(cpts []rune, lens []int, scan func(f *fragment)) []int {
	f := &fragment{cpts: cpts, out: make([]int, 0, len(lens))}
	start := 0
	for _, n := range lens {
		f.ini, f.end, f.prev = start, start+n, start
		scan(f)
		start += n
	}
	return f.out
}

// splitRuns splits each fragment into maximal runs of codepoints that satisfy in and
// the gaps between them: the regex [class]+.
func splitRuns(in func(rune) bool) splitter {
	return func(cpts []rune, lens []int) []int {
		return eachFragment(cpts, lens, func(f *fragment) {
			for pos := f.ini; pos < f.end; {
				want := in(f.cpts[pos])
				for pos < f.end && in(f.cpts[pos]) == want {
					pos++
				}
				f.emit(pos)
			}
		})
	}
}

// isDefaultPunct is the class [\p{P}\$\+<=>\^~\|] as llama.cpp's collapsed regex
// sees it: every ASCII punctuation or symbol except '`', and non-ASCII \p{P}.
func isDefaultPunct(r rune) bool {
	if r < 0x80 {
		return r > ' ' && r < 0x7f && r != '`' && !isAlnumASCII(r)
	}
	return !isSpace(r) && isPunct(r)
}

// isDigitLike is \p{N} as the collapsed regex sees it.
func isDigitLike(r rune) bool {
	if r < 0x80 {
		return r >= '0' && r <= '9'
	}
	return !isSpace(r) && isNumber(r)
}

// isAlnumASCII reports an ASCII letter or digit.
func isAlnumASCII(r rune) bool {
	return (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

// splitDigits3 is the regex [0-9][0-9][0-9]: leftmost runs of three ASCII digits.
func splitDigits3(cpts []rune, lens []int) []int {
	isDigit := func(r rune) bool { return r >= '0' && r <= '9' }
	return eachFragment(cpts, lens, func(f *fragment) {
		for pos := f.ini; pos+3 <= f.end; {
			if isDigit(f.cpts[pos]) && isDigit(f.cpts[pos+1]) && isDigit(f.cpts[pos+2]) {
				f.emit(pos)
				pos += 3
				f.emit(pos)
				continue
			}
			pos++
		}
		f.emit(f.end)
	})
}
