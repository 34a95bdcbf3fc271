package synth

import (
	"errors"
	"fmt"
	"strings"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/tensor"
)

// Check reports every way f breaks the rules a model must follow to load, in llama.cpp
// (load_hparams, load_vocab and load_tensors for LLM_ARCH_LLAMA, _QWEN2 and _QWEN3) and
// here:
//
//   - general.architecture is one of Architectures; under its prefix, context_length,
//     embedding_length, block_count, feed_forward_length, attention.head_count and
//     attention.layer_norm_rms_epsilon are present; head_count_kv divides head_count,
//     which divides embedding_length unless attention.key_length gives the head size;
//     rope.dimension_count, if present, is the head size; vocab_size, if present, is
//     the number of tokens.
//   - the vocabulary is complete (see checkVocab).
//   - the tensors are exactly those llama.cpp creates (output.weight and
//     rope_freqs.weight optional), with its shapes; matrices have a weight type whose
//     block divides the row, norm weights are F32. (The gguf reader has already
//     checked data bounds, overlap and alignment.)
//
// The error joins one error per problem found.
func Check(f *gguf.File) error {
	s, err := ShapeOf(f)
	if err != nil {
		return err
	}
	return errors.Join(checkVocab(f, s.NVocab), checkTensors(f.Tensors, s))
}

// ShapeOf reads a model's hyperparameters from f's metadata, checking the keys and
// relations llama.cpp requires. Name is general.name; NVocab is the token count.
func ShapeOf(f *gguf.File) (Shape, error) {
	var s Shape
	var err error
	if s, err = s.WithArch(f.Arch()); err != nil || f.Arch() != s.Arch {
		return Shape{}, fmt.Errorf("synth: general.architecture %q: want one of %s", f.Arch(), strings.Join(Architectures, ", "))
	}
	a := s.Arch + "."
	s.Name, _ = f.String("general.name")
	var errs []error
	need := func(dst *int, key string) {
		v, err := f.Uint(a + key)
		if err == nil && (v == 0 || v > 1<<31) {
			err = fmt.Errorf("key %s%s: %d out of range", a, key, v)
		}
		errs = append(errs, err)
		*dst = int(v)
	}
	need(&s.NCtx, "context_length")
	need(&s.NEmbd, "embedding_length")
	need(&s.NLayer, "block_count")
	need(&s.NFF, "feed_forward_length")
	need(&s.NHead, "attention.head_count")
	eps, err := f.Float(a + "attention.layer_norm_rms_epsilon")
	s.NormEps = float32(eps)
	errs = append(errs, err)
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	s.NVocab = len(tokens)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return Shape{}, fmt.Errorf("synth: %w", err)
	}
	s.NHeadKV = s.NHead
	if _, ok := f.Value(a + "attention.head_count_kv"); ok {
		need(&s.NHeadKV, "attention.head_count_kv")
	}
	if _, ok := f.Value(a + "attention.key_length"); ok {
		need(&s.KeyLength, "attention.key_length")
	}
	s.RopeBase = 10000
	if _, ok := f.Value(a + "rope.freq_base"); ok {
		b, err := f.Float(a + "rope.freq_base")
		s.RopeBase = float32(b)
		errs = append(errs, err)
	}
	s.VocabKind, _ = f.String("tokenizer.ggml.model")
	errs = append(errs, checkHeads(f, s))
	if err := errors.Join(errs...); err != nil {
		return Shape{}, fmt.Errorf("synth: %w", err)
	}
	return s, nil
}

// checkHeads checks the head counts, rope.dimension_count and vocab_size.
func checkHeads(f *gguf.File, s Shape) error {
	a := s.Arch + "."
	if s.NHeadKV == 0 || (s.KeyLength == 0 && s.NEmbd%s.NHead != 0) || s.NHead%s.NHeadKV != 0 {
		return fmt.Errorf("%d heads and %d KV heads do not divide embedding_length %d", s.NHead, s.NHeadKV, s.NEmbd)
	}
	if _, ok := f.Value(a + "rope.dimension_count"); ok {
		if r, err := f.Uint(a + "rope.dimension_count"); err != nil || r != uint64(s.HeadDim()) {
			return fmt.Errorf("key %srope.dimension_count %d (%v): llama.cpp wants the head size %d", a, r, err, s.HeadDim())
		}
	}
	if _, ok := f.Value(a + "vocab_size"); ok {
		if n, err := f.Uint(a + "vocab_size"); err != nil || n != uint64(s.NVocab) {
			return fmt.Errorf("key %svocab_size %d (%v): the vocabulary has %d tokens", a, n, err, s.NVocab)
		}
	}
	return nil
}

// checkTensors checks that infos are exactly the tensors of shape s.
func checkTensors(infos []gguf.TensorInfo, s Shape) error {
	want := Tensors(s, 0)
	want = append(want, TensorSpec{Name: "rope_freqs.weight", Dims: []uint64{uint64(s.HeadDim() / 2)}, Norm: true})
	optional := map[string]bool{"output.weight": true, "rope_freqs.weight": true}
	byName := make(map[string]TensorSpec, len(want))
	for _, t := range want {
		byName[t.Name] = t
	}
	var errs []error
	for _, ti := range infos {
		t, ok := byName[ti.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("tensor %s: not part of a %s model (llama.cpp: wrong number of tensors)", ti.Name, s.Architecture()))
			continue
		}
		delete(byName, ti.Name)
		errs = append(errs, checkTensor(ti, t))
	}
	for _, t := range want {
		if _, missing := byName[t.Name]; missing && !optional[t.Name] {
			errs = append(errs, fmt.Errorf("tensor %s: missing", t.Name))
		}
	}
	return errors.Join(errs...)
}

// weightTypes are the types a llama matrix may have here.
var weightTypes = map[tensor.DType]bool{
	tensor.F32: true, tensor.F16: true, tensor.BF16: true, tensor.Q8_0: true,
	tensor.Q4_0: true, tensor.Q4_1: true, tensor.Q5_0: true, tensor.Q5_1: true,
	tensor.Q2_K: true, tensor.Q3_K: true, tensor.Q4_K: true, tensor.Q5_K: true, tensor.Q6_K: true,
}

// checkTensor compares one tensor's shape and type with the expected spec.
func checkTensor(ti gguf.TensorInfo, t TensorSpec) error {
	if fmt.Sprint(ti.Dims) != fmt.Sprint(t.Dims) {
		return fmt.Errorf("tensor %s: shape %v, want %v", ti.Name, ti.Dims, t.Dims)
	}
	if (t.Norm || t.Bias) && ti.Type != tensor.F32 {
		return fmt.Errorf("tensor %s: type %v, want F32", ti.Name, ti.Type)
	}
	if !t.Norm && !t.Bias && !weightTypes[ti.Type] {
		return fmt.Errorf("tensor %s: type %v is not a weight type", ti.Name, ti.Type)
	}
	if bs := uint64(ti.Type.BlockSize()); ti.Dims[0]%bs != 0 {
		return fmt.Errorf("tensor %s: row of %d is not a multiple of the %v block size %d", ti.Name, ti.Dims[0], ti.Type, bs)
	}
	return nil
}
