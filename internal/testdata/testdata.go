// Package testdata finds the shared conformance data (small GGUF models and llama.cpp's
// reference outputs) for tests. It looks in $INFER_TESTDATA, else in ../shared/testdata
// beside the module root, and skips the calling test when neither exists.
//
// With INFER_REQUIRE_TESTDATA=1 (set by .ci/run) missing data fails the calling test
// instead of skipping it, so a CI run cannot pass with the comparisons against
// llama.cpp skipped. This package is the one place tests find data; a test that needs
// none must not call it.
package testdata

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// RequireEnv is the environment variable that turns missing test data from a skip into
// a failure when set to 1.
const RequireEnv = "INFER_REQUIRE_TESTDATA"

// Required reports whether missing test data fails tests (INFER_REQUIRE_TESTDATA=1).
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Missing stops t because test data is absent: it skips t, or fails it when Required.
// Tests that find data by other means than Dir and Path call it instead of t.Skip.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (%s=1: missing test data fails the run)", msg, RequireEnv)
	}
	t.Skip(msg + "; skipping conformance test")
}

// Dir returns the test data directory, or stops t (see Missing) when it is absent.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := dir()
	if err != nil {
		Missing(t, "%v", err)
	}
	return d
}

// dir finds the test data directory.
func dir() (string, error) {
	if d := os.Getenv("INFER_TESTDATA"); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("INFER_TESTDATA=%s: not a directory", d)
		}
		return d, nil
	}
	if root, ok := moduleRoot(); ok {
		d := filepath.Join(root, "..", "shared", "testdata")
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d, nil
		}
	}
	return "", errors.New("no test data: set INFER_TESTDATA or place ../shared/testdata beside the module")
}

// Path returns the path of a file in the test data directory, or stops t (see
// Missing) when the file is absent.
func Path(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Dir(t), name)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "test data %s absent: %v", name, err)
	}
	return p
}

func moduleRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Reference is the part of reference.json the tests use.
type Reference struct {
	LogitsPrompt string   `json:"logits_prompt"`
	Corpus       []Corpus `json:"corpus"`
	Models       []Model  `json:"models"`
}

// Corpus describes the perplexity corpus and its tokenizations.
type Corpus struct {
	File          string                  `json:"file"`
	Tokenizations map[string]Tokenization `json:"tokenizations"`
}

// Tokenization is the tokenization of the whole corpus with one vocabulary.
type Tokenization struct {
	TokenizerFromModel string  `json:"tokenizer_from_model"`
	NTokens            int     `json:"n_tokens"`
	SHA256             string  `json:"sha256_of_ids_newline_joined"`
	FirstIDs           []int32 `json:"first_2560_ids"`
}

// Model holds llama.cpp's outputs for one model file.
type Model struct {
	File                string            `json:"file"`
	Model               string            `json:"model"`
	Variant             string            `json:"variant"`
	TensorTypes         map[string]string `json:"tensor_types"`
	NVocab              int               `json:"n_vocab"`
	AddBOSDefault       bool              `json:"add_bos_default"`
	Tokenize            []Tokenize        `json:"tokenize"`
	Greedy              []Greedy          `json:"greedy"`
	Logits              *Logits           `json:"logits"`
	LogitsKVF32NoFA     *Logits           `json:"logits_kvf32_nofa"`
	Perplexity          []Perplexity      `json:"perplexity"`
	PerplexityKVF32NoFA []Perplexity      `json:"perplexity_kvf32_nofa"`
}

// Tokenize is one tokenization test string.
type Tokenize struct {
	Text             string   `json:"text"`
	WithBOS          []int32  `json:"with_bos"`
	WithoutBOS       []int32  `json:"without_bos"`
	PiecesHexNoBOS   []string `json:"pieces_hex_without_bos"`
	PiecesWithoutBOS []string `json:"pieces_without_bos"`
}

// Greedy is one greedy continuation.
type Greedy struct {
	Prompt          string  `json:"prompt"`
	PromptTokens    []int32 `json:"prompt_tokens"`
	NPredict        int     `json:"n_predict"`
	GeneratedTokens []int32 `json:"generated_tokens"`
	GeneratedText   string  `json:"generated_text"`
}

// Logits names a raw float32 logits file ([n_tokens][n_vocab]) for the fixed prompt.
type Logits struct {
	File   string  `json:"file"`
	Tokens []int32 `json:"tokens"`
	Argmax []int32 `json:"argmax_per_position"`
}

// Perplexity is one llama-perplexity run.
type Perplexity struct {
	Command  string    `json:"command"`
	FinalPPL float64   `json:"final_ppl"`
	FinalPM  float64   `json:"final_ppl_pm"`
	Running  []float64 `json:"running_ppl_per_chunk"`
}

// LoadReference reads reference.json, stopping t (see Missing) when the test data is
// absent.
func LoadReference(t testing.TB) *Reference {
	t.Helper()
	b, err := os.ReadFile(Path(t, "reference.json"))
	if err != nil {
		t.Fatalf("reference.json: %v", err)
	}
	var r Reference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("reference.json: %v", err)
	}
	return &r
}
