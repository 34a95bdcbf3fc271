package tokenizer

// SentencePiece-style encoding, as llama.cpp's llm_tokenizer_spm_session: the text
// is split into UTF-8 characters, then the adjacent pair whose concatenation is the
// highest-scoring token is merged, leftmost first on ties, until no pair is a token.
// Symbols that are not tokens fall back to byte tokens.

// symbol is a run text[start:start+n] of the text being merged (SPM) or of one word
// (BPE), in a doubly linked list; n == 0 once merged away.
type symbol struct {
	start, n, prev, next int32
}

// spmBigram is a candidate merge of symbols left and right into a token of score.
type spmBigram struct {
	left, right int32
	score       float32
	size        int32 // bytes of the merged text, to detect stale candidates
}

// before is llm_bigram_spm's order: higher score first, then lower left.
func (a spmBigram) before(b spmBigram) bool {
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}

// spmEncode appends the tokens of text, whose spaces are already escaped.
func (t *Tokenizer) spmEncode(dst []int32, text string) []int32 {
	if text == "" {
		return dst
	}
	syms := make([]symbol, 0, len(text))
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		i := int32(len(syms))
		syms = append(syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: i + 1})
		off += n
	}
	syms[len(syms)-1].next = -1
	h := bigramHeap[spmBigram]{items: make([]spmBigram, 0, len(syms))}
	for i := int32(1); i < int32(len(syms)); i++ {
		t.spmTry(&h, syms, text, i-1, i)
	}
	for len(h.items) > 0 {
		b := h.pop()
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		t.spmTry(&h, syms, text, l.prev, b.left)
		t.spmTry(&h, syms, text, b.left, l.next)
	}
	for i := int32(0); i != -1; i = syms[i].next {
		dst = t.spmSegment(dst, text[syms[i].start:syms[i].start+syms[i].n])
	}
	return dst
}

// spmTry queues the merge of symbols left and right if their text is a token.
func (t *Tokenizer) spmTry(h *bigramHeap[spmBigram], syms []symbol, text string, left, right int32) {
	if left < 0 || right < 0 {
		return
	}
	s := syms[left].start
	size := syms[left].n + syms[right].n
	id, ok := t.ids[text[s:s+size]]
	if !ok {
		return
	}
	h.push(spmBigram{left: left, right: right, score: t.scores[id], size: size})
}

// spmSegment appends the token of one final symbol, or its bytes' tokens. (A merged
// symbol is always a token, so llama.cpp's rev_merge resegmentation never applies.)
func (t *Tokenizer) spmSegment(dst []int32, s string) []int32 {
	if id, ok := t.ids[s]; ok {
		return append(dst, id)
	}
	for i := 0; i < len(s); i++ {
		if id := t.byteToken[s[i]]; id != NoToken {
			dst = append(dst, id)
		}
	}
	return dst
}
