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
	v := byteLevelVocab(n, "llama-bpe", nSpecialBPE, llama3Specials, func(k int) string {
		return fmt.Sprintf("<|reserved_special_token_%d|>", k+5)
	})
	v.EOS = v.BOS + 1
	return v
}

// qwenSpecials are the first of Qwen2.5's added tokens (ids 151643...); the rest of a
// padded vocabulary are <|extra_N|>.
var qwenSpecials = []string{
	"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
	"<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
	"<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
}

// nSpecialQwen is the number of control tokens at the end of a Qwen vocabulary (the
// added tokens and padding, for Qwen2.5's 152064).
const nSpecialQwen = 421

// qwenVocab builds a Qwen-style byte-level BPE vocabulary (tokenizer.ggml.pre "qwen2",
// no BOS added) like bpeVocab, with Qwen's control tokens: <|endoftext|> is BOS and
// EOS, as in Qwen's GGUF files.
func qwenVocab(n int) *Vocab {
	v := byteLevelVocab(n, "qwen2", nSpecialQwen, qwenSpecials, func(k int) string {
		return fmt.Sprintf("<|extra_%d|>", k)
	})
	v.EOS, v.NoBOS = v.BOS, true
	return v
}

// byteLevelVocab builds a byte-level BPE vocabulary of n tokens: the 256 byte
// characters, merged pieces with one merge rule each, then up to nSpecial control
// tokens, specials first and filler(k) for the k-th of the rest. BOS is the first
// control token.
func byteLevelVocab(n int, pre string, nSpecial int, specials []string, filler func(k int) string) *Vocab {
	nSpecial = min(nSpecial, n-257)
	v := &Vocab{Model: VocabBPE, Pre: pre, UNK: -1}
	base := make([]string, 0, 256)
	for _, r := range byteRunes() {
		base = append(base, string(r))
	}
	v.Tokens = growPieces(base, n-nSpecial, &v.Merges)
	v.Types = make([]int32, len(v.Tokens), n)
	for i := range v.Types {
		v.Types[i] = TokenNormal
	}
	v.BOS = int32(len(v.Tokens))
	for i := 0; i < nSpecial; i++ {
		text := ""
		if i < len(specials) {
			text = specials[i]
		} else {
			text = filler(i - len(specials))
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
