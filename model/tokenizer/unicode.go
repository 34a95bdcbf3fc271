package tokenizer

import "unicode"

// This file holds the Unicode helpers llama.cpp's src/unicode.cpp provides: its
// lenient UTF-8 decoder, codepoint categories, and GPT-2's byte-to-unicode map.

// utf8Len is the length of the UTF-8 sequence that starts with lead byte b, judged
// from its high nibble only (unicode_len_utf8): continuation and invalid bytes count 1.
func utf8Len(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// decodeCpts splits s into codepoints the way unicode_cpts_from_utf8 does: it checks
// lead and continuation bits only (overlong forms and surrogates pass), and each byte
// that starts no valid sequence becomes U+FFFD.
func decodeCpts(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := decodeCpt(s, i)
		out = append(out, r)
		i += n
	}
	return out
}

// decodeCpt decodes one codepoint at s[i], returning it and the bytes it used.
func decodeCpt(s string, i int) (rune, int) {
	b := s[i]
	var n int
	var r rune
	switch {
	case b&0x80 == 0:
		return rune(b), 1
	case b&0x40 == 0:
		return unicode.ReplacementChar, 1
	case b&0x20 == 0:
		n, r = 2, rune(b&0x1f)
	case b&0x10 == 0:
		n, r = 3, rune(b&0x0f)
	case b&0x08 == 0:
		n, r = 4, rune(b&0x07)
	default:
		return unicode.ReplacementChar, 1
	}
	if i+n > len(s) {
		return unicode.ReplacementChar, 1
	}
	for k := 1; k < n; k++ {
		c := s[i+k]
		if c&0xc0 != 0x80 {
			return unicode.ReplacementChar, 1
		}
		r = r<<6 | rune(c&0x3f)
	}
	return r, n
}

// appendCpt appends r in UTF-8 as unicode_cpt_to_utf8 does, surrogates included.
// llama.cpp throws for codepoints past U+10FFFF (only 4-byte leads F5..F7 make them);
// they are written as U+FFFD here.
func appendCpt(dst []byte, r rune) []byte {
	switch {
	case r < 0:
		r = unicode.ReplacementChar
	case r <= 0x7f:
		return append(dst, byte(r))
	case r <= 0x7ff:
		return append(dst, 0xc0|byte(r>>6), 0x80|byte(r&0x3f))
	case r > 0x10ffff:
		r = unicode.ReplacementChar
	}
	if r <= 0xffff {
		return append(dst, 0xe0|byte(r>>12), 0x80|byte(r>>6&0x3f), 0x80|byte(r&0x3f))
	}
	return append(dst, 0xf0|byte(r>>18), 0x80|byte(r>>12&0x3f), 0x80|byte(r>>6&0x3f), 0x80|byte(r&0x3f))
}

// isSpace is the regex class \s of llama.cpp's tables (the Unicode White_Space property).
func isSpace(r rune) bool { return r >= 0 && r <= unicode.MaxRune && unicode.IsSpace(r) }

// isLetter is \p{L}.
func isLetter(r rune) bool { return r >= 0 && r <= unicode.MaxRune && unicode.IsLetter(r) }

// isNumber is \p{N}.
func isNumber(r rune) bool { return r >= 0 && r <= unicode.MaxRune && unicode.IsNumber(r) }

// isPunct is \p{P}.
func isPunct(r rune) bool { return r >= 0 && r <= unicode.MaxRune && unicode.IsPunct(r) }

// byteRunes is GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves,
// the other 68 bytes to U+0100 upwards in byte order.
var byteRunes = func() (m [256]rune) {
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff) {
			m[b] = rune(b)
			continue
		}
		m[b] = 256 + n
		n++
	}
	return m
}()

// runeBytes inverts byteRunes; -1 marks runes that encode no byte.
var runeBytes = func() (m [324]int16) {
	for i := range m {
		m[i] = -1
	}
	for b, r := range byteRunes {
		m[r] = int16(b)
	}
	return m
}()

// byteEncode appends the GPT-2 byte-level encoding of raw to dst.
func byteEncode(dst []byte, raw []byte) []byte {
	for _, b := range raw {
		dst = appendCpt(dst, byteRunes[b])
	}
	return dst
}
