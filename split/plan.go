package split

import (
	"errors"
	"fmt"
	"strings"
)

// ErrDoesNotFit is wrapped by Make's error when a device slot is short of memory; the
// error names the device and the shortfall.
var ErrDoesNotFit = errors.New("split: model does not fit")

// Unlimited is the Free of a device whose memory the planner need not count (the CPU,
// as far as a model's size goes); the plan prints "-" for its free memory.
const Unlimited int64 = 1 << 50

// Device describes one device slot to the planner.
type Device struct {
	Name     string // "cpu", "cuda:0"
	Physical string // slots with the same Physical share Free (virtual devices); "" = Name
	Free     int64  // bytes free before loading
}

func (d Device) physical() string {
	if d.Physical != "" {
		return d.Physical
	}
	return d.Name
}

// Sizes are the bytes a model needs, from its tensor table and the context length.
type Sizes struct {
	Layer   []int64 // weight bytes of each layer
	KV      int64   // KV cache bytes of one layer (K and V, all positions)
	Input   int64   // token embedding, on the first stage
	Output  int64   // final norm and output head, on the last stage
	Scratch int64   // activation scratch of one stage
}

// Placement is a Stage with the device it runs on and the bytes it takes there.
type Placement struct {
	Stage
	Device    Device
	Weights   int64 // layer weights, plus input/output tensors where the stage owns them
	KV        int64
	Scratch   int64
	FreeAfter int64 // Free of the physical device after every stage placed on it
}

// Plan is the placement of a model's layers over device slots, in pipeline order.
type Plan struct {
	Stages []Placement
}

// Options shape a plan.
type Options struct {
	// Ratios weight the slots (the -ts flag); nil weights them by free memory, a slot
	// of a device shared with other slots getting an equal part of it.
	Ratios []float64
	// CPU, when GPULayers is less than the model's layers plus one, hosts the first
	// layers (partial offload, the -ngl flag).
	CPU *Device
	// GPULayers counts the layers offloaded to devs, the output head counting as one,
	// as llama.cpp's -ngl does; values above len(Layer) mean everything. 0 with CPU set
	// runs everything on the CPU; 0 with CPU nil offloads everything.
	GPULayers int
}

// Make places a model of the given sizes on devs and checks that every physical device
// has the memory its stages need; the error for a model that does not fit names the
// device and the shortfall. It allocates nothing.
func Make(sz Sizes, devs []Device, opt Options) (*Plan, error) {
	nLayer := len(sz.Layer)
	onCPU := 0
	if opt.CPU != nil {
		onCPU = max(nLayer+1-min(opt.GPULayers, nLayer+1), 0)
	}
	var stages []Placement
	if onCPU > 0 {
		stages = append(stages, Placement{Stage: Stage{Slot: -1, First: 0, Last: min(onCPU, nLayer)}, Device: *opt.CPU})
	}
	if onCPU <= nLayer {
		gpu, err := gpuStages(nLayer, onCPU, devs, opt.Ratios)
		if err != nil {
			return nil, err
		}
		stages = append(stages, gpu...)
	}
	p := &Plan{Stages: stages}
	p.account(sz)
	return p, p.check()
}

// gpuStages splits layers [first, nLayer] (the last being the output head) over devs.
func gpuStages(nLayer, first int, devs []Device, ratios []float64) ([]Placement, error) {
	if len(devs) == 0 {
		return nil, fmt.Errorf("split: %d layers to offload but no devices", nLayer+1-first)
	}
	w := ratios
	if w == nil {
		w = freeShares(devs)
	} else if len(w) != len(devs) {
		return nil, fmt.Errorf("split: %d ratios for %d devices", len(w), len(devs))
	}
	st, err := Layers(nLayer-first, w)
	if err != nil {
		return nil, err
	}
	out := make([]Placement, len(st))
	for i, s := range st {
		s.First += first
		s.Last += first
		out[i] = Placement{Stage: s, Device: devs[s.Slot]}
	}
	return out, nil
}

// freeShares weights each slot by its physical device's free memory divided among the
// slots that share it.
func freeShares(devs []Device) []float64 {
	count := map[string]int{}
	for _, d := range devs {
		count[d.physical()]++
	}
	w := make([]float64, len(devs))
	for i, d := range devs {
		w[i] = float64(d.Free) / float64(count[d.physical()])
	}
	return w
}

// account fills in the bytes of every stage and the free memory left after.
func (p *Plan) account(sz Sizes) {
	used := map[string]int64{}
	for i := range p.Stages {
		s := &p.Stages[i]
		for l := s.First; l < s.Last; l++ {
			s.Weights += sz.Layer[l]
		}
		if i == 0 {
			s.Weights += sz.Input
		}
		if i == len(p.Stages)-1 {
			s.Weights += sz.Output
		}
		s.KV = int64(s.Layers()) * sz.KV
		s.Scratch = sz.Scratch
		used[s.Device.physical()] += s.Weights + s.KV + s.Scratch
	}
	for i := range p.Stages {
		d := p.Stages[i].Device
		p.Stages[i].FreeAfter = d.Free - used[d.physical()]
	}
}

// check reports the first physical device whose stages need more than it has free.
func (p *Plan) check() error {
	for _, s := range p.Stages {
		if s.FreeAfter < 0 {
			return fmt.Errorf("%w: device %s needs %s more than its %s free",
				ErrDoesNotFit, s.Device.Name, bytesString(-s.FreeAfter), bytesString(s.Device.Free))
		}
	}
	return nil
}

// String prints the plan as a table: device, layers, weight, KV and scratch bytes, and
// the free memory left.
func (p *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s %-24s %-9s %10s %10s %10s %10s\n", "stage", "device", "layers", "weights", "kv", "scratch", "free after")
	for i, s := range p.Stages {
		layers := fmt.Sprintf("%d-%d", s.First, s.Last-1)
		if s.Layers() == 0 {
			layers = "-"
		}
		if i == len(p.Stages)-1 {
			layers += "+out"
		}
		free := bytesString(s.FreeAfter)
		if s.Device.Free >= Unlimited {
			free = "-"
		}
		fmt.Fprintf(&b, "%-5d %-24s %-9s %10s %10s %10s %10s\n", i, s.Device.Name, layers,
			bytesString(s.Weights), bytesString(s.KV), bytesString(s.Scratch), free)
	}
	return b.String()
}

// bytesString formats n bytes with a binary unit.
func bytesString(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for ; (f >= unit || f <= -unit) && i < 4; i++ {
		f /= unit
	}
	return fmt.Sprintf("%.2f %ciB", f, "KMGT"[i-1])
}
