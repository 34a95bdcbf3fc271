package tokenizer_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/tokenizer"
)

// parseGGUF writes metadata with gguf.Writer and parses it back.
func parseGGUF(t *testing.T, kv map[string]gguf.Value) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	for k, v := range kv {
		w.Set(k, v)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// spmKV is the metadata of a small SPM vocabulary ("▁a" is id 3).
func spmKV() map[string]gguf.Value {
	return map[string]gguf.Value{
		"tokenizer.ggml.model":      gguf.Str("llama"),
		"tokenizer.ggml.tokens":     gguf.Strings([]string{"<unk>", "<s>", "</s>", "▁a", "a"}),
		"tokenizer.ggml.scores":     gguf.Int32Array([]int32{0, 0, 0, -1, -2}),
		"tokenizer.ggml.token_type": gguf.Int32Array([]int32{2, 3, 3, 1, 1}),
	}
}

func TestFromGGUF(t *testing.T) {
	tests := []struct {
		name     string
		set      map[string]gguf.Value
		text     string
		want     []int32
		bos, eos int32
	}{
		{"llama defaults", nil, "a", []int32{1, 3}, 1, 2},
		{"no space prefix, EOS added", map[string]gguf.Value{
			"tokenizer.ggml.add_space_prefix": gguf.Bool(false),
			"tokenizer.ggml.add_bos_token":    gguf.Bool(false),
			"tokenizer.ggml.add_eos_token":    gguf.Bool(true),
		}, "a", []int32{4, 2}, 1, 2},
		{"ids from metadata; out-of-range id keeps the default", map[string]gguf.Value{
			"tokenizer.ggml.bos_token_id": gguf.Uint32(2),
			"tokenizer.ggml.eos_token_id": gguf.Uint32(4294967295),
		}, "a", []int32{2, 3}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := spmKV()
			for k, v := range tt.set {
				kv[k] = v
			}
			tok, err := tokenizer.FromGGUF(parseGGUF(t, kv))
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Encode(tt.text, true); !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q, true) = %v; want %v", tt.text, got, tt.want)
			}
			if tok.BOS() != tt.bos || tok.EOS() != tt.eos {
				t.Errorf("BOS, EOS = %d, %d; want %d, %d", tok.BOS(), tok.EOS(), tt.bos, tt.eos)
			}
		})
	}
}

func TestFromGGUFErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(kv map[string]gguf.Value)
	}{
		{"no model", func(kv map[string]gguf.Value) { delete(kv, "tokenizer.ggml.model") }},
		{"no tokens", func(kv map[string]gguf.Value) { delete(kv, "tokenizer.ggml.tokens") }},
		{"tokens of the wrong type", func(kv map[string]gguf.Value) { kv["tokenizer.ggml.tokens"] = gguf.Str("a") }},
		{"scores of the wrong type", func(kv map[string]gguf.Value) { kv["tokenizer.ggml.scores"] = gguf.Strings([]string{"x"}) }},
		{"flag of the wrong type", func(kv map[string]gguf.Value) { kv["tokenizer.ggml.add_bos_token"] = gguf.Uint8(1) }},
		{"gpt2 without merges", func(kv map[string]gguf.Value) { kv["tokenizer.ggml.model"] = gguf.Str("gpt2") }},
		{"unknown pre-tokenizer", func(kv map[string]gguf.Value) {
			kv["tokenizer.ggml.model"] = gguf.Str("gpt2")
			kv["tokenizer.ggml.pre"] = gguf.Str("no-such")
		}},
	}
	for _, tt := range tests {
		kv := spmKV()
		tt.mutate(kv)
		if _, err := tokenizer.FromGGUF(parseGGUF(t, kv)); err == nil {
			t.Errorf("%s: FromGGUF succeeded", tt.name)
		}
	}
}
