package synth

import (
	"fmt"
	"math/rand/v2"
)

// Token types, as GGUF's tokenizer.ggml.token_type stores them (llama_token_type).
const (
	TokenNormal      = 1
	TokenUnknown     = 2
	TokenControl     = 3
	TokenUserDefined = 4
	TokenUnused      = 5
	TokenByte        = 6
)

// Vocab is a tokenizer vocabulary as GGUF stores it under tokenizer.ggml.*.
type Vocab struct {
	Model  string    // tokenizer.ggml.model: "llama" or "gpt2"
	Pre    string    // tokenizer.ggml.pre ("" for SentencePiece)
	Tokens []string  // id -> text
	Scores []float32 // id -> score (SentencePiece only)
	Types  []int32   // id -> token type
	Merges []string  // "left right" pairs by rank (BPE only)
	BOS    int32
	EOS    int32
	UNK    int32 // -1 when the vocabulary has none
	NoBOS  bool  // tokenizer.ggml.add_bos_token false (Qwen)
}

// vocabSeed fixes the generated pieces: a shape's vocabulary does not depend on the
// weight seed.
const vocabSeed = 0x5eed_70c5

// maxPieceBytes bounds the length of generated pieces.
const maxPieceBytes = 16

// NewVocab returns the vocabulary of kind (VocabSPM, VocabBPE or VocabQwen2) with n
// tokens.
func NewVocab(kind string, n int) (*Vocab, error) {
	switch kind {
	case VocabSPM:
		if n < 3+256+len(spmBase) {
			return nil, fmt.Errorf("synth: SentencePiece vocabulary of %d tokens: need at least %d", n, 3+256+len(spmBase))
		}
		return spmVocab(n), nil
	case VocabBPE:
		if n < 256+len(llama3Specials)+1 {
			return nil, fmt.Errorf("synth: BPE vocabulary of %d tokens: need at least %d", n, 256+len(llama3Specials)+1)
		}
		return bpeVocab(n), nil
	case VocabQwen2:
		if n < 256+len(qwenSpecials)+1 {
			return nil, fmt.Errorf("synth: Qwen vocabulary of %d tokens: need at least %d", n, 256+len(qwenSpecials)+1)
		}
		return qwenVocab(n), nil
	}
	return nil, fmt.Errorf("synth: unknown vocabulary kind %q", kind)
}

// spmBase holds the single-character pieces of the SentencePiece vocabulary; "▁" is
// SentencePiece's escaped space. '<' and '>' are left out so that no generated piece
// can spell a control or byte token.
var spmBase = []string{"▁",
	"e", "t", "a", "o", "i", "n", "s", "h", "r", "d", "l", "u", "c", "m", "f", "w", "g", "y", "p", "b",
	"v", "k", "j", "x", "q", "z",
	"E", "T", "A", "O", "I", "N", "S", "H", "R", "D", "L", "U", "C", "M", "F", "W", "G", "Y", "P", "B",
	"V", "K", "J", "X", "Q", "Z",
	"0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
	".", ",", "!", "?", "'", "\"", "-", ":", ";", "(", ")",
}

// spmVocab builds a LLaMA-style SentencePiece vocabulary: <unk>, <s>, </s>, the 256
// byte tokens <0x00>..<0xFF>, then pieces with decreasing scores, each longer piece the
// concatenation of two earlier ones so the tokenizer's bigram merges can reach it.
func spmVocab(n int) *Vocab {
	v := &Vocab{Model: VocabSPM, BOS: 1, EOS: 2, UNK: 0}
	add := func(text string, typ int32, score float32) {
		v.Tokens = append(v.Tokens, text)
		v.Types = append(v.Types, typ)
		v.Scores = append(v.Scores, score)
	}
	add("<unk>", TokenUnknown, 0)
	add("<s>", TokenControl, 0)
	add("</s>", TokenControl, 0)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), TokenByte, 0)
	}
	pieces := growPieces(spmBase, n-len(v.Tokens), nil)
	for i, p := range pieces {
		add(p, TokenNormal, -float32(i))
	}
	return v
}

// growPieces returns want pieces: base, then concatenations of two earlier pieces
// (biased toward early, frequent ones), unique and at most maxPieceBytes long. When
// merges is non-nil each concatenation's "left right" pair is appended to it.
func growPieces(base []string, want int, merges *[]string) []string {
	rng := rand.New(rand.NewPCG(vocabSeed, uint64(want)))
	seen := make(map[string]bool, want)
	pieces := make([]string, 0, want)
	for _, b := range base {
		if len(pieces) < want && !seen[b] {
			seen[b] = true
			pieces = append(pieces, b)
		}
	}
	pick := func() string {
		u := rng.Float64()
		return pieces[int(u*u*float64(len(pieces)))]
	}
	for len(pieces) < want {
		a, b := pick(), pick()
		p := a + b
		if len(p) > maxPieceBytes || seen[p] {
			continue
		}
		seen[p] = true
		pieces = append(pieces, p)
		if merges != nil {
			*merges = append(*merges, a+" "+b)
		}
	}
	return pieces
}
