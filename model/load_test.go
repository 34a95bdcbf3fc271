package model

import (
	"context"
	"strings"
	"testing"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/tensor"
)

// TestLoadRejects checks that malformed models fail at load with an error naming the
// offending tensor or key.
func TestLoadRejects(t *testing.T) {
	tm := newTiny(4)
	tests := []struct {
		name string
		edit func(w *gguf.Writer)
		skip []string
		want string
	}{
		{"missing tensor", nil, []string{"blk.1.ffn_up.weight"}, `"blk.1.ffn_up.weight": missing`},
		{"wrong shape", func(w *gguf.Writer) { w.Set("llama.feed_forward_length", gguf.Uint32(12)) }, nil, `"blk.0.ffn_gate.weight": shape [8 16], want [8 12]`},
		{"architecture", func(w *gguf.Writer) { w.Set("general.architecture", gguf.Str("gpt2")) }, nil, `"gpt2"`},
		{"missing key", func(w *gguf.Writer) { w.Delete("llama.block_count") }, nil, "llama.block_count"},
		{"heads", func(w *gguf.Writer) { w.Set("llama.attention.head_count_kv", gguf.Uint32(3)) }, nil, "head_count_kv 3"},
		{"rope scaling", func(w *gguf.Writer) { w.Set("llama.rope.scaling.type", gguf.Str("yarn")) }, nil, `"yarn"`},
		{"norm type", func(w *gguf.Writer) {
			w.AddTensorBytes("output_norm.weight", tensor.F16, []uint64{uint64(tm.cfg.NEmbd)}, make([]byte, 2*tm.cfg.NEmbd))
		}, []string{"output_norm.weight"}, `"output_norm.weight": type F16, want F32`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tm.writer(t, tensor.F32, tt.skip...)
			if tt.edit != nil {
				tt.edit(w)
			}
			path := t.TempDir() + "/bad.gguf"
			if err := w.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			m, err := Load(path, Options{})
			if err == nil {
				m.Close()
				t.Fatalf("Load succeeded, want an error mentioning %s", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load: %v; want it to mention %s", err, tt.want)
			}
		})
	}
}

// TestConfigFromGGUF checks the hyperparameters and their defaults.
func TestConfigFromGGUF(t *testing.T) {
	tm := newTiny(5)
	tests := []struct {
		name string
		edit func(w *gguf.Writer)
		want func(c *Config)
	}{
		{"defaults", nil, func(c *Config) {}},
		{"no head_count_kv", func(w *gguf.Writer) { w.Delete("llama.attention.head_count_kv") }, nil},
		{"linear scaling", func(w *gguf.Writer) {
			w.Set("llama.rope.scaling.type", gguf.Str("linear"))
			w.Set("llama.rope.scaling.factor", gguf.Float32(4))
		}, func(c *Config) { c.RopeScale = 0.25 }},
		{"rope dims and base", func(w *gguf.Writer) {
			w.Set("llama.rope.dimension_count", gguf.Uint32(2))
			w.Set("llama.rope.freq_base", gguf.Float32(500000))
		}, func(c *Config) { c.RopeDims, c.RopeBase = 2, 500000 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tm.writer(t, tensor.F32)
			if tt.edit != nil {
				tt.edit(w)
			}
			var buf strings.Builder
			if _, err := w.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Parse([]byte(buf.String()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := configFromGGUF(f)
			want := tm.cfg
			if tt.want == nil { // head_count_kv absent: as many K/V heads as query heads
				want.NHeadKV = want.NHead
			} else {
				tt.want(&want)
			}
			if err != nil || got != want {
				t.Fatalf("configFromGGUF = %+v, %v\nwant %+v", got, err, want)
			}
		})
	}
}

// TestNoTokenizer checks that Generate and Perplexity fail with an error, not a panic,
// on a model whose file has no vocabulary.
func TestNoTokenizer(t *testing.T) {
	m, err := Load(newTiny(6).file(t, tensor.F32), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Tokenizer() != nil {
		t.Fatal("Tokenizer() is not nil for a file without tokenizer.ggml.model")
	}
	if _, err := Generate(context.Background(), m, "hi", GenerateOptions{NPredict: 1}, nil); err == nil || !strings.Contains(err.Error(), "no tokenizer") {
		t.Errorf("Generate: %v; want a no-tokenizer error", err)
	}
	if _, err := Perplexity(context.Background(), m, "hi", PerplexityOptions{}, nil); err == nil || !strings.Contains(err.Error(), "no tokenizer") {
		t.Errorf("Perplexity: %v; want a no-tokenizer error", err)
	}
}
