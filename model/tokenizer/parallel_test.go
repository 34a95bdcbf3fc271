package tokenizer_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infergo/infer/internal/testdata"
)

// TestEncodeParallel checks that EncodeParallel returns Encode's tokens for the
// corpus and for texts with few or no newlines and many multi-byte characters, with
// SentencePiece and byte-level BPE vocabularies.
func TestEncodeParallel(t *testing.T) {
	corpus, err := os.ReadFile(testdata.Path(t, "tinyshakespeare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{
		"corpus":      string(corpus),
		"one line":    strings.Repeat("héllo wörld 日本語 ▁x  ", 6000),
		"rare breaks": strings.Repeat(strings.Repeat("Größe über 😀 tab\tend ", 500)+"\n\n", 12),
	}
	for _, name := range []string{"stories260K-F32.gguf", "llama-2-tiny-random.gguf", "vocab/ggml-vocab-phi-3.gguf",
		"vocab/ggml-vocab-gpt-2.gguf"} {
		tok := load(t, name)
		for tn, text := range texts {
			t0 := time.Now()
			want := tok.Encode(text, true)
			t1 := time.Now()
			for _, w := range []int{2, 7} {
				got := tok.EncodeParallel(text, true, w)
				if !slices.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Errorf("%s, %s, %d workers: %d tokens, Encode %d; first difference at %d", name, tn, w, len(got), len(want), i)
				}
			}
			if tn == "corpus" {
				t2 := time.Now()
				tok.EncodeParallel(text, true, 2)
				t.Logf("%s: corpus in %v, in parallel (2 workers) %v", name, t1.Sub(t0), time.Since(t2))
			}
		}
	}
}

// BenchmarkEncodeParallel tokenizes tinyshakespeare.txt with the Llama-2 vocabulary on
// 1, 2 and 4 workers (1 is Encode).
func BenchmarkEncodeParallel(b *testing.B) {
	text, err := os.ReadFile(testdata.Path(b, "tinyshakespeare.txt"))
	if err != nil {
		b.Fatal(err)
	}
	tok := load(b, "llama-2-tiny-random.gguf")
	for _, w := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tok.EncodeParallel(string(text), true, w)
			}
		})
	}
}
