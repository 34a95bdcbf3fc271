package model

import (
	"context"
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cpu"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/tokenizer"
	"github.com/infergo/infer/tensor"
)

// layer is one transformer block; its buffers live on its stage's device. Every matrix
// is (out, in), one row per output, as GGUF stores it.
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
	blockExtras
}

// wrapper is implemented by devices that can use host memory in place (the CPU device),
// so weights are used straight from the mapped file instead of being copied.
type wrapper interface {
	Wrap(dt tensor.DType, rows, cols int, data []byte) (backend.Buffer, error)
}

// Load is LoadContext with context.Background().
func Load(path string, opts Options) (*Model, error) {
	return LoadContext(context.Background(), path, opts)
}

// LoadContext reads a GGUF file, plans its layers over opts.Devices (or opts.Device, or
// the CPU) and places every stage's weights on its device. The file stays mapped until
// Close. Cancelling ctx stops the load between two tensors: LoadContext then releases
// what it placed and returns an error wrapping ctx.Err(). A model that does not fit in
// the devices' free memory is an error wrapping ErrDoesNotFit that names the device and
// the shortfall.
func LoadContext(ctx context.Context, path string, opts Options) (*Model, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("model: load %s: %w", path, err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m, err := fromFile(ctx, f, opts)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("model: %s: %w", path, err), f.Close())
	}
	return m, nil
}

// fromFile builds a model from a parsed file; on success the model owns f.
func fromFile(ctx context.Context, f *gguf.File, opts Options) (*Model, error) {
	cfg, err := configFromGGUF(f)
	if err != nil {
		return nil, err
	}
	opts = opts.resolve(cfg)
	plan, err := makePlan(f, cfg, opts)
	if err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, opts: opts, file: f, plan: plan}
	if _, err := f.String("tokenizer.ggml.model"); err == nil {
		if m.tok, err = tokenizer.FromGGUF(f); err != nil {
			m.file = nil
			m.Close()
			return nil, err
		}
	}
	if err := m.place(ctx); err != nil {
		m.file = nil // the caller closes f
		return nil, errors.Join(err, m.Close())
	}
	m.logf("model: %s, %d layers, dim %d, %d heads (%d KV) of %d, ff %d, vocab %d, %d stage(s):\n%s",
		cfg.Arch, cfg.NLayer, cfg.NEmbd, cfg.NHead, cfg.NHeadKV, cfg.HeadDim, cfg.NFF, cfg.NVocab, len(plan.Stages), plan)
	return m, nil
}

// place gives every stage of the plan its device and loads its weights there: the token
// embedding on the first stage, the final norm and output head on the last. It stops
// between two tensors when ctx is done.
func (m *Model) place(ctx context.Context) error {
	c := m.cfg
	m.layers = make([]layer, c.NLayer)
	for i, pl := range m.plan.Stages {
		st := stage{Placement: pl}
		if pl.Slot >= 0 {
			st.dev = m.opts.Devices[pl.Slot]
		} else {
			if m.cpu == nil {
				m.cpu = cpu.New(m.opts.Threads)
			}
			st.dev = m.cpu
		}
		m.stages = append(m.stages, st)
		if err := m.loadStage(ctx, &m.stages[i], i == 0, i == len(m.plan.Stages)-1); err != nil {
			return fmt.Errorf("stage %d on %s: %w", i, st.dev.Name(), err)
		}
	}
	for i := range m.stages {
		if err := m.stages[i].dev.Sync(); err != nil {
			return fmt.Errorf("upload weights to %s: %w", m.stages[i].dev.Name(), err)
		}
	}
	return nil
}

// loadStage validates every tensor of a stage's name, shape and type and places it on
// the stage's device, until ctx is done.
func (m *Model) loadStage(ctx context.Context, st *stage, first, last bool) error {
	c := m.cfg
	var err error
	ld := func(name string, matrix bool, dims ...int) backend.Buffer {
		var b backend.Buffer
		if err == nil {
			err = ctx.Err()
		}
		if err == nil {
			b, err = m.tensor(st, name, matrix, dims)
		}
		return b
	}
	if first {
		st.tokenEmbd = ld("token_embd.weight", true, c.NEmbd, c.NVocab)
	}
	if last {
		st.outputNorm = ld("output_norm.weight", false, c.NEmbd)
		switch _, ok := m.file.Tensor("output.weight"); {
		case ok:
			st.output = ld("output.weight", true, c.NEmbd, c.NVocab)
		case first:
			st.output = st.tokenEmbd
		default:
			st.output = ld("token_embd.weight", true, c.NEmbd, c.NVocab)
		}
	}
	if _, ok := m.file.Tensor("rope_freqs.weight"); ok {
		st.ropeFreqs = ld("rope_freqs.weight", false, c.RopeDims/2)
	}
	for i := st.First; i < st.Last; i++ {
		l := &m.layers[i]
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
		l.blockExtras = m.loadExtras(p, ld)
	}
	return err
}

// tensor checks that the file's tensor name has the given dims (ggml order: row length
// first) and a usable type, F32 for vectors and any type with a dot product for
// matrices, and places it on the stage's device.
func (m *Model) tensor(st *stage, name string, matrix bool, dims []int) (backend.Buffer, error) {
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
	if wr, ok := st.dev.(wrapper); ok {
		b, err := wr.Wrap(ti.Type, rows, cols, data)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		return b, nil
	}
	b, err := st.dev.Alloc(ti.Type, rows, cols)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	st.bufs = append(st.bufs, b)
	if err := m.upload(st.dev, b, ti, data); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	return b, nil
}

// upload copies ti's data into b: read from the file when the device can take it that
// way (a GPU: the weights then never pass through the file's memory mapping, whose page
// faults would cost more than the copy), else from the mapped bytes data.
func (m *Model) upload(dev backend.Device, b backend.Buffer, ti gguf.TensorInfo, data []byte) error {
	if ru, ok := dev.(backend.ReaderUploader); ok {
		if sr, ok := m.file.TensorSection(ti); ok {
			return ru.UploadFrom(b, sr)
		}
	}
	return dev.Upload(b, data)
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
