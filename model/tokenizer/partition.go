package tokenizer

import "strings"

// A span is a piece of the input: raw text still to tokenize, or a special token
// already cut out of it (id != NoToken).
type span struct {
	text string
	id   int32
}

// partition cuts the candidate special tokens out of text, longest first, as
// llama.cpp's tokenizer_st_partition does; a token with the lstrip / rstrip
// attribute also swallows the whitespace before / after it.
func (t *Tokenizer) partition(text string) []span {
	spans := []span{{text: text, id: NoToken}}
	for _, id := range t.splitters {
		var next []span
		for _, s := range spans {
			if s.id != NoToken {
				next = append(next, s)
				continue
			}
			next = t.cut(next, s.text, id)
		}
		spans = next
	}
	return spans
}

// cut appends to dst the spans of raw text with every occurrence of token id cut out.
func (t *Tokenizer) cut(dst []span, raw string, id int32) []span {
	tok := t.tokens[id]
	a := t.attrs[id]
	for raw != "" {
		i := strings.Index(raw, tok)
		if i < 0 {
			break
		}
		left := raw[:i]
		if a&attrLStrip != 0 {
			left = strings.TrimRight(left, cSpace)
		}
		if left != "" {
			dst = append(dst, span{text: left, id: NoToken})
		}
		dst = append(dst, span{id: id})
		raw = raw[i+len(tok):]
		if a&attrRStrip != 0 {
			raw = strings.TrimLeft(raw, cSpace)
		}
	}
	if raw != "" {
		dst = append(dst, span{text: raw, id: NoToken})
	}
	return dst
}

// cSpace is the set C's isspace accepts.
const cSpace = " \t\n\v\f\r"
