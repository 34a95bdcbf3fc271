package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model/synth"
)

// TestTokenizeJSON checks 'infer tokenize --json' against llama.cpp's tokenizations,
// with and without BOS, for the stories260K and Llama-2 vocabularies.
func TestTokenizeJSON(t *testing.T) {
	ref := testdata.LoadReference(t)
	for _, m := range ref.Models {
		if m.File != "stories260K-F32.gguf" && m.File != "llama-2-tiny-random.gguf" {
			continue
		}
		path := testdata.Path(t, m.File)
		for i, tc := range m.Tokenize {
			for _, noBOS := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/no-bos=%v", m.File, i, noBOS), func(t *testing.T) {
					args := []string{"tokenize", "-m", path, "-p", tc.Text, "--json"}
					want := tc.WithBOS
					if noBOS {
						args = append(args, "--no-bos")
						want = tc.WithoutBOS
					}
					var stdout, stderr bytes.Buffer
					if err := run(context.Background(), args, &stdout, &stderr); err != nil {
						t.Fatalf("%v\n%s", err, stderr.String())
					}
					var got tokenizeJSON
					if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
						t.Fatalf("stdout %q: %v", stdout.String(), err)
					}
					if !slices.Equal(got.Tokens, want) || got.Tokens == nil {
						t.Errorf("tokens %v, llama.cpp %v", got.Tokens, want)
					}
				})
			}
		}
	}
}

// TestTokenizeLines checks the plain output: one line per token, id and quoted piece.
func TestTokenizeLines(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"tokenize", "-m", path, "-p", "Once upon a time"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	want := "     1 \"\"\n   403 \" Once\"\n   407 \" upon\"\n   261 \" a\"\n   378 \" time\"\n"
	if got := stdout.String(); got != want {
		t.Errorf("stdout\n%s\nwant\n%s", got, want)
	}
}

// TestTokenizeNoVocab checks that a model without a vocabulary is a one-line error, not
// a panic.
func TestTokenizeNoVocab(t *testing.T) {
	s, _ := synth.LookupShape("tiny")
	ft, _ := synth.LookupFileType("F32")
	p, err := synth.NewPlan(s, ft)
	if err != nil {
		t.Fatal(err)
	}
	w, err := synth.NewWriter(p, synth.Options{Seed: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Delete("tokenizer.ggml.model")
	path := filepath.Join(t.TempDir(), "novocab.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"tokenize", "-m", path, "-p", "hi"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "has no tokenizer") || strings.Contains(err.Error(), "\n") {
		t.Errorf("tokenize: %v; want a one-line error saying the model has no tokenizer", err)
	}
}
