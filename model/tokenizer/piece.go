package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
)

// setPieces precomputes every token's piece.
func (t *Tokenizer) setPieces() {
	t.pieces = make([]string, len(t.tokens))
	for id := range t.tokens {
		t.pieces[id] = t.piece(int32(id))
	}
}

// piece is llama_vocab::impl::token_to_piece(special=false, lstrip=0).
func (t *Tokenizer) piece(id int32) string {
	a, text := t.attrs[id], t.tokens[id]
	switch {
	case a&(attrUnknown|attrControl) != 0:
		return ""
	case a&attrUserDefined != 0:
		return text
	case a&attrNormal != 0 && t.spm:
		return strings.ReplaceAll(text, spaceMark, " ")
	case a&attrNormal != 0:
		return byteDecode(text)
	case a&attrByte != 0:
		return string([]byte{tokenByte(text)})
	}
	return ""
}

// tokenByte is token_to_byte: the hex digits of "<0xXX>" (text[3:5], as strtol
// reads them: parsing stops at the first non-hex digit).
func tokenByte(text string) byte {
	if len(text) < 4 {
		return 0
	}
	hex := text[3:min(5, len(text))]
	for i := 0; i < len(hex); i++ {
		if _, err := strconv.ParseUint(hex[i:i+1], 16, 8); err != nil {
			hex = hex[:i]
			break
		}
	}
	v, _ := strconv.ParseUint(hex, 16, 8)
	return byte(v)
}

// byteDecode is llama_decode_text: it maps each codepoint of a GPT-2 byte-encoded
// token back to its byte; a codepoint that encodes no byte is written as llama.cpp
// does, "[UNK_BYTE_0x<hex of its UTF-8>" + text + "]".
func byteDecode(text string) string {
	var out []byte
	var buf []byte
	for _, r := range decodeCpts(text) {
		if r >= 0 && int(r) < len(runeBytes) && runeBytes[r] >= 0 {
			out = append(out, byte(runeBytes[r]))
			continue
		}
		buf = appendCpt(buf[:0], r)
		out = append(out, "[UNK_BYTE_0x"...)
		for _, c := range buf {
			out = fmt.Appendf(out, "%02x", c)
		}
		out = append(out, text...)
		out = append(out, ']')
	}
	return string(out)
}
