// Package synth writes random-weight models with the exact tensor shapes of real ones
// (LLaMA-2 7B/13B/70B, LLaMA-3 8B, a 1B, Qwen2.5-7B, Qwen3-8B, and tiny models for
// tests), of the llama, qwen2 or qwen3 architecture, so that
// loading, memory planning and throughput can be exercised without downloading weights.
//
// Weights are generated directly in the target type: random quantized blocks with
// scales drawn from a range that keeps activations finite, never a float copy that is
// then quantized. Output is deterministic for a given seed whatever the thread count,
// and it is streamed, so a 70B model never has to fit in memory. Check validates a
// GGUF file against the rules llama.cpp applies when it loads a model of these
// architectures; it is used on the files written here and works on any such GGUF.
package synth

import (
	"fmt"
	"strings"
)

// Vocab kinds: the tokenizer family of a shape's vocabulary.
const (
	VocabSPM = "llama" // SentencePiece-style, byte fallback (LLaMA 1/2)
	VocabBPE = "gpt2"  // GPT-2-style byte-level BPE with merges (LLaMA 3)
	// VocabQwen2 is a byte-level BPE vocabulary with Qwen's pre-tokenizer and special
	// tokens (tokenizer.ggml.model "gpt2", pre "qwen2").
	VocabQwen2 = "qwen2"
)

// Architectures are the general.architecture values synth writes: the llama block, and
// qwen2 (q, k, v biases) and qwen3 (per-head q and k norms), both with NeoX rotation.
var Architectures = []string{"llama", "qwen2", "qwen3"}

// Shape is a model's hyperparameters: everything that decides tensor shapes and the
// metadata a loader reads.
type Shape struct {
	Name      string  // name used on the command line: tiny, 1b, 7b, ...
	Desc      string  // the real model it copies
	Arch      string  // general.architecture, one of Architectures ("" = llama)
	NEmbd     int     // embedding width (llama.embedding_length)
	NLayer    int     // transformer blocks
	NHead     int     // attention heads
	NHeadKV   int     // key/value heads (GQA when < NHead)
	KeyLength int     // head size when it is not NEmbd/NHead (<arch>.attention.key_length); 0 = NEmbd/NHead
	NFF       int     // feed-forward width
	NVocab    int     // vocabulary size
	NCtx      int     // training context length
	RopeBase  float32 // rope.freq_base
	NormEps   float32 // attention.layer_norm_rms_epsilon
	VocabKind string  // VocabSPM, VocabBPE or VocabQwen2
}

// Architecture is general.architecture: Arch, or llama when it is empty.
func (s Shape) Architecture() string {
	if s.Arch == "" {
		return "llama"
	}
	return s.Arch
}

// HeadDim is the width of one attention head: KeyLength, or NEmbd/NHead.
func (s Shape) HeadDim() int {
	if s.KeyLength > 0 {
		return s.KeyLength
	}
	return s.NEmbd / s.NHead
}

// QDim is the width of the query projection and the attention output: NHead heads.
func (s Shape) QDim() int { return s.NHead * s.HeadDim() }

// KVDim is the width of the key (and value) projection: NHeadKV heads of HeadDim.
func (s Shape) KVDim() int { return s.NHeadKV * s.HeadDim() }

// Params is the number of weights in the model, output head included (untied).
func (s Shape) Params() int64 {
	e, f, q, kv := int64(s.NEmbd), int64(s.NFF), int64(s.QDim()), int64(s.KVDim())
	layer := 2*e + 2*e*q + 2*e*kv + 3*e*f // 2 norms, wq wo, wk wv, gate up down
	switch s.Architecture() {
	case "qwen2":
		layer += q + 2*kv // biases
	case "qwen3":
		layer += 2 * int64(s.HeadDim()) // q and k norms
	}
	return 2*e*int64(s.NVocab) + e + int64(s.NLayer)*layer
}

// WithLayers returns s with n transformer blocks (a cheap variant for tests).
func (s Shape) WithLayers(n int) Shape {
	s.NLayer = n
	return s
}

// WithArch returns s with the block of architecture arch (one of Architectures); the
// dimensions and the vocabulary stay s's.
func (s Shape) WithArch(arch string) (Shape, error) {
	for _, a := range Architectures {
		if strings.EqualFold(a, arch) {
			s.Arch = a
			return s, nil
		}
	}
	return s, fmt.Errorf("synth: unknown architecture %q (want one of %s)", arch, strings.Join(Architectures, ", "))
}

// shapes lists the known shapes in the order the usage prints them.
var shapes = [...]Shape{
	{Name: "tiny", Desc: "tiny test model (every dimension a multiple of 256)",
		NEmbd: 256, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 512, NVocab: 512, NCtx: 512,
		RopeBase: 10000, NormEps: 1e-5, VocabKind: VocabSPM},
	{Name: "1b", Desc: "1B (LLaMA-3.2-1B layout, 32k SentencePiece vocab)",
		NEmbd: 2048, NLayer: 16, NHead: 32, NHeadKV: 8, NFF: 8192, NVocab: 32000, NCtx: 4096,
		RopeBase: 10000, NormEps: 1e-5, VocabKind: VocabSPM},
	{Name: "7b", Desc: "LLaMA-2-7B",
		NEmbd: 4096, NLayer: 32, NHead: 32, NHeadKV: 32, NFF: 11008, NVocab: 32000, NCtx: 4096,
		RopeBase: 10000, NormEps: 1e-5, VocabKind: VocabSPM},
	{Name: "8b", Desc: "LLaMA-3-8B",
		NEmbd: 4096, NLayer: 32, NHead: 32, NHeadKV: 8, NFF: 14336, NVocab: 128256, NCtx: 8192,
		RopeBase: 500000, NormEps: 1e-5, VocabKind: VocabBPE},
	{Name: "13b", Desc: "LLaMA-2-13B",
		NEmbd: 5120, NLayer: 40, NHead: 40, NHeadKV: 40, NFF: 13824, NVocab: 32000, NCtx: 4096,
		RopeBase: 10000, NormEps: 1e-5, VocabKind: VocabSPM},
	{Name: "70b", Desc: "LLaMA-2-70B",
		NEmbd: 8192, NLayer: 80, NHead: 64, NHeadKV: 8, NFF: 28672, NVocab: 32000, NCtx: 4096,
		RopeBase: 10000, NormEps: 1e-5, VocabKind: VocabSPM},
	{Name: "tiny-qwen3", Desc: "tiny qwen3 test model (head size 128, not n_embd/n_head)", Arch: "qwen3",
		NEmbd: 256, NLayer: 2, NHead: 4, NHeadKV: 2, KeyLength: 128, NFF: 512, NVocab: 512, NCtx: 512,
		RopeBase: 1000000, NormEps: 1e-6, VocabKind: VocabSPM},
	{Name: "qwen2.5-7b", Desc: "Qwen2.5-7B", Arch: "qwen2",
		NEmbd: 3584, NLayer: 28, NHead: 28, NHeadKV: 4, NFF: 18944, NVocab: 152064, NCtx: 32768,
		RopeBase: 1000000, NormEps: 1e-6, VocabKind: VocabQwen2},
	{Name: "qwen3-8b", Desc: "Qwen3-8B", Arch: "qwen3",
		NEmbd: 4096, NLayer: 36, NHead: 32, NHeadKV: 8, KeyLength: 128, NFF: 12288, NVocab: 151936, NCtx: 40960,
		RopeBase: 1000000, NormEps: 1e-6, VocabKind: VocabQwen2},
}

// Shapes returns the known shapes, smallest first.
func Shapes() []Shape { return shapes[:] }

// ShapeNames returns the names of the known shapes, for usage messages.
func ShapeNames() []string {
	names := make([]string, len(shapes))
	for i, s := range shapes {
		names[i] = s.Name
	}
	return names
}

// LookupShape returns the shape called name (case-insensitive).
func LookupShape(name string) (Shape, error) {
	for _, s := range shapes {
		if strings.EqualFold(s.Name, name) {
			return s, nil
		}
	}
	return Shape{}, fmt.Errorf("synth: unknown shape %q (want one of %s)", name, strings.Join(ShapeNames(), ", "))
}
