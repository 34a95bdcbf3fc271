package tokenizer

// Byte-level BPE encoding, as llama.cpp's llm_tokenizer_bpe_session: the text is
// pre-tokenized into byte-encoded words; in each word the adjacent pair with the
// lowest merge rank is merged, leftmost first on ties, until no pair has a rank.

// bpeBigram is a candidate merge of symbols left and right.
type bpeBigram struct {
	left, right int32
	rank        int32
	size        int32 // bytes of the merged text, to detect stale candidates
}

// before is llm_bigram_bpe's order: lower rank first, then lower left.
func (a bpeBigram) before(b bpeBigram) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
}

// bpeSession holds the scratch space of one Encode call.
type bpeSession struct {
	t    *Tokenizer
	syms []symbol
	heap bigramHeap[bpeBigram]
	key  []byte
}

// bpeEncode appends the tokens of text.
func (t *Tokenizer) bpeEncode(dst []int32, text string) []int32 {
	s := &bpeSession{t: t, heap: bigramHeap[bpeBigram]{}}
	for _, w := range t.pre.preTokenize(text) {
		dst = s.word(dst, w)
	}
	return dst
}

// word appends the tokens of one byte-encoded word.
func (s *bpeSession) word(dst []int32, w string) []int32 {
	t := s.t
	if id, ok := t.ids[w]; ok && t.pre.ignoreMerges {
		return append(dst, id)
	}
	s.syms = s.syms[:0]
	for off := 0; off < len(w); {
		n := min(utf8Len(w[off]), len(w)-off)
		i := int32(len(s.syms))
		s.syms = append(s.syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: i + 1})
		off += n
	}
	if len(s.syms) == 0 {
		return dst
	}
	s.syms[len(s.syms)-1].next = -1
	s.heap.items = s.heap.items[:0]
	for i := int32(1); i < int32(len(s.syms)); i++ {
		s.try(w, i-1, i)
	}
	s.merge(w)
	for i := int32(0); i != -1; i = s.syms[i].next {
		dst = t.bpeSegment(dst, w[s.syms[i].start:s.syms[i].start+s.syms[i].n])
	}
	return dst
}

// merge applies queued merges until none is left.
func (s *bpeSession) merge(w string) {
	for len(s.heap.items) > 0 {
		b := s.heap.pop()
		l, r := &s.syms[b.left], &s.syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			s.syms[r.next].prev = b.left
		}
		s.try(w, l.prev, b.left)
		s.try(w, b.left, l.next)
	}
}

// try queues the merge of symbols left and right if "left right" is a merge.
func (s *bpeSession) try(w string, left, right int32) {
	if left < 0 || right < 0 {
		return
	}
	l, r := s.syms[left], s.syms[right]
	s.key = append(s.key[:0], w[l.start:l.start+l.n]...)
	s.key = append(s.key, ' ')
	s.key = append(s.key, w[r.start:r.start+r.n]...)
	rank, ok := s.t.ranks[string(s.key)]
	if !ok {
		return
	}
	s.heap.push(bpeBigram{left: left, right: right, rank: rank, size: l.n + r.n})
}

// bpeSegment appends the token of one final symbol; when it is not a token, each of
// its bytes that is a one-byte token (llama.cpp's fallback; others are dropped).
func (t *Tokenizer) bpeSegment(dst []int32, s string) []int32 {
	if id, ok := t.ids[s]; ok {
		return append(dst, id)
	}
	for i := 0; i < len(s); i++ {
		if id, ok := t.ids[s[i:i+1]]; ok {
			dst = append(dst, id)
		}
	}
	return dst
}
