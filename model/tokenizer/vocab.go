package tokenizer

import (
	"errors"
	"fmt"
	"strconv"
)

// TokenType is a token's kind as GGUF stores it in tokenizer.ggml.token_type.
type TokenType int32

// Token types (llama.cpp's llama_token_type).
const (
	TypeUndefined   TokenType = 0
	TypeNormal      TokenType = 1
	TypeUnknown     TokenType = 2
	TypeControl     TokenType = 3
	TypeUserDefined TokenType = 4
	TypeUnused      TokenType = 5
	TypeByte        TokenType = 6
)

// NoToken marks an absent special token id (llama.cpp's LLAMA_TOKEN_NULL).
const NoToken int32 = -1

// Vocab is a vocabulary as plain data: what the tokenizer.ggml.* keys of a GGUF
// file hold. Start from DefaultVocab, which fills in llama.cpp's defaults.
type Vocab struct {
	Model  string      // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE)
	Pre    string      // tokenizer.ggml.pre: the BPE pre-tokenizer ("", "default", "gpt-2", "llama-bpe", ...)
	Name   string      // general.name; llama.cpp keys a per-model token-attribute rule (phi-3) on it
	Tokens []string    // token texts, by id
	Scores []float32   // SPM merge scores, by id; nil means all zero
	Types  []TokenType // by id; nil means all TypeNormal
	Merges []string    // BPE merges "left right", by rank

	BOS, EOS, UNK, PAD, EOT, EOM int32 // special token ids, NoToken when absent

	AddBOS, AddEOS bool // Encode(text, true) adds BOS / EOS
	AddSpacePrefix bool // SPM: a space is put before the text (tokenizer.ggml.add_space_prefix)
}

// DefaultVocab returns a Vocab for model and pre with llama.cpp's defaults: for
// "llama" BOS 1, EOS 2, UNK 0, add BOS and a space prefix; for "gpt2" BOS = EOS = 11
// and BOS added only for the Llama-3 family of pre-tokenizers.
func DefaultVocab(model, pre string) (Vocab, error) {
	v := Vocab{Model: model, Pre: pre, PAD: NoToken, EOT: NoToken, EOM: NoToken}
	switch model {
	case "llama":
		v.BOS, v.EOS, v.UNK = 1, 2, 0
		v.AddBOS, v.AddSpacePrefix = true, true
	case "gpt2":
		p, err := preTokenizerFor(pre)
		if err != nil {
			return Vocab{}, err
		}
		v.BOS, v.EOS, v.UNK = 11, 11, NoToken
		v.AddBOS = p.addBOS
	default:
		return Vocab{}, fmt.Errorf("tokenizer: unsupported model %q", model)
	}
	return v, nil
}

// attr is llama.cpp's llama_token_attr bit set.
type attr uint16

const (
	attrUnknown attr = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrNormalized
	attrLStrip
	attrRStrip
)

// attrOf maps a GGUF token type to its attribute, as llama_vocab::impl::load does.
func attrOf(t TokenType) attr {
	switch t {
	case TypeUnknown:
		return attrUnknown
	case TypeUnused:
		return attrUnused
	case TypeNormal:
		return attrNormal
	case TypeControl:
		return attrControl
	case TypeUserDefined:
		return attrUserDefined
	case TypeByte:
		return attrByte
	}
	return 0
}

// check validates the plain data that New needs.
func (v *Vocab) check() error {
	if len(v.Tokens) == 0 {
		return errors.New("tokenizer: empty vocabulary")
	}
	if len(v.Tokens) > 1<<31-1 {
		return fmt.Errorf("tokenizer: %d tokens: too many", len(v.Tokens))
	}
	if v.Scores != nil && len(v.Scores) < len(v.Tokens) {
		return fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), len(v.Tokens))
	}
	if v.Types != nil && len(v.Types) < len(v.Tokens) {
		return fmt.Errorf("tokenizer: %d token types for %d tokens", len(v.Types), len(v.Tokens))
	}
	if v.AddBOS && !v.valid(v.BOS) {
		return fmt.Errorf("tokenizer: add BOS set, but BOS id %d is not a token", v.BOS)
	}
	if v.AddEOS && !v.valid(v.EOS) {
		return fmt.Errorf("tokenizer: add EOS set, but EOS id %d is not a token", v.EOS)
	}
	return nil
}

// valid reports whether id names a token.
func (v *Vocab) valid(id int32) bool { return id >= 0 && int(id) < len(v.Tokens) }

// orNone returns id when it names a token, else NoToken (llama.cpp disables
// out-of-range special ids).
func (v *Vocab) orNone(id int32) int32 {
	if v.valid(id) {
		return id
	}
	return NoToken
}

// tokenTexts returns the token texts with llama.cpp's "[EMPTY_i]" for empty ones,
// and the text-to-id map; a repeated text is an error, as in llama.cpp.
func (v *Vocab) tokenTexts() ([]string, map[string]int32, error) {
	texts := make([]string, len(v.Tokens))
	ids := make(map[string]int32, len(v.Tokens))
	for i, s := range v.Tokens {
		if s == "" {
			s = "[EMPTY_" + strconv.Itoa(i) + "]"
		}
		if j, dup := ids[s]; dup {
			return nil, nil, fmt.Errorf("tokenizer: duplicate token %q has ids %d and %d", s, j, i)
		}
		ids[s] = int32(i)
		texts[i] = s
	}
	return texts, ids, nil
}

// mergeRanks indexes BPE merges by their "left right" text; the first of duplicate
// merges wins. A merge without a space after its first byte can never apply.
func mergeRanks(merges []string) map[string]int32 {
	ranks := make(map[string]int32, len(merges))
	for i, m := range merges {
		if len(m) < 2 || indexByteFrom(m, ' ', 1) < 0 {
			continue
		}
		if _, dup := ranks[m]; !dup {
			ranks[m] = int32(i)
		}
	}
	return ranks
}

// indexByteFrom is strings.IndexByte from position from, or -1.
func indexByteFrom(s string, c byte, from int) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
