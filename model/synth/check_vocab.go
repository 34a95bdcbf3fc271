package synth

import (
	"errors"
	"fmt"
	"strings"

	"github.com/infergo/infer/model/gguf"
)

// knownPre are the tokenizer.ggml.pre values accepted for a gpt2 vocabulary: those
// llama.cpp maps to its LLaMA-3, Qwen2 and GPT-2 pre-tokenizers, and "default".
var knownPre = map[string]bool{
	"default": true, "llama3": true, "llama-v3": true, "llama-bpe": true, "gpt-2": true, "qwen2": true,
}

// specialKeys are the special-token ids llama.cpp reads.
var specialKeys = []string{
	"bos_token_id", "eos_token_id", "unknown_token_id", "seperator_token_id",
	"padding_token_id", "eot_token_id", "eom_token_id",
}

// checkVocab checks tokenizer.ggml.* for a vocabulary of n tokens: what llama.cpp's
// load_vocab rejects (unknown model or pre-tokenizer, duplicate tokens, score or type
// arrays shorter than the token list or of the wrong type, missing merges) and what a
// complete vocabulary needs besides: no empty token, special ids inside the vocabulary
// (0xFFFFFFFF means unset), for "llama" the 256 byte tokens <0x00>..<0xFF> typed byte,
// for "gpt2" every merge "a b" with a, b and ab all tokens and every normal token
// spelled in GPT-2's byte-level alphabet, all 256 of whose characters are tokens.
func checkVocab(f *gguf.File, n int) error {
	model, err := f.String("tokenizer.ggml.model")
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	errs := []error{checkTokenList(tokens), checkArrays(f, n), checkSpecials(f, n)}
	types, _ := f.Int32s("tokenizer.ggml.token_type")
	switch model {
	case VocabSPM:
		errs = append(errs, checkByteTokens(tokens, types))
	case VocabBPE:
		pre, err := f.String("tokenizer.ggml.pre")
		if err == nil && !knownPre[pre] {
			errs = append(errs, fmt.Errorf("tokenizer.ggml.pre %q: not a LLaMA, Qwen2 or GPT-2 pre-tokenizer", pre))
		}
		merges, err := f.Strings("tokenizer.ggml.merges")
		errs = append(errs, err, checkMerges(tokens, merges), checkByteLevel(tokens, types))
	default:
		errs = append(errs, fmt.Errorf("tokenizer.ggml.model %q: want llama or gpt2", model))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("synth: vocabulary: %w", err)
	}
	return nil
}

// checkTokenList rejects an empty list, empty tokens and duplicates.
func checkTokenList(tokens []string) error {
	if len(tokens) == 0 {
		return errors.New("tokenizer.ggml.tokens: empty")
	}
	seen := make(map[string]int, len(tokens))
	for i, t := range tokens {
		if t == "" {
			return fmt.Errorf("token %d: empty", i)
		}
		if j, dup := seen[t]; dup {
			return fmt.Errorf("duplicate token %q: ids %d and %d", t, j, i)
		}
		seen[t] = i
	}
	return nil
}

// checkArrays checks the optional scores and token_type arrays.
func checkArrays(f *gguf.File, n int) error {
	if v, ok := f.Value("tokenizer.ggml.scores"); ok {
		e := v.ElemType()
		if v.Type() != gguf.ArrayType || (e != gguf.Float32Type && e != gguf.Int32Type) || v.Len() < n {
			return fmt.Errorf("tokenizer.ggml.scores: want %d float32 or int32, have %d %v", n, v.Len(), e)
		}
	}
	if v, ok := f.Value("tokenizer.ggml.token_type"); ok {
		if v.Type() != gguf.ArrayType || v.ElemType() != gguf.Int32Type || v.Len() < n {
			return fmt.Errorf("tokenizer.ggml.token_type: want %d int32, have %d %v", n, v.Len(), v.ElemType())
		}
	}
	return nil
}

// checkSpecials checks that every special-token id set is a token.
func checkSpecials(f *gguf.File, n int) error {
	for _, k := range specialKeys {
		key := "tokenizer.ggml." + k
		if _, ok := f.Value(key); !ok {
			continue
		}
		id, err := f.Uint(key)
		if err != nil {
			return err
		}
		if id != 0xFFFFFFFF && id >= uint64(n) {
			return fmt.Errorf("%s = %d: outside the %d-token vocabulary", key, id, n)
		}
	}
	return nil
}

// checkByteTokens requires <0x00>..<0xFF>, each typed byte, as SentencePiece's byte
// fallback needs, and every byte-typed token to be of that form.
func checkByteTokens(tokens []string, types []int32) error {
	found := 0
	for i, t := range tokens {
		isByte := len(types) > i && types[i] == TokenByte
		var b int
		form := len(t) == 6 && strings.HasPrefix(t, "<0x") && t[5] == '>'
		if form {
			_, err := fmt.Sscanf(t[3:5], "%02X", &b)
			form = err == nil && fmt.Sprintf("<0x%02X>", b) == t
		}
		switch {
		case isByte && !form:
			return fmt.Errorf("token %d %q: typed byte but not <0xHH>", i, t)
		case form && !isByte:
			return fmt.Errorf("token %d %q: a byte token not typed byte (6)", i, t)
		case form:
			found++
		}
	}
	if found != 256 {
		return fmt.Errorf("%d byte tokens <0xHH>, want 256", found)
	}
	return nil
}
