// Package synth writes random-weight llama models with the exact tensor shapes of real
// ones (LLaMA-2 7B/13B/70B, LLaMA-3 8B, a 1B, and a tiny model for tests), so that
// loading, memory planning and throughput can be exercised without downloading weights.
//
// Weights are generated directly in the target type: random quantized blocks with
// scales drawn from a range that keeps activations finite, never a float copy that is
// then quantized. Output is deterministic for a given seed whatever the thread count,
// and it is streamed, so a 70B model never has to fit in memory. Check validates a
// GGUF file against the rules llama.cpp applies when it loads a llama model; it is
// used on the files written here and works on any llama GGUF.
package synth

import (
	"fmt"
	"strings"
)

// Vocab kinds: the tokenizer family of a shape's vocabulary.
const (
	VocabSPM = "llama" // SentencePiece-style, byte fallback (LLaMA 1/2)
	VocabBPE = "gpt2"  // GPT-2-style byte-level BPE with merges (LLaMA 3)
)

// Shape is a model's hyperparameters: everything that decides tensor shapes and the
// metadata a loader reads.
type Shape struct {
	Name      string  // name used on the command line: tiny, 1b, 7b, ...
	Desc      string  // the real model it copies
	NEmbd     int     // embedding width (llama.embedding_length)
	NLayer    int     // transformer blocks
	NHead     int     // attention heads
	NHeadKV   int     // key/value heads (GQA when < NHead)
	NFF       int     // feed-forward width
	NVocab    int     // vocabulary size
	NCtx      int     // training context length
	RopeBase  float32 // rope.freq_base
	NormEps   float32 // attention.layer_norm_rms_epsilon
	VocabKind string  // VocabSPM or VocabBPE
}

// HeadDim is the width of one attention head.
func (s Shape) HeadDim() int { return s.NEmbd / s.NHead }

// KVDim is the width of the key (and value) projection: NHeadKV heads of HeadDim.
func (s Shape) KVDim() int { return s.NHeadKV * s.HeadDim() }

// Params is the number of weights in the model, output head included (untied).
func (s Shape) Params() int64 {
	e, f, kv := int64(s.NEmbd), int64(s.NFF), int64(s.KVDim())
	layer := 2*e + 2*e*e + 2*e*kv + 3*e*f // 2 norms, wq wo, wk wv, gate up down
	return 2*e*int64(s.NVocab) + e + int64(s.NLayer)*layer
}

// WithLayers returns s with n transformer blocks (a cheap variant for tests).
func (s Shape) WithLayers(n int) Shape {
	s.NLayer = n
	return s
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
