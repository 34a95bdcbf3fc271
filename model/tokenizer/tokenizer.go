// Package tokenizer turns text into token ids and back for the vocabularies GGUF files
// carry: tokenizer.ggml.model "llama" (SentencePiece-style) and "gpt2" (byte-level BPE).
//
// It reproduces llama.cpp's llama_tokenize (parse_special=false) and
// llama_token_to_piece (special=false) token for token; the algorithms follow
// llama.cpp's src/llama-vocab.cpp and src/unicode.cpp.
package tokenizer

import (
	"fmt"
	"strings"
)

// Tokenizer encodes and decodes text with one vocabulary. It is immutable and safe
// for concurrent use.
type Tokenizer struct {
	spm       bool             // "llama" model; else byte-level BPE
	tokens    []string         // by id
	scores    []float32        // by id
	attrs     []attr           // by id
	pieces    []string         // llama_token_to_piece(special=false), by id
	ids       map[string]int32 // text -> id
	ranks     map[string]int32 // BPE "left right" -> merge rank
	pre       preTokenizer     // BPE only
	splitters []int32          // user-defined tokens cut out of raw text, longest first
	eog       map[int32]bool   // end-of-generation ids
	byteToken [256]int32       // SPM byte fallback
	bos, eos  int32            // NoToken when absent
	eot, eom  int32            // NoToken when absent
	unk, pad  int32            // NoToken when absent
	flags     struct{ bos, eos, spacePrefix bool }
}

// New builds a Tokenizer from plain vocabulary data.
func New(v Vocab) (*Tokenizer, error) {
	if err := v.check(); err != nil {
		return nil, err
	}
	t := &Tokenizer{spm: v.Model == "llama"}
	switch v.Model {
	case "llama":
	case "gpt2":
		p, err := preTokenizerFor(v.Pre)
		if err != nil {
			return nil, err
		}
		t.pre = p
		t.ranks = mergeRanks(v.Merges)
	default:
		return nil, fmt.Errorf("tokenizer: unsupported model %q", v.Model)
	}
	texts, ids, err := v.tokenTexts()
	if err != nil {
		return nil, err
	}
	t.tokens, t.ids = texts, ids
	t.setTables(&v)
	t.bos, t.eos, t.eot, t.eom = v.orNone(v.BOS), v.orNone(v.EOS), v.orNone(v.EOT), v.orNone(v.EOM)
	t.unk, t.pad = v.orNone(v.UNK), v.orNone(v.PAD)
	t.flags.bos, t.flags.eos = v.AddBOS, v.AddEOS
	t.flags.spacePrefix = t.spm && v.AddSpacePrefix
	t.markSpecials(ids, v.Name)
	t.splitters = t.splitCandidates()
	t.setByteTokens()
	t.setPieces()
	return t, nil
}

// setTables copies scores and token attributes.
func (t *Tokenizer) setTables(v *Vocab) {
	n := len(t.tokens)
	t.scores = make([]float32, n)
	if v.Scores != nil {
		copy(t.scores, v.Scores[:n])
	}
	t.attrs = make([]attr, n)
	for i := range t.attrs {
		t.attrs[i] = attrNormal
		if v.Types != nil {
			t.attrs[i] = attrOf(v.Types[i])
		}
	}
}

// setByteTokens fills the SPM byte fallback: "<0xXX>", else the byte itself as a
// token, else UNK (llama.cpp throws there).
func (t *Tokenizer) setByteTokens() {
	for b := range t.byteToken {
		id, ok := t.ids[fmt.Sprintf("<0x%02X>", b)]
		if !ok {
			id, ok = t.ids[string([]byte{byte(b)})]
		}
		if !ok {
			id = t.unk
		}
		t.byteToken[b] = id
	}
}

// Encode returns the token ids of text as llama_tokenize(text, addSpecial,
// parse_special=false) does: special-token text in the input is plain text, except
// user-defined tokens, which llama.cpp always cuts out. addSpecial adds BOS and EOS
// when the vocabulary says so.
func (t *Tokenizer) Encode(text string, addSpecial bool) []int32 {
	out := make([]int32, 0, len(text)/3+2)
	if addSpecial && t.flags.bos {
		out = append(out, t.bos)
	}
	var spans []span
	if text != "" {
		spans = t.partition(text)
	}
	prevSpecial := true // SPM: a space prefix goes before text that starts the input or follows a special token
	for _, s := range spans {
		switch {
		case s.id != NoToken:
			out = append(out, s.id)
			prevSpecial = true
		case t.spm:
			if t.flags.spacePrefix && prevSpecial {
				s.text = " " + s.text
			}
			out = t.spmEncode(out, strings.ReplaceAll(s.text, " ", spaceMark))
			prevSpecial = false
		default:
			out = t.bpeEncode(out, s.text)
		}
	}
	if addSpecial && t.flags.eos {
		out = append(out, t.eos)
	}
	return out
}

// spaceMark is U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's escaped space.
const spaceMark = "\u2581"

// Piece returns the bytes of one token as llama_token_to_piece(special=false,
// lstrip=0) does: nothing for control and unknown tokens, U+2581 as a space (SPM),
// the byte of a byte token, GPT-2 byte decoding (BPE). Ids outside the vocabulary
// give nil.
func (t *Tokenizer) Piece(id int32) []byte {
	if id < 0 || int(id) >= len(t.pieces) {
		return nil
	}
	return []byte(t.pieces[id])
}

// Decode concatenates the pieces of ids. Unlike llama_detokenize it never strips
// the SPM leading space nor cleans up BPE spaces, so for SPM with a space prefix
// Decode(Encode(s, false)) is " " + s.
func (t *Tokenizer) Decode(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		if id >= 0 && int(id) < len(t.pieces) {
			b.WriteString(t.pieces[id])
		}
	}
	return b.String()
}

// BOS is the beginning-of-sequence token id, or NoToken.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence token id, or NoToken.
func (t *Tokenizer) EOS() int32 { return t.eos }

// PAD is the padding token id, or NoToken.
func (t *Tokenizer) PAD() int32 { return t.pad }

// IsEOG reports whether id ends generation: EOS, EOT, EOM and the tokens llama.cpp
// recognises by text ("<|eot_id|>", "<|im_end|>", "<|endoftext|>", ...).
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// AddBOS reports whether Encode(text, true) starts with BOS.
func (t *Tokenizer) AddBOS() bool { return t.flags.bos }

// AddEOS reports whether Encode(text, true) ends with EOS.
func (t *Tokenizer) AddEOS() bool { return t.flags.eos }

// NVocab is the vocabulary size.
func (t *Tokenizer) NVocab() int { return len(t.tokens) }

// Token returns the text of token id as the vocabulary stores it, or "" when id is
// out of range.
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}
