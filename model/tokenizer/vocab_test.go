package tokenizer_test

import (
	"fmt"
	"testing"

	"github.com/infergo/infer/model/tokenizer"
)

// scored is a normal token and its SPM score.
type scored struct {
	text  string
	score float32
}

// spmVocab is a SentencePiece vocabulary laid out as llama's: <unk>, <s>, </s>, the
// 256 byte tokens, then normal tokens (with "▁" for a space).
func spmVocab(t testing.TB, normal ...scored) tokenizer.Vocab {
	t.Helper()
	v, err := tokenizer.DefaultVocab("llama", "")
	if err != nil {
		t.Fatal(err)
	}
	v.Tokens = []string{"<unk>", "<s>", "</s>"}
	v.Types = []tokenizer.TokenType{tokenizer.TypeUnknown, tokenizer.TypeControl, tokenizer.TypeControl}
	v.Scores = []float32{0, 0, 0}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, fmt.Sprintf("<0x%02X>", b))
		v.Types = append(v.Types, tokenizer.TypeByte)
		v.Scores = append(v.Scores, 0)
	}
	for _, n := range normal {
		v.Tokens = append(v.Tokens, n.text)
		v.Types = append(v.Types, tokenizer.TypeNormal)
		v.Scores = append(v.Scores, n.score)
	}
	return v
}

// spmID is the id spmVocab gives its i-th normal token.
func spmID(i int) int32 { return int32(3 + 256 + i) }

// byteID is the id of spmVocab's byte token for b.
func byteID(b byte) int32 { return int32(3 + int(b)) }

// bpeVocab is a byte-level BPE vocabulary: the 256 byte characters in GPT-2's
// order of bytes_to_unicode (printable ones first), then merge results, then
// <|endoftext|>.
func bpeVocab(t testing.TB, pre string, merges ...string) tokenizer.Vocab {
	t.Helper()
	v, err := tokenizer.DefaultVocab("gpt2", pre)
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, string(byteRune(byte(b))))
	}
	for _, m := range merges {
		var l, r string
		if _, err := fmt.Sscanf(m, "%s %s", &l, &r); err != nil {
			t.Fatalf("merge %q: %v", m, err)
		}
		v.Tokens = append(v.Tokens, l+r)
	}
	v.Merges = merges
	v.Tokens = append(v.Tokens, "<|endoftext|>")
	v.Types = make([]tokenizer.TokenType, len(v.Tokens))
	for i := range v.Types {
		v.Types[i] = tokenizer.TypeNormal
	}
	v.Types[len(v.Types)-1] = tokenizer.TypeControl
	v.BOS, v.EOS = int32(len(v.Tokens)-1), int32(len(v.Tokens)-1)
	return v
}

// byteRune is GPT-2's bytes_to_unicode, written out independently of the package.
func byteRune(b byte) rune {
	if (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae {
		return rune(b)
	}
	n := 0
	for c := 0; c < int(b); c++ {
		if !((c >= '!' && c <= '~') || (c >= 0xa1 && c <= 0xac) || c >= 0xae) {
			n++
		}
	}
	return rune(256 + n)
}

// mustNew builds a tokenizer or fails the test.
func mustNew(t testing.TB, v tokenizer.Vocab) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
