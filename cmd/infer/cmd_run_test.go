package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
)

// greedyRef returns llama.cpp's greedy continuation of prompt on stories260K-F32.
func greedyRef(t *testing.T, prompt string) testdata.Greedy {
	t.Helper()
	for _, m := range testdata.LoadReference(t).Models {
		if m.File != "stories260K-F32.gguf" {
			continue
		}
		for _, g := range m.Greedy {
			if g.Prompt == prompt {
				return g
			}
		}
	}
	t.Fatalf("reference.json: no greedy run of %q on stories260K-F32", prompt)
	return testdata.Greedy{}
}

// TestRunGreedyJSON checks that 'infer run --json' prints exactly one JSON object whose
// tokens are llama.cpp's greedy tokens.
func TestRunGreedyJSON(t *testing.T) {
	want := greedyRef(t, "Once upon a time")
	path := testdata.Path(t, "stories260K-F32.gguf")
	var stdout, stderr bytes.Buffer
	args := []string{"run", "-m", path, "-p", want.Prompt, "-n", "32", "--temp", "0", "-c", "256", "-t", "1", "--json"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.Bytes()
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var got runJSON
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v", err)
	}
	if rest := bytes.TrimSpace(out[dec.InputOffset():]); len(rest) != 0 {
		t.Errorf("stdout has %q after the JSON object", rest)
	}
	if !slices.Equal(got.PromptTokens, want.PromptTokens) || !slices.Equal(got.Tokens, want.GeneratedTokens) || got.Text != want.GeneratedText {
		t.Errorf("got %v %v %q\nllama.cpp %v %v %q", got.PromptTokens, got.Tokens, got.Text, want.PromptTokens, want.GeneratedTokens, want.GeneratedText)
	}
}

// TestRunStreams checks the streamed text mode: the prompt, then the greedy text.
func TestRunStreams(t *testing.T) {
	want := greedyRef(t, "The little dog")
	path := testdata.Path(t, "stories260K-F32.gguf")
	var stdout, stderr bytes.Buffer
	args := []string{"run", "-m", path, "-p", want.Prompt, "-n", "32", "--temp", "0", "-c", "256"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if got := stdout.String(); got != want.Prompt+want.GeneratedText+"\n" {
		t.Errorf("stdout %q\nwant %q", got, want.Prompt+want.GeneratedText+"\n")
	}
	if !strings.Contains(stderr.String(), "generated: 32 tokens") {
		t.Errorf("stderr %q lacks the timing line", stderr.String())
	}
}

// TestRunSampledSeed checks that a seed fixes a sampled continuation and that the
// cancelled context stops generation.
func TestRunSampledSeed(t *testing.T) {
	path := testdata.Path(t, "stories260K-F32.gguf")
	gen := func(seed string) string {
		var stdout, stderr bytes.Buffer
		args := []string{"run", "-m", path, "-p", "Once upon a time", "-n", "24", "--seed", seed, "-c", "128", "--json"}
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		return stdout.String()
	}
	a, b, c := gen("42"), gen("42"), gen("43")
	if a != b {
		t.Errorf("seed 42 twice:\n%s%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 42 and 43 agree: %s", a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx, []string{"run", "-m", path, "-p", "Once", "-n", "4"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("cancelled run: %v", err)
	}
}
