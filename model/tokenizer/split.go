package tokenizer

// The GPT-2 and Llama-3 pre-tokenizer regexes, written out as scanners in the shape
// of llama.cpp's unicode_regex_split_custom_gpt2 / _llama3 (which is what llama.cpp
// runs for these regexes, so corner cases follow it rather than a regex engine).

// splitGPT2 is 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func splitGPT2(cpts []rune, lens []int) []int {
	return eachFragment(cpts, lens, func(f *fragment) {
		for pos := f.ini; pos < f.end; {
			pos = f.gpt2Piece(pos)
		}
	})
}

// gpt2Piece emits the piece that starts at pos and returns where the next begins.
func (f *fragment) gpt2Piece(pos int) int {
	c := f.at(pos)
	if n := f.contraction(pos, false); n > 0 {
		return pos + f.emit(pos+n)
	}
	p := pos
	if c == ' ' {
		p++ // optional leading space of the next three alternatives
	}
	if q := f.run(p, f.isLetterAt); q > p {
		f.emit(q)
		return q
	}
	if q := f.run(p, f.isNumberAt); q > p {
		f.emit(q)
		return q
	}
	if q := f.run(p, f.isOtherAt); q > p {
		f.emit(q)
		return q
	}
	return f.spaces(pos, false)
}

// splitLlama3 is (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitLlama3(cpts []rune, lens []int) []int { return splitLlama3Digits(cpts, lens, 3) }

// splitQwen2 is the Llama-3 regex with \p{N} instead of \p{N}{1,3}: every digit is a
// piece. llama.cpp runs it through std::regex on collapsed codepoints, where the
// classes mean what isLetter, isNumber and isSpace say, so the Llama-3 scanner with
// runs of one digit gives the same pieces.
func splitQwen2(cpts []rune, lens []int) []int { return splitLlama3Digits(cpts, lens, 1) }

// splitLlama3Digits is the Llama-3 scanner cutting digits into runs of at most digits.
func splitLlama3Digits(cpts []rune, lens []int, digits int) []int {
	return eachFragment(cpts, lens, func(f *fragment) {
		for pos := f.ini; pos < f.end; {
			pos = f.llama3Piece(pos, digits)
		}
	})
}

// llama3Piece emits the piece(s) that start at pos and returns where the next begins;
// numbers are cut into runs of at most digits.
func (f *fragment) llama3Piece(pos, digits int) int {
	c := f.at(pos)
	if n := f.contraction(pos, true); n > 0 {
		return pos + f.emit(pos+n)
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c != '\r' && c != '\n' && !isNumber(c) && (isLetter(c) || f.isLetterAt(pos+1)) {
		q := f.run(pos+1, f.isLetterAt)
		f.emit(q)
		return q
	}
	// \p{N}{1,digits}
	if isNumber(c) {
		q := pos
		for ini := pos; f.isNumberAt(q); {
			if q++; q-ini >= digits {
				f.emit(q)
				ini = q
			}
		}
		f.emit(q)
		return q
	}
	// ' '?[^\s\p{L}\p{N}]+[\r\n]*
	p := pos
	if c == ' ' {
		p++
	}
	if q := f.run(p, f.isOtherAt); q > p {
		for d := f.at(q); d == '\r' || d == '\n'; d = f.at(q) {
			q++
		}
		f.emit(q)
		return q
	}
	return f.spaces(pos, true)
}

// contraction returns the length of 's|'t|'re|'ve|'m|'ll|'d at pos, or 0;
// foldCase makes the letters case-insensitive (llama3).
func (f *fragment) contraction(pos int, foldCase bool) int {
	if f.at(pos) != '\'' || pos+1 >= f.end {
		return 0
	}
	lower := func(r rune) rune {
		if foldCase && r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	a := lower(f.at(pos + 1))
	if a == 's' || a == 't' || a == 'm' || a == 'd' {
		return 2
	}
	if pos+2 >= f.end {
		return 0
	}
	b := lower(f.at(pos + 2))
	if (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l') {
		return 3
	}
	return 0
}

// spaces handles the whitespace alternatives at pos: with newlines (llama3 only)
// \s*[\r\n]+, then \s+(?!\S), then \s+; anything else is a one-codepoint piece.
func (f *fragment) spaces(pos int, newlines bool) int {
	n, lastNL := 0, -1
	for f.isSpaceAt(pos + n) {
		if d := f.at(pos + n); newlines && (d == '\r' || d == '\n') {
			lastNL = pos + n + 1
		}
		n++
	}
	switch {
	case lastNL >= 0:
		pos = lastNL
	case n > 1 && f.in(pos+n):
		pos += n - 1 // leave the last space to prefix the next word
	case n > 0:
		pos += n
	default:
		pos++
	}
	f.emit(pos)
	return pos
}

// run returns the end of the run of positions from p that satisfy in.
func (f *fragment) run(p int, in func(int) bool) int {
	for in(p) {
		p++
	}
	return p
}

func (f *fragment) isLetterAt(p int) bool { return f.in(p) && isLetter(f.cpts[p]) }
func (f *fragment) isNumberAt(p int) bool { return f.in(p) && isNumber(f.cpts[p]) }
func (f *fragment) isSpaceAt(p int) bool  { return f.in(p) && isSpace(f.cpts[p]) }

// isOtherAt is [^\s\p{L}\p{N}] inside the fragment.
func (f *fragment) isOtherAt(p int) bool {
	if !f.in(p) {
		return false
	}
	r := f.cpts[p]
	return !isSpace(r) && !isLetter(r) && !isNumber(r)
}
