package bench

import (
	"testing"

	"github.com/infergo/infer/internal/testdata"
)

// TestDescribe compares with the model, size and params columns llama-bench printed
// for the shared test models (llamacpp-cpu-bench.txt), and llama.cpp's guessed type
// for a file without general.file_type.
func TestDescribe(t *testing.T) {
	tests := []struct {
		file, desc, size, params string
		bos                      int32
	}{
		{"stories260K-Q4_0.gguf", "llama ?B Q4_0", "0.25 MiB", "0.29 M", 1},
		{"synth-256-Q4_0.gguf", "llama ?B Q4_0", "1.84 MiB", "3.41 M", 1},
		{"synth-256-Q8_0.gguf", "llama ?B Q8_0", "3.46 MiB", "3.41 M", 1},
		{"stories260K-F32.gguf", "llama ?B all F32 (guessed)", "1.12 MiB", "0.29 M", 1},
		{"synth-256-Q4_K_M.gguf", "llama ?B Q4_K - Medium", "1.84 MiB", "3.41 M", 1},
	}
	for _, tt := range tests {
		m, err := Describe(testdata.Path(t, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if m.Desc != tt.desc || FormatSize(m.Size) != tt.size || FormatParams(m.Params) != tt.params || m.BOS != tt.bos || m.NVocab != 512 {
			t.Errorf("%s: %q %s %s bos %d vocab %d; want %q %s %s bos %d", tt.file, m.Desc, FormatSize(m.Size),
				FormatParams(m.Params), m.BOS, m.NVocab, tt.desc, tt.size, tt.params, tt.bos)
		}
	}
}
