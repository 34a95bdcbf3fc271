package model

import (
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/tokenizer"
	"github.com/infergo/infer/tensor"
)

// weights are the model's tensors on its device; every matrix is (out, in), one row
// per output, as GGUF stores it.
type weights struct {
	tokenEmbd  backend.Buffer // (vocab, dim)
	outputNorm backend.Buffer // (1, dim)
	output     backend.Buffer // (vocab, dim); token_embd when the file has no output.weight
	ropeFreqs  backend.Buffer // (1, ropeDims/2) or nil
	layers     []layer
}

// layer is one transformer block.
type layer struct {
	attnNorm backend.Buffer // (1, dim)
	wq       backend.Buffer // (nHead·headDim, dim)
	wk       backend.Buffer // (nHeadKV·headDim, dim)
	wv       backend.Buffer // (nHeadKV·headDim, dim)
	wo       backend.Buffer // (dim, nHead·headDim)
	ffnNorm  backend.Buffer // (1, dim)
	gate     backend.Buffer // (ff, dim)
	up       backend.Buffer // (ff, dim)
	down     backend.Buffer // (dim, ff)
}

// wrapper is implemented by devices that can use host memory in place (the CPU device),
// so weights are used straight from the mapped file instead of being copied.
type wrapper interface {
	Wrap(dt tensor.DType, rows, cols int, data []byte) (backend.Buffer, error)
}

// Load reads a GGUF file and places its weights on opts.Device (the CPU when nil). The
// file stays mapped until Close.
func Load(path string, opts Options) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m, err := fromFile(f, opts)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("model: %s: %w", path, err)
	}
	return m, nil
}

// fromFile builds a model from a parsed file; on success the model owns f.
func fromFile(f *gguf.File, opts Options) (*Model, error) {
	cfg, err := configFromGGUF(f)
	if err != nil {
		return nil, err
	}
	opts = opts.resolve(cfg)
	m := &Model{cfg: cfg, opts: opts, file: f, dev: opts.Device}
	if m.dev == nil {
		m.dev, m.ownDev = cpu.New(opts.Threads), true
	}
	if _, err := f.String("tokenizer.ggml.model"); err == nil {
		if m.tok, err = tokenizer.FromGGUF(f); err != nil {
			m.Close()
			return nil, err
		}
	}
	if err := m.loadWeights(); err != nil {
		m.Close()
		return nil, err
	}
	if err := m.dev.Sync(); err != nil {
		m.Close()
		return nil, fmt.Errorf("upload weights to %s: %w", m.dev.Name(), err)
	}
	m.logf("model: %s, %d layers, dim %d, %d heads (%d KV) of %d, ff %d, vocab %d, on %s",
		cfg.Arch, cfg.NLayer, cfg.NEmbd, cfg.NHead, cfg.NHeadKV, cfg.HeadDim, cfg.NFF, cfg.NVocab, m.dev.Name())
	return m, nil
}

// loadWeights validates every tensor's name, shape and type and places it on the device.
func (m *Model) loadWeights() error {
	c := m.cfg
	w := &m.weights
	var err error
	ld := func(name string, matrix bool, dims ...int) backend.Buffer {
		var b backend.Buffer
		if err == nil {
			b, err = m.tensor(name, matrix, dims)
		}
		return b
	}
	w.tokenEmbd = ld("token_embd.weight", true, c.NEmbd, c.NVocab)
	w.outputNorm = ld("output_norm.weight", false, c.NEmbd)
	w.output = w.tokenEmbd
	if _, ok := m.file.Tensor("output.weight"); ok {
		w.output = ld("output.weight", true, c.NEmbd, c.NVocab)
	}
	if _, ok := m.file.Tensor("rope_freqs.weight"); ok {
		w.ropeFreqs = ld("rope_freqs.weight", false, c.RopeDims/2)
	}
	w.layers = make([]layer, c.NLayer)
	for i := range w.layers {
		l := &w.layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		l.attnNorm = ld(p+"attn_norm.weight", false, c.NEmbd)
		l.wq = ld(p+"attn_q.weight", true, c.NEmbd, c.QDim())
		l.wk = ld(p+"attn_k.weight", true, c.NEmbd, c.KVDim())
		l.wv = ld(p+"attn_v.weight", true, c.NEmbd, c.KVDim())
		l.wo = ld(p+"attn_output.weight", true, c.QDim(), c.NEmbd)
		l.ffnNorm = ld(p+"ffn_norm.weight", false, c.NEmbd)
		l.gate = ld(p+"ffn_gate.weight", true, c.NEmbd, c.NFF)
		l.up = ld(p+"ffn_up.weight", true, c.NEmbd, c.NFF)
		l.down = ld(p+"ffn_down.weight", true, c.NFF, c.NEmbd)
	}
	return err
}

// tensor checks that the file's tensor name has the given dims (ggml order: row length
// first) and a usable type, F32 for vectors and any type with a dot product for
// matrices, and places it on the device.
func (m *Model) tensor(name string, matrix bool, dims []int) (backend.Buffer, error) {
	ti, ok := m.file.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("tensor %q: missing", name)
	}
	if !sameDims(ti.Dims, dims) {
		return nil, fmt.Errorf("tensor %q: shape %v, want %v", name, ti.Dims, dims)
	}
	if matrix {
		if _, err := tensor.DotFunc(ti.Type); err != nil {
			return nil, fmt.Errorf("tensor %q: type %v: %w", name, ti.Type, err)
		}
	} else if ti.Type != tensor.F32 {
		return nil, fmt.Errorf("tensor %q: type %v, want F32", name, ti.Type)
	}
	data := m.file.TensorData(ti)
	rows, cols := int(ti.Rows()), int(ti.RowLen())
	if wr, ok := m.dev.(wrapper); ok {
		b, err := wr.Wrap(ti.Type, rows, cols, data)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		return b, nil
	}
	b, err := m.dev.Alloc(ti.Type, rows, cols)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	m.bufs = append(m.bufs, b)
	if err := m.dev.Upload(b, data); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	return b, nil
}

func sameDims(got []uint64, want []int) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != uint64(want[i]) {
			return false
		}
	}
	return true
}
