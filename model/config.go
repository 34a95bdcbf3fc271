package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/infergo/infer/model/gguf"
)

// Config is a model's hyperparameters, read from its GGUF metadata.
type Config struct {
	Arch      string  // general.architecture: llama, mistral, qwen2 or qwen3 (see Block)
	NVocab    int     // rows of token_embd.weight
	NCtxTrain int     // <arch>.context_length
	NEmbd     int     // <arch>.embedding_length
	NLayer    int     // <arch>.block_count
	NHead     int     // <arch>.attention.head_count
	NHeadKV   int     // <arch>.attention.head_count_kv (default NHead)
	HeadDim   int     // <arch>.attention.key_length (default NEmbd/NHead)
	NFF       int     // <arch>.feed_forward_length
	RopeDims  int     // <arch>.rope.dimension_count (default HeadDim)
	RopeBase  float32 // <arch>.rope.freq_base (default 10000)
	RopeScale float32 // 1/<arch>.rope.scaling.factor for linear scaling, else 1
	NormEps   float32 // <arch>.attention.layer_norm_rms_epsilon
	Block     Block   // how the architecture's block differs from llama's
}

// Block is what an architecture changes in the llama block, as data the forward pass
// (llama.go) reads: which optional tensors a layer has and how q and k are rotated.
// Every architecture Load accepts is the llama block with these switches.
type Block struct {
	// RopeNeoX rotates the element pairs (i, i+RopeDims/2) of each head instead of
	// (2i, 2i+1): Hugging Face's rotate_half order, kept by the qwen2/qwen3 converters.
	RopeNeoX bool
	// QKVBias: blk.N.attn_{q,k,v}.bias, added to q, k and v after their projections.
	QKVBias Need
	// QKNorm: blk.N.attn_{q,k}_norm.weight (HeadDim elements), an RMS norm of every head
	// of q and k before the rotation.
	QKNorm Need
}

// Need says whether a block's optional tensors are in an architecture's files.
type Need uint8

// The values of Need.
const (
	Never    Need = iota // not read, even when the file has them
	Optional             // used when the file has them
	Required             // a file without them is an error
)

// architectures are the general.architecture values Load accepts, as llama.cpp's
// llm_build_llama, llm_build_qwen2 and llm_build_qwen3 read them (llama's attention
// biases are optional there too).
var architectures = map[string]Block{
	"llama":   {QKVBias: Optional},
	"mistral": {QKVBias: Optional},
	"qwen2":   {RopeNeoX: true, QKVBias: Required},
	"qwen3":   {RopeNeoX: true, QKNorm: Required},
}

// KVDim is the width of one K or V cache row: NHeadKV·HeadDim.
func (c Config) KVDim() int { return c.NHeadKV * c.HeadDim }

// QDim is the width of the attention's query and output: NHead·HeadDim.
func (c Config) QDim() int { return c.NHead * c.HeadDim }

// configFromGGUF reads the hyperparameters of f, as llama.cpp's llm_load_hparams does for
// LLM_ARCH_LLAMA (qwen2 and qwen3 read the same keys under their prefix), and checks
// that they describe a model this package can run.
func configFromGGUF(f *gguf.File) (Config, error) {
	c := Config{Arch: f.Arch()}
	block, ok := architectures[c.Arch]
	if !ok {
		return c, fmt.Errorf("general.architecture %q: %w (want llama, mistral, qwen2 or qwen3)", c.Arch, ErrUnsupportedArchitecture)
	}
	c.Block = block
	r := metaReader{f: f, prefix: c.Arch + "."}
	c.NCtxTrain = r.int("context_length", -1)
	c.NEmbd = r.int("embedding_length", -1)
	c.NLayer = r.int("block_count", -1)
	c.NFF = r.int("feed_forward_length", -1)
	c.NHead = r.int("attention.head_count", -1)
	c.NHeadKV = r.int("attention.head_count_kv", c.NHead)
	if c.NHead > 0 {
		c.HeadDim = r.int("attention.key_length", c.NEmbd/c.NHead)
		if v := r.int("attention.value_length", c.HeadDim); v != c.HeadDim && r.err == nil {
			r.err = fmt.Errorf("%sattention.value_length %d differs from key_length %d: not supported", r.prefix, v, c.HeadDim)
		}
	}
	c.RopeDims = r.int("rope.dimension_count", c.HeadDim)
	c.RopeBase = r.float("rope.freq_base", 10000)
	c.NormEps = r.float("attention.layer_norm_rms_epsilon", -1)
	c.RopeScale = 1
	switch typ := r.string("rope.scaling.type", "none"); typ {
	case "none":
	case "linear":
		if factor := r.float("rope.scaling.factor", 0); factor > 0 {
			c.RopeScale = 1 / factor
		}
	default:
		if r.err == nil {
			r.err = fmt.Errorf("%srope.scaling.type %q: not supported (want none or linear)", r.prefix, typ)
		}
	}
	if r.err != nil {
		return c, r.err
	}
	ti, ok := f.Tensor("token_embd.weight")
	if !ok || len(ti.Dims) != 2 {
		return c, errors.New("tensor \"token_embd.weight\": missing or not 2-D")
	}
	c.NVocab = int(ti.Dims[1])
	return c, c.check()
}

// check reports hyperparameters that cannot describe a llama model.
func (c Config) check() error {
	switch {
	case c.NEmbd <= 0 || c.NLayer <= 0 || c.NFF <= 0 || c.NVocab <= 0 || c.NCtxTrain <= 0:
		return fmt.Errorf("config %+v: sizes must be positive", c)
	case c.NHead <= 0 || c.NHeadKV <= 0 || c.NHead%c.NHeadKV != 0:
		return fmt.Errorf("%s.attention.head_count %d, head_count_kv %d: not a whole number of query heads per K/V head", c.Arch, c.NHead, c.NHeadKV)
	case c.HeadDim <= 0:
		return fmt.Errorf("%s.attention.key_length %d: must be positive", c.Arch, c.HeadDim)
	case c.RopeDims <= 0 || c.RopeDims%2 != 0 || c.RopeDims > c.HeadDim:
		return fmt.Errorf("%s.rope.dimension_count %d: must be even and at most the head size %d", c.Arch, c.RopeDims, c.HeadDim)
	case !(c.NormEps >= 0) || !(c.RopeBase > 0):
		return fmt.Errorf("%s: layer_norm_rms_epsilon %g, rope.freq_base %g: out of range", c.Arch, c.NormEps, c.RopeBase)
	}
	return nil
}

// metaReader reads <prefix>key values, keeping the first error. A default of -1 (or
// "" for strings never) marks a required key.
type metaReader struct {
	f      *gguf.File
	prefix string
	err    error
}

func (r *metaReader) int(key string, def int) int {
	u, err := r.f.Uint(r.prefix + key)
	switch {
	case errors.Is(err, gguf.ErrNotFound) && def >= 0:
		return def
	case err == nil && u > math.MaxInt32:
		err = fmt.Errorf("%s%s = %d: too large", r.prefix, key, u)
	}
	r.keep(err)
	return int(u)
}

func (r *metaReader) float(key string, def float32) float32 {
	x, err := r.f.Float(r.prefix + key)
	if errors.Is(err, gguf.ErrNotFound) && def >= 0 {
		return def
	}
	r.keep(err)
	return float32(x)
}

func (r *metaReader) string(key, def string) string {
	s, err := r.f.String(r.prefix + key)
	if errors.Is(err, gguf.ErrNotFound) {
		return def
	}
	r.keep(err)
	return s
}

func (r *metaReader) keep(err error) {
	if r.err == nil && err != nil {
		r.err = err
	}
}
