package synth

import (
	"bytes"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/tensor"
)

// TestCheckReferenceFiles runs Check on the llama.cpp-made files of the shared test
// data: real trained, quantized with fallbacks, and a 32k-vocabulary model.
func TestCheckReferenceFiles(t *testing.T) {
	for _, name := range []string{
		"stories260K-F32.gguf", "stories260K-Q4_0.gguf", "stories260K-Q3_K_M.gguf",
		"synth-256-F32.gguf", "synth-256-Q4_K_M.gguf", "synth-256-Q6_K.gguf",
		"llama-2-tiny-random.gguf",
	} {
		f, err := gguf.Open(testdata.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
}

// micro is a shape small enough to write once per test case.
var micro = Shape{Name: "micro", NEmbd: 32, NLayer: 1, NHead: 2, NHeadKV: 1, NFF: 64, NVocab: 400,
	NCtx: 64, RopeBase: 10000, NormEps: 1e-5, VocabKind: VocabSPM}

// build writes micro (F32) after letting edit change the writer, and parses it.
func build(t *testing.T, s Shape, edit func(w *gguf.Writer, v *Vocab)) *gguf.File {
	t.Helper()
	p, err := NewPlan(s, FileType{Name: "F32", Weight: tensor.F32})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVocab(s.VocabKind, s.NVocab)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(p, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	edit(w, v)
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

// TestCheckRejects breaks one rule per case and expects Check to name it.
func TestCheckRejects(t *testing.T) {
	tok := func(w *gguf.Writer, v *Vocab) { w.Set("tokenizer.ggml.tokens", gguf.Strings(v.Tokens)) }
	tests := []struct {
		name string
		edit func(w *gguf.Writer, v *Vocab)
		want string
	}{
		{"ok", func(w *gguf.Writer, v *Vocab) {}, ""},
		{"arch", func(w *gguf.Writer, v *Vocab) { w.Set("general.architecture", gguf.Str("gpt2")) }, "want one of llama, qwen2, qwen3"},
		{"no eps", func(w *gguf.Writer, v *Vocab) { w.Delete("llama.attention.layer_norm_rms_epsilon") }, "layer_norm_rms_epsilon"},
		{"rope dims", func(w *gguf.Writer, v *Vocab) { w.Set("llama.rope.dimension_count", gguf.Uint32(8)) }, "head size 16"},
		{"heads", func(w *gguf.Writer, v *Vocab) { w.Set("llama.attention.head_count_kv", gguf.Uint32(3)) }, "do not divide"},
		{"vocab_size", func(w *gguf.Writer, v *Vocab) { w.Set("llama.vocab_size", gguf.Uint32(32000)) }, "vocab_size"},
		{"duplicate", func(w *gguf.Writer, v *Vocab) { v.Tokens[300] = v.Tokens[299]; tok(w, v) }, "duplicate token"},
		{"empty token", func(w *gguf.Writer, v *Vocab) { v.Tokens[300] = ""; tok(w, v) }, "empty"},
		{"byte type", func(w *gguf.Writer, v *Vocab) {
			v.Types[13] = TokenNormal
			w.Set("tokenizer.ggml.token_type", gguf.Int32Array(v.Types))
		}, "not typed byte"},
		{"short scores", func(w *gguf.Writer, v *Vocab) { w.Set("tokenizer.ggml.scores", gguf.Float32Array(v.Scores[:10])) }, "scores"},
		{"bos", func(w *gguf.Writer, v *Vocab) { w.Set("tokenizer.ggml.bos_token_id", gguf.Uint32(400)) }, "outside"},
		{"tokenizer", func(w *gguf.Writer, v *Vocab) { w.Set("tokenizer.ggml.model", gguf.Str("bert")) }, "want llama or gpt2"},
		{"extra tensor", func(w *gguf.Writer, v *Vocab) {
			w.AddTensorBytes("blk.1.attn_q.weight", tensor.F32, []uint64{32}, make([]byte, 128))
		}, "not part of a llama model"},
		{"norm type", func(w *gguf.Writer, v *Vocab) {
			w.AddTensorBytes("rope_freqs.weight", tensor.F16, []uint64{8}, make([]byte, 16))
		}, "want F32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(build(t, micro, tt.edit))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Check = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestCheckBPE checks the LLaMA-3 style vocabulary and a broken merge.
func TestCheckBPE(t *testing.T) {
	s := micro
	s.VocabKind, s.NVocab = VocabBPE, 1000
	if err := Check(build(t, s, func(*gguf.Writer, *Vocab) {})); err != nil {
		t.Fatalf("Check: %v", err)
	}
	f := build(t, s, func(w *gguf.Writer, v *Vocab) {
		v.Merges[5] = "Ġ Ġ!!"
		w.Set("tokenizer.ggml.merges", gguf.Strings(v.Merges))
	})
	if err := Check(f); err == nil || !strings.Contains(err.Error(), "merge 5") {
		t.Fatalf("Check = %v, want a merge error", err)
	}
}
