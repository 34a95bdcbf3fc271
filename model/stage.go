package model

import (
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/split"
)

// stage is one placement of the plan: layers [First, Last) on dev, with the tensors the
// stage needs besides its layers.
type stage struct {
	split.Placement
	dev        backend.Device
	bufs       []backend.Buffer // device copies of weights, freed by free
	tokenEmbd  backend.Buffer   // (vocab, dim); first stage only
	outputNorm backend.Buffer   // (1, dim); last stage only
	output     backend.Buffer   // (vocab, dim); last stage only (token_embd when tied)
	ropeFreqs  backend.Buffer   // (1, ropeDims/2) or nil; on every stage
}

// free releases the stage's weight buffers.
func (st *stage) free() {
	for _, b := range st.bufs {
		st.dev.Free(b)
	}
	st.bufs = nil
}

// memInfoer is implemented by devices that know their free memory (CUDA).
type memInfoer interface {
	MemInfo() (free, total uint64, err error)
}

// planDevice describes d to the planner. Slots with the same name share free memory:
// two Device values on one GPU (virtual devices) are both named "cuda:0 …".
func planDevice(d backend.Device) (split.Device, error) {
	sd := split.Device{Name: d.Name(), Free: split.Unlimited}
	if mi, ok := d.(memInfoer); ok {
		free, _, err := mi.MemInfo()
		if err != nil {
			return sd, fmt.Errorf("free memory of %s: %w", d.Name(), err)
		}
		sd.Free = int64(free)
	}
	return sd, nil
}

// sizes are the bytes each part of a model of config c in file f needs with options o,
// read from the tensor table.
func sizes(f *gguf.File, c Config, o Options) split.Sizes {
	bytesOf := func(name string) int64 {
		if ti, ok := f.Tensor(name); ok {
			return int64(ti.Bytes())
		}
		return 0
	}
	sz := split.Sizes{Layer: make([]int64, c.NLayer)}
	for l := range sz.Layer {
		for _, n := range layerTensors {
			sz.Layer[l] += bytesOf(fmt.Sprintf("blk.%d.%s", l, n))
		}
		sz.Layer[l] += bytesOf("rope_freqs.weight")
	}
	sz.Input = bytesOf("token_embd.weight")
	sz.Output = bytesOf("output_norm.weight") + bytesOf("output.weight")
	if _, ok := f.Tensor("output.weight"); !ok {
		sz.Output += sz.Input // tied: the last stage holds its own copy
	}
	sz.KV = 2 * int64(o.ContextSize) * int64(o.KVType.DType().RowBytes(c.KVDim()))
	perRow := 2*c.NEmbd + 2*c.QDim() + 2*c.KVDim() + 2*c.NFF + c.NVocab
	wire := 0 // the F16 wire's send and receive buffers of a middle stage
	if o.Wire == WireF16 {
		wire = 2 * 2 * c.NEmbd
	}
	sz.Scratch = int64(o.BatchSize) * (4*int64(perRow) + 8 + int64(wire))
	return sz
}

// layerTensors are the tensors of one block, blk.N.<name>, the optional ones included.
var layerTensors = [...]string{"attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
	"attn_output.weight", "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight",
	"attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_q_norm.weight", "attn_k_norm.weight"}

// makePlan places a model of config c in file f over o.Devices (a CPU device when there
// are none). It allocates nothing; a model that does not fit is an error naming the
// device and the shortfall.
func makePlan(f *gguf.File, c Config, o Options) (*split.Plan, error) {
	if !o.Wire.valid() {
		return nil, fmt.Errorf("%v: want WireF32 or WireF16", o.Wire)
	}
	if o.Split.Plan != nil {
		return o.Split.Plan, checkPlan(o.Split.Plan, c.NLayer, len(o.Devices))
	}
	devs := make([]split.Device, 0, len(o.Devices))
	for _, d := range o.Devices {
		sd, err := planDevice(d)
		if err != nil {
			return nil, err
		}
		devs = append(devs, sd)
	}
	cpuDev := split.Device{Name: fmt.Sprintf("cpu (%d threads)", o.Threads), Free: split.Unlimited}
	so := split.Options{Ratios: o.Split.Ratios, GPULayers: o.Split.GPULayers}
	switch {
	case len(devs) == 0:
		so.CPU, so.GPULayers = &cpuDev, 0
	case o.Split.GPULayers > 0 && o.Split.GPULayers <= c.NLayer:
		so.CPU = &cpuDev
	}
	p, err := split.Make(sizes(f, c, o), devs, so)
	if err != nil {
		return nil, doesNotFit(err)
	}
	return p, checkPlan(p, c.NLayer, len(o.Devices))
}

// checkPlan reports a plan that does not cover layers [0, nLayer) in order with slots
// among nDev devices (or -1, the CPU).
func checkPlan(p *split.Plan, nLayer, nDev int) error {
	if len(p.Stages) == 0 {
		return errors.New("plan has no stages")
	}
	next := 0
	for i, s := range p.Stages {
		if s.First != next || s.Last < s.First || s.Slot < -1 || s.Slot >= nDev {
			return fmt.Errorf("plan stage %d (slot %d, layers [%d, %d)) does not follow layer %d on %d devices",
				i, s.Slot, s.First, s.Last, next, nDev)
		}
		next = s.Last
	}
	if next != nLayer {
		return fmt.Errorf("plan covers %d of %d layers", next, nLayer)
	}
	return nil
}

// PlanFor reads the GGUF file at path and returns the plan Load would make with opts,
// without loading weights: what `infer run --plan` prints, and what a caller needs to
// set up transfers between neighbouring stages before Load (pass it back in
// opts.Split.Plan).
func PlanFor(path string, opts Options) (*split.Plan, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	defer f.Close()
	cfg, err := configFromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("model: %s: %w", path, err)
	}
	p, err := makePlan(f, cfg, opts.resolve(cfg))
	if err != nil {
		return nil, fmt.Errorf("model: %s: %w", path, err)
	}
	return p, nil
}

// Neighbours lists the pairs of device slots {from, to} (indices into Options.Devices)
// between which plan p hands the hidden state over: neighbouring stages on different
// slots, CPU stages excluded. A caller sets up their transfers (a CUDA peer table).
func Neighbours(p *split.Plan) [][2]int {
	var out [][2]int
	for i := 1; i < len(p.Stages); i++ {
		a, b := p.Stages[i-1].Slot, p.Stages[i].Slot
		if a >= 0 && b >= 0 && a != b {
			out = append(out, [2]int{a, b})
		}
	}
	return out
}
