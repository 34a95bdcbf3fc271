// Package testdata finds the shared conformance data (small GGUF models and llama.cpp's
// reference outputs) for tests. It looks in $INFER_TESTDATA, else in ../shared/testdata
// beside the module root, and skips the calling test when neither exists.
package testdata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the test data directory, or skips t when it is absent.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("INFER_TESTDATA"); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		t.Skipf("INFER_TESTDATA=%s: not a directory; skipping conformance test", d)
	}
	if root, ok := moduleRoot(); ok {
		d := filepath.Join(root, "..", "shared", "testdata")
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	t.Skip("no test data: set INFER_TESTDATA or place ../shared/testdata beside the module; skipping conformance test")
	return ""
}

// Path returns the path of a file in the test data directory, skipping t when the file
// is absent.
func Path(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Dir(t), name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("test data %s absent: %v", name, err)
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

// LoadReference reads reference.json, skipping t when the test data is absent.
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
