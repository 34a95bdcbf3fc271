// Package model loads LLaMA-family GGUF models and runs them: the llama architecture,
// the KV cache, sampling, generation and perplexity, behind a small public API.
//
// PLACEHOLDER: the API below is the contract; the implementation is being written.
package model

import (
	"errors"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/model/tokenizer"
	"github.com/infergo/infer/tensor"
)

// Options configure Load. The zero value runs on the CPU with all cores.
type Options struct {
	Threads     int            // CPU threads; 0 = runtime.NumCPU()
	ContextSize int            // KV cache length in tokens; 0 = the model's training context
	BatchSize   int            // tokens per forward pass for long inputs; 0 = 512
	KVType      tensor.DType   // KV cache element type, F16 (default, as llama.cpp) or F32
	Device      backend.Device // where to run; nil = the CPU backend with Threads
	Logf        func(format string, args ...any)
}

// Config is a model's hyperparameters, read from its GGUF metadata.
type Config struct {
	Arch      string
	NVocab    int
	NCtxTrain int
	NEmbd     int
	NLayer    int
	NHead     int
	NHeadKV   int
	HeadDim   int
	NFF       int
	RopeDims  int
	RopeBase  float32
	RopeScale float32
	NormEps   float32
}

// Model is a loaded model: weights on a device and a tokenizer.
type Model struct{}

// Load reads a GGUF file and places its weights on opts.Device.
func Load(path string, opts Options) (*Model, error) { return nil, errPlaceholder }

// Close releases the model's device memory and unmaps the file.
func (m *Model) Close() error { return nil }

// Config returns the model's hyperparameters.
func (m *Model) Config() Config { return Config{} }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *tokenizer.Tokenizer { return nil }

// NewSession returns a session with an empty KV cache of opts.ContextSize tokens.
func (m *Model) NewSession() (*Session, error) { return nil, errPlaceholder }

// Session is one sequence being evaluated: a KV cache and the position reached.
type Session struct{}

// Eval appends tokens at Pos() (cut into batches of Options.BatchSize) and returns the
// logits: for every token (len(tokens)·NVocab floats, row i predicting token i+1) when
// all is true, else for the last token only (NVocab floats).
func (s *Session) Eval(tokens []int32, all bool) ([]float32, error) { return nil, errPlaceholder }

// Pos is the number of tokens in the KV cache.
func (s *Session) Pos() int { return 0 }

// Reset empties the KV cache.
func (s *Session) Reset() {}

// Close releases the session's KV cache and scratch buffers.
func (s *Session) Close() error { return nil }

var errPlaceholder = errors.New("model: not implemented yet")
