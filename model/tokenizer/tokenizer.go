// Package tokenizer turns text into token ids and back for the vocabularies GGUF files
// carry: tokenizer.ggml.model "llama" (SentencePiece-style) and "gpt2" (byte-level BPE).
//
// PLACEHOLDER: the API below is the contract; the implementation is being written.
package tokenizer

import "errors"

// Tokenizer encodes and decodes text with one vocabulary.
type Tokenizer struct{}

// Encode returns the token ids of text; addSpecial adds BOS (and EOS) when the
// vocabulary's rules say so, as llama_tokenize(add_special=true, parse_special=false).
func (t *Tokenizer) Encode(text string, addSpecial bool) []int32 { return nil }

// Piece returns the bytes of one token as llama_token_to_piece(special=false) does.
func (t *Tokenizer) Piece(id int32) []byte { return nil }

// Decode concatenates the pieces of ids.
func (t *Tokenizer) Decode(ids []int32) string { return "" }

// BOS is the beginning-of-sequence token id.
func (t *Tokenizer) BOS() int32 { return 1 }

// EOS is the end-of-sequence token id.
func (t *Tokenizer) EOS() int32 { return 2 }

// IsEOG reports whether id ends generation (EOS, EOT and the like).
func (t *Tokenizer) IsEOG(id int32) bool { return false }

// AddBOS reports whether Encode(text, true) starts with BOS.
func (t *Tokenizer) AddBOS() bool { return true }

// NVocab is the vocabulary size.
func (t *Tokenizer) NVocab() int { return 0 }

var errPlaceholder = errors.New("tokenizer: not implemented yet")
