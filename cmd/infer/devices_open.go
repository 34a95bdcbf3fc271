package main

import (
	"context"
	"fmt"

	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/gpu"
	"github.com/infergo/infer/model"
	"github.com/infergo/infer/split"
)

// placement turns the GPU flags into package gpu's options for a model loaded with
// opts: the CUDA ordinals (none with -ngl 0: the CPU; a repeated ordinal is a virtual
// device), the split, the peer mode and the devices' options.
func (g *gpuFlags) placement(opts model.Options) (gpu.Options, error) {
	o := gpu.Options{Model: opts}
	if g.ngl == 0 {
		return o, nil
	}
	if err := g.check(); err != nil {
		return o, err
	}
	all, err := gpu.All()
	if err != nil {
		return o, fmt.Errorf("-ngl %d: needs CUDA devices: %w", g.ngl, err)
	}
	ordinals, _ := parseOrdinals(g.device)
	if ordinals == nil {
		ordinals = all
	}
	for _, d := range ordinals {
		if n := len(all); d >= n {
			return o, usageError{fmt.Errorf("--device %d: this machine has %d CUDA devices", d, n)}
		}
	}
	if len(ordinals) == 0 {
		return o, fmt.Errorf("-ngl %d: needs CUDA devices: none found", g.ngl)
	}
	o.Model.Split.Ratios, _ = parseRatios(g.ts)
	if g.sm == "none" {
		if g.mg >= len(ordinals) {
			return o, usageError{fmt.Errorf("-mg %d: only %d devices", g.mg, len(ordinals))}
		}
		ordinals = ordinals[g.mg : g.mg+1]
		o.Model.Split.Ratios = nil
	}
	o.Model.Split.GPULayers = g.ngl
	if o.Peers.Mode, err = cuda.ParsePeerMode(g.peer); err != nil {
		return o, usageError{err}
	}
	o.Ordinals = ordinals
	o.Device = g.deviceOptions()
	return o, nil
}

// deviceOptions are the options each CUDA device is opened with (--weight-cache,
// --kernel-dir): placement's for a model split over GPUs, and a distributed rank's.
func (g *gpuFlags) deviceOptions() cuda.Options {
	return cuda.Options{WeightCacheBytes: int64(g.weightCache), KernelDir: g.kernelDir}
}

// load loads the model at path with opts, placed as the flags ask (gpu.Load). Close it
// with closeModel.
func (g *gpuFlags) load(ctx context.Context, path string, opts model.Options) (*gpu.Model, error) {
	o, err := g.placement(opts)
	if err != nil {
		return nil, err
	}
	return gpu.Load(ctx, path, o)
}

// plan is the plan load would follow, without loading weights.
func (g *gpuFlags) plan(path string, opts model.Options) (*split.Plan, error) {
	o, err := g.placement(opts)
	if err != nil {
		return nil, err
	}
	return gpu.PlanFor(path, o)
}

// closeModel logs each GPU's weight cache peak to logf (when not nil), then closes m
// (the model, its peer table and its devices).
func closeModel(m *gpu.Model, logf func(format string, args ...any)) error {
	for _, d := range m.Devices() {
		if c := d.WeightCache(); c.Limit > 0 && logf != nil {
			logf("%s: weight cache peaked at %.2f GiB of %.2f GiB", d.Name(), float64(c.Peak)/(1<<30), float64(c.Limit)/(1<<30))
		}
	}
	return m.Close()
}
