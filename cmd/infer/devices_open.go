package main

import (
	"errors"
	"fmt"

	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/model"
)

// gpuSetup is what the GPU flags opened for one model: a cuda.Device per --device
// entry (a repeated ordinal opens a second Device on that GPU: a virtual device with its
// own stream) and the peer table of the plan's neighbouring pairs.
type gpuSetup struct {
	devs  []*cuda.Device
	peers *cuda.Peers
	logf  func(format string, args ...any) // the model's log, or nil
}

// open places the model at path as the flags ask, filling in opts.Devices and
// opts.Split (the plan included). With -ngl 0 it does nothing: the model runs on the
// CPU. Close the model before the setup.
func (g *gpuFlags) open(path string, opts *model.Options) (*gpuSetup, error) {
	if g.ngl == 0 {
		return &gpuSetup{}, nil
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	n, err := cuda.Count()
	if err != nil {
		return nil, fmt.Errorf("-ngl %d: needs CUDA devices: %w", g.ngl, err)
	}
	ordinals, _ := parseOrdinals(g.device)
	if ordinals == nil {
		for i := range n {
			ordinals = append(ordinals, i)
		}
	}
	for _, o := range ordinals {
		if o >= n {
			return nil, usageError{fmt.Errorf("--device %d: this machine has %d CUDA devices", o, n)}
		}
	}
	if len(ordinals) == 0 {
		return nil, fmt.Errorf("-ngl %d: needs CUDA devices: none found", g.ngl)
	}
	if g.sm == "none" {
		if g.mg >= len(ordinals) {
			return nil, usageError{fmt.Errorf("-mg %d: only %d devices", g.mg, len(ordinals))}
		}
		ordinals = ordinals[g.mg : g.mg+1]
	}
	opts.Split.Ratios, _ = parseRatios(g.ts)
	if g.sm == "none" {
		opts.Split.Ratios = nil
	}
	opts.Split.GPULayers = g.ngl
	mode, err := cuda.ParsePeerMode(g.peer)
	if err != nil {
		return nil, usageError{err}
	}
	copts := cuda.Options{WeightCacheBytes: int64(g.weightCache)}
	return openPlaced(path, opts, ordinals, cuda.PeerOptions{Mode: mode, Logf: opts.Logf}, copts)
}

// openPlaced opens a device per ordinal with copts, plans the model at path over them
// with opts.Split, and builds the peer table for exactly the plan's neighbouring pairs of
// distinct devices (pairs on one GPU resolve to device-to-device copies and enable
// nothing). It sets opts.Devices and opts.Split.Plan.
func openPlaced(path string, opts *model.Options, ordinals []int, popts cuda.PeerOptions, copts cuda.Options) (*gpuSetup, error) {
	s := &gpuSetup{logf: opts.Logf}
	for _, o := range ordinals {
		d, err := cuda.OpenWith(o, copts)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("open CUDA device %d: %w", o, err)
		}
		s.devs = append(s.devs, d)
		opts.Devices = append(opts.Devices, d)
	}
	opts.Split.Plan = nil
	plan, err := model.PlanFor(path, *opts)
	if err != nil {
		s.Close()
		return nil, err
	}
	if pairs := model.Neighbours(plan); len(pairs) > 0 {
		if s.peers, err = cuda.NewPeers(s.devs, pairs, popts); err != nil {
			s.Close()
			return nil, err
		}
	}
	opts.Split.Plan = plan
	return s, nil
}

// Close closes the peer table, then the devices.
func (s *gpuSetup) Close() error {
	var errs []error
	if s.peers != nil {
		errs = append(errs, s.peers.Close())
		s.peers = nil
	}
	for _, d := range s.devs {
		if c := d.WeightCache(); c.Limit > 0 && s.logf != nil {
			s.logf("%s: weight cache peaked at %.2f GiB of %.2f GiB", d.Name(), float64(c.Peak)/(1<<30), float64(c.Limit)/(1<<30))
		}
		errs = append(errs, d.Close())
	}
	s.devs = nil
	return errors.Join(errs...)
}
