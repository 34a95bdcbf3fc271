package bench

import (
	"fmt"
	"path/filepath"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/synth"
	"github.com/infergo/infer/tensor"
)

// Model describes a model file the way llama-bench's model, size and params columns
// do.
type Model struct {
	Filename string
	Desc     string // llama_model_desc: "llama 7B Q4_0", "llama ?B all F32 (guessed)"
	Size     int64  // bytes of tensor data
	Params   int64  // number of weights
	NVocab   int
	BOS      int32 // token a run starts with; -1 when the vocabulary adds none
}

// Describe reads a GGUF file's metadata and tensor directory.
func Describe(path string) (Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return Model{}, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	m := Model{Filename: filepath.Base(path), BOS: -1}
	for _, ti := range f.Tensors {
		m.Size += int64(ti.Bytes())
		m.Params += int64(ti.Elements())
	}
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	m.NVocab = len(tokens)
	if m.NVocab == 0 {
		return m, fmt.Errorf("bench: %s: no tokenizer.ggml.tokens", path)
	}
	if addsBOS(f) {
		bos, err := f.Uint("tokenizer.ggml.bos_token_id")
		if err == nil && bos < uint64(m.NVocab) {
			m.BOS = int32(bos)
		}
	}
	m.Desc = fmt.Sprintf("%s %s %s", f.Arch(), sizeLabel(f, m.NVocab), ftypeName(f))
	return m, nil
}

// addsBOS reports whether tokenization adds BOS: tokenizer.ggml.add_bos_token, else
// llama.cpp's default for the vocabulary (SentencePiece and LLaMA-3 BPE add one).
func addsBOS(f *gguf.File) bool {
	if b, err := f.Bool("tokenizer.ggml.add_bos_token"); err == nil {
		return b
	}
	model, _ := f.String("tokenizer.ggml.model")
	pre, _ := f.String("tokenizer.ggml.pre")
	return model == "llama" || (model == "gpt2" && (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3"))
}

// sizeLabel is llama.cpp's LLM_ARCH_LLAMA model type, chosen by block count ("?B"
// when the count is not one of a known model's).
func sizeLabel(f *gguf.File, nVocab int) string {
	n, _ := f.Uint(f.Arch() + ".block_count")
	switch n {
	case 16, 22:
		return "1B"
	case 26, 28:
		return "3B"
	case 30:
		return "256M"
	case 32:
		switch {
		case nVocab == 49152:
			return "3B"
		case nVocab < 40000:
			return "7B"
		}
		return "8B"
	case 36:
		return "8B"
	case 40:
		return "13B"
	case 48:
		return "34B"
	case 60:
		return "30B"
	case 80:
		h, _ := f.Uint(f.Arch() + ".attention.head_count")
		kv, err := f.Uint(f.Arch() + ".attention.head_count_kv")
		if err != nil || h == kv {
			return "65B"
		}
		return "70B"
	}
	return "?B"
}

// ftypeName is llama.cpp's name of general.file_type; without one, the type of most
// tensors, marked "(guessed)" as llama.cpp does.
func ftypeName(f *gguf.File) string {
	if id, err := f.Uint("general.file_type"); err == nil {
		if s := synth.FileTypeDesc(uint32(id)); s != "" {
			return s
		}
		return "unknown, may not work"
	}
	count := map[tensor.DType]int{}
	best := tensor.F32
	for _, ti := range f.Tensors {
		count[ti.Type]++
		if count[ti.Type] > count[best] {
			best = ti.Type
		}
	}
	for _, ft := range synth.FileTypes() {
		if ft.Weight == best {
			return ft.Desc + " (guessed)"
		}
	}
	return best.String() + " (guessed)"
}
