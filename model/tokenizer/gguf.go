package tokenizer

import (
	"errors"
	"fmt"

	"github.com/infergo/infer/model/gguf"
)

// GGUF metadata keys read by FromGGUF.
const (
	keyModel       = "tokenizer.ggml.model"
	keyPre         = "tokenizer.ggml.pre"
	keyTokens      = "tokenizer.ggml.tokens"
	keyScores      = "tokenizer.ggml.scores"
	keyTypes       = "tokenizer.ggml.token_type"
	keyMerges      = "tokenizer.ggml.merges"
	keyAddBOS      = "tokenizer.ggml.add_bos_token"
	keyAddEOS      = "tokenizer.ggml.add_eos_token"
	keySpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyName        = "general.name"
)

// ErrNoTokenizer is returned by FromGGUF and Load for a file without a vocabulary (no
// tokenizer.ggml.model key).
var ErrNoTokenizer = errors.New("tokenizer: the file has no tokenizer (no " + keyModel + ")")

// FromGGUF builds the Tokenizer described by f's tokenizer.ggml.* keys, applying
// llama.cpp's defaults for absent keys (see DefaultVocab). A special token id past
// the vocabulary keeps the default, as in llama.cpp.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	v, err := vocabFromGGUF(f)
	if err != nil {
		return nil, err
	}
	return New(v)
}

// vocabFromGGUF reads the vocabulary as plain data.
func vocabFromGGUF(f *gguf.File) (Vocab, error) {
	model, err := f.String(keyModel)
	if errors.Is(err, gguf.ErrNotFound) {
		return Vocab{}, ErrNoTokenizer
	}
	if err != nil {
		return Vocab{}, fmt.Errorf("tokenizer: %w", err)
	}
	pre, _, err := optional(f.String(keyPre))
	if err != nil {
		return Vocab{}, fmt.Errorf("tokenizer: %w", err)
	}
	v, err := DefaultVocab(model, pre)
	if err != nil {
		return Vocab{}, err
	}
	if err := readTokens(f, &v); err != nil {
		return Vocab{}, fmt.Errorf("tokenizer: %w", err)
	}
	if err := readSpecials(f, &v); err != nil {
		return Vocab{}, fmt.Errorf("tokenizer: %w", err)
	}
	if err := readFlags(f, &v); err != nil {
		return Vocab{}, fmt.Errorf("tokenizer: %w", err)
	}
	return v, nil
}

// readTokens reads token texts, scores, types and merges.
func readTokens(f *gguf.File, v *Vocab) error {
	var err error
	if v.Tokens, err = f.Strings(keyTokens); err != nil {
		return err
	}
	if v.Scores, err = readScores(f); err != nil {
		return err
	}
	types, _, err := optional(f.Int32s(keyTypes))
	if err != nil {
		return err
	}
	for _, t := range types {
		v.Types = append(v.Types, TokenType(t))
	}
	if v.Model == "gpt2" {
		if v.Merges, err = f.Strings(keyMerges); err != nil {
			return err
		}
	}
	v.Name, _, err = optional(f.String(keyName))
	return err
}

// readScores reads tokenizer.ggml.scores, stored as float32 or int32.
func readScores(f *gguf.File) ([]float32, error) {
	val, ok := f.Value(keyScores)
	if !ok {
		return nil, nil
	}
	if a, ok := val.AsFloat32s(); ok {
		return a, nil
	}
	if a, ok := val.AsInt32s(); ok {
		s := make([]float32, len(a))
		for i, x := range a {
			s[i] = float32(x)
		}
		return s, nil
	}
	return nil, fmt.Errorf("%s: type %v, want array of float32 or int32", keyScores, val.Type())
}

// readSpecials overrides the default special token ids with those in the file.
func readSpecials(f *gguf.File, v *Vocab) error {
	for _, s := range []struct {
		key string
		id  *int32
	}{
		{"tokenizer.ggml.bos_token_id", &v.BOS},
		{"tokenizer.ggml.eos_token_id", &v.EOS},
		{"tokenizer.ggml.eot_token_id", &v.EOT},
		{"tokenizer.ggml.eom_token_id", &v.EOM},
		{"tokenizer.ggml.unknown_token_id", &v.UNK},
		{"tokenizer.ggml.padding_token_id", &v.PAD},
	} {
		id, ok, err := optional(f.Uint(s.key))
		if err != nil {
			return err
		}
		if ok && id < uint64(len(v.Tokens)) {
			*s.id = int32(id)
		}
	}
	return nil
}

// readFlags reads add_bos_token, add_eos_token and add_space_prefix.
func readFlags(f *gguf.File, v *Vocab) error {
	for _, s := range []struct {
		key  string
		flag *bool
	}{
		{keyAddBOS, &v.AddBOS},
		{keyAddEOS, &v.AddEOS},
		{keySpacePrefix, &v.AddSpacePrefix},
	} {
		b, ok, err := optional(f.Bool(s.key))
		if err != nil {
			return err
		}
		if ok {
			*s.flag = b
		}
	}
	return nil
}

// optional turns a getter's not-found error into ok == false.
func optional[T any](x T, err error) (T, bool, error) {
	if errors.Is(err, gguf.ErrNotFound) {
		var zero T
		return zero, false, nil
	}
	return x, err == nil, err
}

// Load reads the vocabulary of the GGUF file at path. Only the tokenizer.ggml.* keys
// are read, so any file that carries a vocabulary works: a model of any architecture,
// or a vocabulary-only file.
func Load(path string) (*Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	t, err := FromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
