package synth

import (
	"fmt"
	"io"
	"runtime"

	"github.com/infergo/infer/model/gguf"
)

// Options control Write.
type Options struct {
	Seed    uint64 // weight seed; the vocabulary does not depend on it
	Threads int    // generator goroutines; 0 = runtime.NumCPU()
	Name    string // general.name; "" = "synth-<shape>-<type>"
	// Progress, when set, is called after each tensor with the bytes of tensor data
	// written so far and the total.
	Progress func(done, total int64)
}

// Write generates the model planned by p and writes it to path as a GGUF file. The
// weights are streamed: memory use is a few megabytes per thread whatever the model.
func Write(path string, p *Plan, opts Options) error {
	w, err := NewWriter(p, opts)
	if err != nil {
		return err
	}
	if err := w.WriteFile(path); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}

// NewWriter returns a gguf.Writer holding p's metadata, vocabulary and tensors; the
// weights are generated while it writes.
func NewWriter(p *Plan, opts Options) (*gguf.Writer, error) {
	v, err := NewVocab(p.Shape.VocabKind, p.Shape.NVocab)
	if err != nil {
		return nil, err
	}
	if opts.Threads <= 0 {
		opts.Threads = runtime.NumCPU()
	}
	if opts.Name == "" {
		opts.Name = "synth-" + p.Shape.Name + "-" + p.FileType.Name
	}
	w := gguf.NewWriter()
	setMetadata(w, p, opts.Name)
	setVocab(w, v)
	var done int64
	total := p.Bytes()
	for i, t := range p.Tensors {
		fill, err := filler(t.Type)
		if err != nil {
			return nil, fmt.Errorf("synth: tensor %s: %w", t.Name, err)
		}
		switch {
		case t.Norm:
			fill = fillNorm
		case t.Bias:
			fill = fillBias
		}
		s := &tensorStream{spec: t, index: i, seed: opts.Seed, threads: opts.Threads, fill: fill}
		err = w.AddTensor(t.Name, t.Type, t.Dims, func(out io.Writer) error {
			_, err := s.WriteTo(out)
			done += t.Bytes()
			if err == nil && opts.Progress != nil {
				opts.Progress(done, total)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("synth: %w", err)
		}
	}
	return w, nil
}

// setMetadata sets the general.* and <arch>.* keys llama.cpp reads for the shape's
// architecture (LLM_ARCH_LLAMA, _QWEN2, _QWEN3: the same keys under their prefix).
func setMetadata(w *gguf.Writer, p *Plan, name string) {
	s := p.Shape
	a := s.Architecture() + "."
	w.Set("general.architecture", gguf.Str(s.Architecture()))
	w.Set("general.name", gguf.Str(name))
	w.Set("general.file_type", gguf.Uint32(p.FileType.ID))
	if p.FileType.Weight.BlockSize() > 1 {
		w.Set("general.quantization_version", gguf.Uint32(2))
	}
	w.Set(a+"context_length", gguf.Uint32(uint32(s.NCtx)))
	w.Set(a+"embedding_length", gguf.Uint32(uint32(s.NEmbd)))
	w.Set(a+"block_count", gguf.Uint32(uint32(s.NLayer)))
	w.Set(a+"feed_forward_length", gguf.Uint32(uint32(s.NFF)))
	w.Set(a+"rope.dimension_count", gguf.Uint32(uint32(s.HeadDim())))
	w.Set(a+"attention.head_count", gguf.Uint32(uint32(s.NHead)))
	w.Set(a+"attention.head_count_kv", gguf.Uint32(uint32(s.NHeadKV)))
	if s.KeyLength > 0 {
		w.Set(a+"attention.key_length", gguf.Uint32(uint32(s.KeyLength)))
		w.Set(a+"attention.value_length", gguf.Uint32(uint32(s.KeyLength)))
	}
	w.Set(a+"attention.layer_norm_rms_epsilon", gguf.Float32(s.NormEps))
	w.Set(a+"rope.freq_base", gguf.Float32(s.RopeBase))
	w.Set(a+"vocab_size", gguf.Uint32(uint32(s.NVocab)))
}

// setVocab sets the tokenizer.ggml.* keys.
func setVocab(w *gguf.Writer, v *Vocab) {
	w.Set("tokenizer.ggml.model", gguf.Str(v.Model))
	if v.Pre != "" {
		w.Set("tokenizer.ggml.pre", gguf.Str(v.Pre))
	}
	w.Set("tokenizer.ggml.tokens", gguf.Strings(v.Tokens))
	if v.Scores != nil {
		w.Set("tokenizer.ggml.scores", gguf.Float32Array(v.Scores))
	}
	w.Set("tokenizer.ggml.token_type", gguf.Int32Array(v.Types))
	if v.Merges != nil {
		w.Set("tokenizer.ggml.merges", gguf.Strings(v.Merges))
	}
	w.Set("tokenizer.ggml.bos_token_id", gguf.Uint32(uint32(v.BOS)))
	w.Set("tokenizer.ggml.eos_token_id", gguf.Uint32(uint32(v.EOS)))
	if v.UNK >= 0 {
		w.Set("tokenizer.ggml.unknown_token_id", gguf.Uint32(uint32(v.UNK)))
	}
	w.Set("tokenizer.ggml.add_bos_token", gguf.Bool(!v.NoBOS))
	w.Set("tokenizer.ggml.add_eos_token", gguf.Bool(false))
}
