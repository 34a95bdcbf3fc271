package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model/gguf"
)

// tokenizeIDs runs 'infer tokenize -m path -p text --no-bos --json' and returns the ids.
func tokenizeIDs(t *testing.T, path, text string) []int32 {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args := []string{"tokenize", "-m", path, "-p", text, "--no-bos", "--json"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var got tokenizeJSON
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	return got.Tokens
}

// TestTokenizeQwen2Vocab runs llama.cpp's test vectors for the qwen2 vocabulary (a
// vocabulary-only file: no architecture to load) through 'infer tokenize'.
func TestTokenizeQwen2Vocab(t *testing.T) {
	path := testdata.Path(t, "vocab/ggml-vocab-qwen2.gguf")
	inp, err := os.ReadFile(path + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(path + ".out")
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(strings.TrimSuffix(string(inp), "\n__ggml_vocab_test__\n"), "\n__ggml_vocab_test__\n")
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(texts) != len(lines) || len(texts) < 40 {
		t.Fatalf("%d strings, %d result lines", len(texts), len(lines))
	}
	for i, text := range texts {
		want := []int32{}
		for _, f := range strings.Fields(lines[i]) {
			id, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, int32(id))
		}
		if got := tokenizeIDs(t, path, text); !slices.Equal(got, want) {
			t.Errorf("vector %d %q: tokens %v, llama.cpp %v", i, text, got, want)
		}
	}
}

// TestTokenizeUnknownArch tokenizes with a file whose architecture no loader knows:
// tokenize reads only the vocabulary.
func TestTokenizeUnknownArch(t *testing.T) {
	src, err := gguf.Open(testdata.Path(t, "stories260K-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := gguf.NewWriter()
	w.Set("general.architecture", gguf.Str("no-such-arch"))
	for _, kv := range src.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			w.Set(kv.Key, kv.Value)
		}
	}
	path := filepath.Join(t.TempDir(), "vocab.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	ref := testdata.LoadReference(t)
	for _, m := range ref.Models {
		if m.File != "stories260K-F32.gguf" {
			continue
		}
		for _, tc := range m.Tokenize {
			if got := tokenizeIDs(t, path, tc.Text); !slices.Equal(got, tc.WithoutBOS) {
				t.Errorf("%q: tokens %v, llama.cpp %v", tc.Text, got, tc.WithoutBOS)
			}
		}
		return
	}
	t.Fatal("stories260K-F32.gguf: not in reference.json")
}
