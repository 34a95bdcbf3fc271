// Package model loads LLaMA-family GGUF models and runs them: the llama architecture,
// the KV cache, sampling, generation and perplexity.
//
// The public API: Load reads a file into a Model (Options choose the devices, context,
// batch sizes and KV cache type); Model.NewSession gives a Session, a KV cache whose
// Eval appends tokens and returns logits; Model.NewBatch evaluates several sessions'
// tokens in one forward pass; Generate, Perplexity and KLDivergence are the uses built
// on them, and NewSampler the token picker Generate uses. PlanFor and Neighbours let
// a caller see, before Load, how the layers will be placed over several devices; package
// gpu does the whole multi-GPU setup (devices, plan, peer transfers, Close) in one call.
// LoadContext is Load that a context can cancel between tensors. Errors callers branch
// on wrap the sentinels of errors.go (ErrClosed, ErrDoesNotFit, ...).
//
// Sessions of one Model may be used from several goroutines at once (each Session by one
// goroutine at a time), on the CPU and on GPUs; Model.Close waits for the calls in flight
// and releases every open session (lifetime.go).
//
// The forward pass (llama.go) is written against backend.Device and reproduces
// llama.cpp's graph for LLM_ARCH_LLAMA. On the CPU device, with an F32 KV cache, its
// logits match llama.cpp's CPU backend within 1e-5 for F32 weights, and bit for bit
// for Q8_0 models (conformance_test.go).
//
// A model may be split over several devices (Options.Devices): split.Make places
// contiguous ranges of layers, one stage per device, and the forward pass hands the
// hidden state from stage to stage with split.Transfer. With the f32 wire (the default)
// the logits of any split are bit-identical to those of one device of the same kind; the
// f16 wire (Options.Wire) halves the bytes each hop moves and rounds the hidden state.
package model

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/tokenizer"
	"github.com/infergo/infer/split"
)

// Options configure Load. The zero value runs on the CPU with all cores, a context of
// DefaultContextSize tokens (the model's training context when that is shorter),
// batches and micro-batches of 512 and an F16 KV cache (llama.cpp's defaults).
type Options struct {
	Threads int // CPU threads; 0 = runtime.NumCPU()
	// ContextSize is the KV cache length in tokens; 0 = DefaultContextSize, capped to
	// the model's training context (a 128k-context model does not get a 16 GiB cache
	// by default). A larger value than the training context is used as given.
	ContextSize int
	BatchSize   int // tokens per forward pass for long inputs (-b); 0 = 512
	// MicroBatch is the most tokens one stage computes at a time (-ub); 0 = 512. A batch
	// longer than it is cut into micro-batches that flow through the stages as a
	// pipeline: stage k works on micro-batch i+1 while stage k+1 works on i.
	MicroBatch int
	// KVType is the KV cache element type; the zero value is F16, as llama.cpp.
	KVType KVCacheType
	// Wire is the format of the hidden state on the hops between stages (--wire): the
	// zero value WireF32 is exact; WireF16 trades exactness for half the bytes on the
	// wire. One-stage plans ignore it.
	Wire WireFormat
	// Device is the single-device shortcut: run everything on it. Ignored when Devices
	// is set; nil with Devices empty runs on the CPU backend with Threads.
	Device backend.Device
	// Devices are the device slots the layers are split over, in pipeline order. One
	// GPU may appear as several slots (virtual devices: distinct Device values on one
	// GPU). The caller keeps ownership and closes them after the model.
	Devices []backend.Device
	// Split shapes the plan over Devices.
	Split SplitOptions
	// Logf, if not nil, receives Load's log lines: the model's shape and its plan.
	Logf func(format string, args ...any)
}

// SplitOptions shape how the layers are spread over Options.Devices.
type SplitOptions struct {
	// Ratios weight the device slots (-ts); nil weights them by free memory (devices
	// with a MemInfo method), else equally.
	Ratios []float64
	// GPULayers counts the layers placed on Devices, the output head counting as one
	// (-ngl); the layers before them run on a CPU device Load creates. 0, or more than
	// the model's layers, places everything on Devices.
	GPULayers int
	// Plan, if not nil, is used as is instead of planning (see PlanFor): the caller set
	// up the transfers between its neighbouring stages before loading.
	Plan *split.Plan
}

// DefaultContextSize is the context Options.ContextSize 0 asks for, llama.cpp's
// default n_ctx, unless the model's training context is shorter.
const DefaultContextSize = 4096

// resolve fills in the defaults for a model with config c.
func (o Options) resolve(c Config) Options {
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	if o.ContextSize <= 0 {
		o.ContextSize = DefaultContextSize
		if c.NCtxTrain > 0 {
			o.ContextSize = min(o.ContextSize, c.NCtxTrain)
		}
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 512
	}
	o.BatchSize = min(o.BatchSize, o.ContextSize)
	if o.MicroBatch <= 0 {
		o.MicroBatch = 512
	}
	o.MicroBatch = min(o.MicroBatch, o.BatchSize)
	if len(o.Devices) == 0 && o.Device != nil {
		o.Devices = []backend.Device{o.Device}
	}
	return o
}

// Model is a loaded model: weights placed on the stages of a plan, and a tokenizer.
type Model struct {
	cfg     Config
	opts    Options
	file    *gguf.File
	tok     *tokenizer.Tokenizer
	plan    *split.Plan
	stages  []stage // in pipeline order; the first embeds, the last owns the head
	layers  []layer // every layer, each on its stage's device
	cpu     backend.Device
	nextKey atomic.Int64 // numbers sessions for their recordings
	// life is held shared by every session call and exclusively by Close (lifetime.go);
	// it guards closed.
	life     sync.RWMutex
	closed   bool
	open     sync.Mutex            // guards sessions
	sessions map[*Session]struct{} // the sessions not closed yet
	batches  map[*Batch]struct{}   // the batches not closed yet
	rank     *rankRun              // one rank of a multi-process pipeline (LoadRank), else nil
}

// Close waits for the session calls in flight, then releases the device memory of the
// model and of every session still open, and unmaps the file. Later calls on the model
// or its sessions fail with ErrClosed (Session.Close returns nil); a second Close returns
// nil. Devices given in Options stay open: close them after the model.
func (m *Model) Close() error {
	m.life.Lock()
	defer m.life.Unlock()
	if m.closed {
		return nil
	}
	m.closeSessions()
	var errs []error
	for i := range m.stages {
		m.stages[i].free()
	}
	m.stages = nil
	m.closed = true
	if m.cpu != nil {
		errs = append(errs, m.cpu.Close())
		m.cpu = nil
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

// Device returns the device of the first stage (the only one without a split).
func (m *Model) Device() backend.Device {
	if len(m.stages) == 0 {
		return nil
	}
	return m.stages[0].dev
}

// Plan returns the placement of the model's layers over its devices.
func (m *Model) Plan() *split.Plan { return m.plan }

// rope is the rotary embedding of the model's queries and keys on stage st.
func (m *Model) rope(st *stage) backend.Rope {
	return backend.Rope{HeadDim: m.cfg.HeadDim, Dims: m.cfg.RopeDims, Base: m.cfg.RopeBase,
		Scale: m.cfg.RopeScale, NeoX: m.cfg.Block.RopeNeoX, Factors: st.ropeFreqs}
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

// errNoTokenizer is op's error for a model whose file has no vocabulary.
func errNoTokenizer(op string) error {
	return fmt.Errorf("%s: the model has no tokenizer (no tokenizer.ggml.model in the file)", op)
}

// wrapf wraps err as "model: <format>: err".
func wrapf(err error, format string, args ...any) error {
	return fmt.Errorf("model: "+format+": %w", append(args, err)...)
}
