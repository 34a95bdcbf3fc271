package model

import (
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cpu"
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

// memInfoer is implemented by devices that know their free memory (CUDA, and the CPU
// for the host's).
type memInfoer interface {
	MemInfo() (free, total uint64, err error)
}

// hostMemory is the Physical name of every CPU slot: they share the host's memory.
const hostMemory = "host memory"

// planDevice describes d to the planner. Slots with the same name share free memory:
// two Device values on one GPU (virtual devices) are both named "cuda:0 …"; CPU slots
// share the host's. mapped is the bytes of every weight in the file (see describe).
func planDevice(d backend.Device, mapped int64) (split.Device, error) {
	physical := ""
	if _, ok := d.(*cpu.Device); ok {
		physical = hostMemory
	}
	var memInfo func() (free, total uint64, err error)
	if mi, ok := d.(memInfoer); ok {
		memInfo = mi.MemInfo
	}
	return describe(d.Name(), physical, memInfo, mapped)
}

// cpuPlanDevice describes the CPU device Load makes for the layers it does not offload.
func cpuPlanDevice(threads int, mapped int64) (split.Device, error) {
	return describe(fmt.Sprintf("cpu (%d threads)", threads), hostMemory, cpu.HostMemory, mapped)
}

// describe is a device slot with the free memory memInfo reports (unbounded when
// memInfo is nil or reports errors.ErrUnsupported). A slot of the host's memory uses
// weights in place from the mapped file: they take page cache, not new allocations, so
// its free memory gets mapped on top and only its KV cache and scratch count against
// the memory the host has available.
func describe(name, physical string, memInfo func() (free, total uint64, err error), mapped int64) (split.Device, error) {
	sd := split.Device{Name: name, Physical: physical, Free: split.Unlimited}
	if memInfo == nil {
		return sd, nil
	}
	free, _, err := memInfo()
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return sd, nil
	case err != nil:
		return sd, fmt.Errorf("free memory of %s: %w", name, err)
	}
	sd.Free = int64(min(free, uint64(split.Unlimited)))
	if physical == hostMemory {
		sd.Free += mapped
	}
	return sd, nil
}

// mappedBytes is the size of every tensor of f: what a CPU device maps in place.
func mappedBytes(f *gguf.File) int64 {
	var n int64
	for _, ti := range f.Tensors {
		n += int64(ti.Bytes())
	}
	return n
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
	if o.ContextSize > maxContext {
		return nil, fmt.Errorf("context of %d tokens: at most %d", o.ContextSize, maxContext)
	}
	mapped := mappedBytes(f)
	devs := make([]split.Device, 0, len(o.Devices))
	for _, d := range o.Devices {
		sd, err := planDevice(d, mapped)
		if err != nil {
			return nil, err
		}
		devs = append(devs, sd)
	}
	cpuDev, err := cpuPlanDevice(o.Threads, mapped)
	if err != nil {
		return nil, err
	}
	sameFree(devs, &cpuDev)
	so := split.Options{Ratios: o.Split.Ratios, GPULayers: o.Split.GPULayers}
	switch {
	case len(devs) == 0:
		so.CPU, so.GPULayers = &cpuDev, 0
	case o.Split.GPULayers > 0 && o.Split.GPULayers <= c.NLayer:
		so.CPU = &cpuDev
	}
	p, err := split.Make(sizes(f, c, o), devs, so)
	if err != nil {
		return nil, planFitError(p, mapped, err)
	}
	return p, checkPlan(p, c.NLayer, len(o.Devices))
}

// maxContext bounds Options.ContextSize, as llama.cpp's 32-bit n_ctx does; the KV cache
// sizes the planner computes from it cannot overflow.
const maxContext = 1<<31 - 1

// sameFree gives every slot of one physical device the free memory of the first, and
// the CPU that of the host's slots, so that memory sampled twice cannot split a model
// unevenly over equal slots.
func sameFree(devs []split.Device, cpu *split.Device) {
	first := map[string]int64{}
	for i := range devs {
		p := devs[i].Physical
		if p == "" {
			p = devs[i].Name
		}
		if f, ok := first[p]; ok {
			devs[i].Free = f
		} else {
			first[p] = devs[i].Free
		}
	}
	if f, ok := first[hostMemory]; ok {
		cpu.Free = f
	}
}

// planFitError returns split.Make's error, marked as ErrDoesNotFit when plan p puts
// more on a device than it has free; for the host, the message counts the memory that
// must be allocated (KV cache and scratch) against the memory available (the slot's
// free memory less mapped, see describe).
func planFitError(p *split.Plan, mapped int64, err error) error {
	if p == nil {
		return doesNotFit(err)
	}
	for _, s := range p.Stages {
		if s.FreeAfter >= 0 {
			continue
		}
		if s.Device.Physical == hostMemory {
			var kv, scratch int64
			for _, h := range p.Stages {
				if h.Device.Physical == hostMemory {
					kv, scratch = kv+h.KV, scratch+h.Scratch
				}
			}
			return fitError{fmt.Errorf("does not fit in host memory: the CPU's KV cache (%s) and scratch (%s) need %s more than the %s available",
				gibString(kv), gibString(scratch), gibString(-s.FreeAfter), gibString(s.Device.Free-mapped))}
		}
		return fitError{err}
	}
	return doesNotFit(err)
}

// gibString formats n bytes in GiB (MiB below 1 GiB).
func gibString(n int64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
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
