package tokenizer_test

import (
	"os"
	"testing"

	"github.com/infergo/infer/internal/testdata"
)

// BenchmarkEncodeCorpus tokenizes tinyshakespeare.txt (1.1 MB) with BOS.
func BenchmarkEncodeCorpus(b *testing.B) {
	text, err := os.ReadFile(testdata.Path(b, "tinyshakespeare.txt"))
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"stories260K-F32.gguf", "llama-2-tiny-random.gguf", "vocab/ggml-vocab-gpt-2.gguf"} {
		b.Run(name, func(b *testing.B) {
			tok := load(b, name)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tok.Encode(string(text), true)
			}
		})
	}
}
