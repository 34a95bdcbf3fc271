package tokenizer_test

import (
	"fmt"
	"log"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/tokenizer"
)

// A SentencePiece vocabulary built from plain data: the text gets a leading space,
// spaces become "▁", and the best-scoring merges win.
func Example() {
	v, err := tokenizer.DefaultVocab("llama", "")
	if err != nil {
		log.Fatal(err)
	}
	v.Tokens = []string{"<unk>", "<s>", "</s>", "▁", "h", "i", "▁h", "▁hi"}
	v.Scores = []float32{0, 0, 0, -3, -4, -4, -2, -1}
	v.Types = []tokenizer.TokenType{2, 3, 3, 1, 1, 1, 1, 1}
	tok, err := tokenizer.New(v)
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Encode("hi hi", true)
	fmt.Println(ids)
	fmt.Printf("%q %q\n", tok.Piece(ids[1]), tok.Decode(ids))
	// Output:
	// [1 7 7]
	// " hi" " hi hi"
}

// A byte-level BPE (GPT-2) vocabulary: merges apply by rank inside each word of the
// pre-tokenizer, and "Ġ" stands for the space byte.
func ExampleNew_bpe() {
	v, err := tokenizer.DefaultVocab("gpt2", "gpt-2")
	if err != nil {
		log.Fatal(err)
	}
	v.Tokens = []string{"a", "b", "Ġ", "ab", "Ġab"}
	v.Merges = []string{"a b", "Ġ ab"}
	v.BOS, v.EOS = tokenizer.NoToken, tokenizer.NoToken
	tok, err := tokenizer.New(v)
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Encode("ab ab", true)
	fmt.Println(ids, tok.AddBOS())
	fmt.Printf("%q\n", tok.Decode(ids))
	// Output:
	// [3 4] false
	// "ab ab"
}

// Loading the tokenizer of a model file.
func ExampleFromGGUF() {
	f, err := gguf.Open("stories260K-F32.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tok.Encode("Once upon a time", tok.AddBOS()))
}
