// Package model loads LLaMA-family GGUF models and runs them: the llama architecture,
// the KV cache, sampling, generation and perplexity, behind a small public API.
//
// The forward pass (llama.go) is written against backend.Device and reproduces
// llama.cpp's graph for LLM_ARCH_LLAMA. On the CPU device its logits match llama.cpp's
// CPU backend within 1e-5 for F32 weights, and bit for bit for Q8_0 models
// (conformance_test.go).
package model

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/tokenizer"
	"github.com/infergo/infer/tensor"
)

// Options configure Load. The zero value runs on the CPU with all cores, the model's
// training context, batches of 512 and an F32 KV cache.
type Options struct {
	Threads     int // CPU threads; 0 = runtime.NumCPU()
	ContextSize int // KV cache length in tokens; 0 = the model's training context
	BatchSize   int // tokens per forward pass for long inputs; 0 = 512
	// KVType is the KV cache element type: F16 (llama.cpp's default, which the CLI
	// passes) or F32. tensor.F32 is DType 0, so the zero value means F32.
	KVType tensor.DType
	Device backend.Device // where to run; nil = the CPU backend with Threads
	Logf   func(format string, args ...any)
}

// resolve fills in the defaults for a model with config c.
func (o Options) resolve(c Config) Options {
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	if o.ContextSize <= 0 {
		o.ContextSize = c.NCtxTrain
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 512
	}
	o.BatchSize = min(o.BatchSize, o.ContextSize)
	return o
}

// Model is a loaded model: weights on a device and a tokenizer.
type Model struct {
	cfg     Config
	opts    Options
	file    *gguf.File
	tok     *tokenizer.Tokenizer
	dev     backend.Device
	ownDev  bool             // dev was made by Load and is closed by Close
	bufs    []backend.Buffer // device copies of weights, freed by Close
	weights weights
}

// Close releases the model's device memory and unmaps the file. Sessions must be
// closed first.
func (m *Model) Close() error {
	var errs []error
	for _, b := range m.bufs {
		m.dev.Free(b)
	}
	m.bufs = nil
	if m.ownDev && m.dev != nil {
		errs = append(errs, m.dev.Close())
		m.dev = nil
	}
	if m.file != nil {
		errs = append(errs, m.file.Close())
		m.file = nil
	}
	return errors.Join(errs...)
}

// Config returns the model's hyperparameters.
func (m *Model) Config() Config { return m.cfg }

// Options returns the options the model was loaded with, defaults filled in.
func (m *Model) Options() Options { return m.opts }

// Tokenizer returns the model's tokenizer, or nil when the file has no vocabulary.
func (m *Model) Tokenizer() *tokenizer.Tokenizer { return m.tok }

// Device returns the device the model runs on.
func (m *Model) Device() backend.Device { return m.dev }

// rope is the rotary embedding of the model's queries and keys.
func (m *Model) rope() backend.Rope {
	return backend.Rope{HeadDim: m.cfg.HeadDim, Dims: m.cfg.RopeDims, Base: m.cfg.RopeBase,
		Scale: m.cfg.RopeScale, Factors: m.weights.ropeFreqs}
}

// attention describes the model's attention; the scale is llama.cpp's
// 1.0f/sqrtf(n_embd_head).
func (m *Model) attention() backend.Attention {
	return backend.Attention{Heads: m.cfg.NHead, KVHeads: m.cfg.NHeadKV, HeadDim: m.cfg.HeadDim,
		Scale: 1 / float32(math.Sqrt(float64(m.cfg.HeadDim)))}
}

func (m *Model) logf(format string, args ...any) {
	if m.opts.Logf != nil {
		m.opts.Logf(format, args...)
	}
}

// errClosed is returned by a session whose model or session was closed.
var errClosed = errors.New("model: session closed")

func wrapf(err error, format string, args ...any) error {
	return fmt.Errorf("model: "+format+": %w", append(args, err)...)
}
