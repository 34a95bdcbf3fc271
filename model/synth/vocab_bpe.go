package synth

import (
	"fmt"
	"strings"
)

// llama3Specials are the first special tokens of LLaMA 3 (ids 128000...); the rest of
// the 256 special ids are <|reserved_special_token_N|>.
var llama3Specials = []string{
	"<|begin_of_text|>",
	"<|end_of_text|>",
	"<|reserved_special_token_0|>",
	"<|reserved_special_token_1|>",
	"<|reserved_special_token_2|>",
	"<|reserved_special_token_3|>",
	"<|start_header_id|>",
	"<|end_header_id|>",
	"<|reserved_special_token_4|>",
	"<|eot_id|>",
}

// nSpecialBPE is the number of special tokens at the end of a LLaMA-3 vocabulary.
const nSpecialBPE = 256

// bpeVocab builds a LLaMA-3-style byte-level BPE vocabulary (tokenizer.ggml.pre
// "llama-bpe"): the 256 byte characters of GPT-2's byte-to-unicode table, merged pieces
// with one merge rule each, then 256 control tokens (<|begin_of_text|> = BOS,
// <|end_of_text|> = EOS, <|eot_id|>, reserved tokens).
func bpeVocab(n int) *Vocab {
	nSpecial := min(nSpecialBPE, n-257)
	v := &Vocab{Model: VocabBPE, Pre: "llama-bpe", UNK: -1}
	base := make([]string, 0, 256)
	for _, r := range byteRunes() {
		base = append(base, string(r))
	}
	v.Tokens = growPieces(base, n-nSpecial, &v.Merges)
	v.Types = make([]int32, len(v.Tokens), n)
	for i := range v.Types {
		v.Types[i] = TokenNormal
	}
	v.BOS, v.EOS = int32(len(v.Tokens)), int32(len(v.Tokens)+1)
	for i := 0; i < nSpecial; i++ {
		text := fmt.Sprintf("<|reserved_special_token_%d|>", i-len(llama3Specials)+5)
		if i < len(llama3Specials) {
			text = llama3Specials[i]
		}
		v.Tokens = append(v.Tokens, text)
		v.Types = append(v.Types, TokenControl)
	}
	return v
}

// byteRunes returns the 256 characters of GPT-2's byte-to-unicode table, those of the
// space and the lowercase letters by English frequency first, so that the early
// (frequent) merges look like English pieces ("Ġt", "he"), then the rest in byte order.
func byteRunes() []rune {
	t := ByteToUnicode()
	rs := make([]rune, 0, 256)
	first := " etaoinshrdlucmfwgypbvkjxqz"
	for _, b := range []byte(first) {
		rs = append(rs, t[b])
	}
	for b, r := range t {
		if !strings.ContainsRune(first, rune(b)) {
			rs = append(rs, r)
		}
	}
	return rs
}

// ByteToUnicode returns GPT-2's byte-level character for every byte value: the
// printable bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves, the other 68
// map to U+0100 onwards in byte order (so the space 0x20 is 'Ġ').
func ByteToUnicode() [256]rune {
	var t [256]rune
	next := rune(256)
	for b := 0; b < 256; b++ {
		if ('!' <= b && b <= '~') || ('¡' <= b && b <= '¬') || ('®' <= b && b <= 'ÿ') {
			t[b] = rune(b)
		} else {
			t[b] = next
			next++
		}
	}
	return t
}
