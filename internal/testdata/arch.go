package testdata

import (
	"encoding/json"
	"os"
	"testing"
)

// ArchReference is arch/reference.json: llama.cpp's outputs for the qwen2 and qwen3
// test models in arch/.
type ArchReference struct {
	Models []ArchModel `json:"models"`
}

// ArchModel holds llama.cpp's outputs for one file of arch/ (File is relative to arch/).
type ArchModel struct {
	File                string           `json:"file"`
	SHA256              string           `json:"sha256"`
	Perplexity          []ArchPerplexity `json:"perplexity"`            // default F16 KV cache
	PerplexityKVF32NoFA []ArchPerplexity `json:"perplexity_kvf32_nofa"` // F32 KV cache
	Greedy              []ArchGreedy     `json:"greedy"`
}

// ArchPerplexity is one llama-perplexity run: the final value, its ± and the running
// value after every chunk.
type ArchPerplexity struct {
	Corpus    string    `json:"corpus"`
	FinalPPL  float64   `json:"final_ppl"`
	PlusMinus float64   `json:"plus_minus"`
	Chunks    []float64 `json:"chunks"`
}

// ArchGreedy is one llama-simple greedy continuation: everything printed after the
// prompt, llama-simple's final newline included.
type ArchGreedy struct {
	Prompt        string `json:"prompt"`
	NPredict      int    `json:"n_predict"`
	GeneratedText string `json:"generated_text"`
}

// LoadArchReference reads arch/reference.json, skipping t when it is absent.
func LoadArchReference(t testing.TB) *ArchReference {
	t.Helper()
	b, err := os.ReadFile(Path(t, "arch/reference.json"))
	if err != nil {
		t.Fatalf("arch/reference.json: %v", err)
	}
	var r ArchReference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("arch/reference.json: %v", err)
	}
	if len(r.Models) == 0 {
		t.Fatal("arch/reference.json: no models")
	}
	return &r
}
