// Package gpu places a model on CUDA devices in one call and takes it down in one: the
// owner of "a model on these GPUs" for a Go program that embeds the engine.
//
// Load opens a cuda.Device per ordinal (an ordinal may repeat: virtual devices, several
// pipeline stages on one GPU), loads the model over them with model.LoadContext, which
// plans the split once, and builds the peer table (cuda.NewPeers) for exactly the
// neighbouring stages of that plan, so that the hidden state moves by peer copies, by
// pipelined copies through pinned host memory, or device to device on one GPU. Model's
// Close undoes all of it in the only safe order: the model (which waits for the session
// calls in flight and frees every open session), then the peer table, then the devices.
//
//	m, err := gpu.Load(ctx, "llama-7b.Q4_0.gguf", gpu.Options{Ordinals: []int{0, 1}})
//	if err != nil { ... }
//	defer m.Close()
//	res, err := model.Generate(ctx, m.Model, "Once upon a time", model.GenerateOptions{NPredict: 64}, nil)
//
// With no ordinals Load loads the model on the CPU (model.Options.Threads), so one code
// path serves both; package model alone suffices for that. Built without cgo, or on a
// machine without the CUDA driver, Load with ordinals fails with an error wrapping
// cuda.ErrNoDriver.
//
// The Model's sessions may be used from several goroutines at once, on the CPU and on
// the GPUs: see model.Model and cuda.Device.
package gpu

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/backend/cuda"
	"github.com/infergo/infer/model"
	"github.com/infergo/infer/split"
)

// Options configure Load.
type Options struct {
	// Ordinals are the CUDA devices the layers are split over, in pipeline order, one
	// device slot each; an ordinal may repeat (virtual devices). Empty: the CPU.
	Ordinals []int
	// Model configures the model as for model.LoadContext. Load sets its Devices (one
	// per ordinal) and ignores its Device and Split.Plan: the plan is made from the
	// devices' free memory, or Split.Ratios, and Split.GPULayers.
	Model model.Options
	// Peers configures the peer table of the plan's neighbouring pairs: PeerAuto (the
	// zero value) or PeerOff, and pairs forced to stage. Its Logf defaults to
	// Model.Logf.
	Peers cuda.PeerOptions
	// Device configures every device (the weight cache of batched MatMuls).
	Device cuda.Options
}

// Model is a model loaded by Load, with the devices and peer table it owns. It embeds
// the *model.Model, so its methods (NewSession, Config, Plan, Tokenizer...) are the
// Model's; pass m.Model to functions that take a *model.Model.
type Model struct {
	*model.Model
	devs  []*cuda.Device
	peers *cuda.Peers
	mu    sync.Mutex // guards closed
	// closed is set by Close.
	closed bool
}

// Load opens the devices opts.Ordinals names, loads the model at path over them (the CPU
// when there are none) and sets up the transfers between its neighbouring stages. On
// any failure it closes what it opened. Cancelling ctx stops the load between two
// tensors. A model too large for the devices' free memory is an error wrapping
// model.ErrDoesNotFit that names the device and the shortfall.
func Load(ctx context.Context, path string, opts Options) (*Model, error) {
	m := &Model{}
	mo := opts.Model
	mo.Device, mo.Split.Plan = nil, nil
	var err error
	if m.devs, mo.Devices, err = open(opts.Ordinals, opts.Device); err != nil {
		return nil, err
	}
	if m.Model, err = model.LoadContext(ctx, path, mo); err != nil {
		return nil, errors.Join(fmt.Errorf("gpu: %w", err), m.Close())
	}
	if pairs := model.Neighbours(m.Plan()); len(pairs) > 0 {
		po := opts.Peers
		if po.Logf == nil {
			po.Logf = mo.Logf
		}
		if m.peers, err = cuda.NewPeers(m.devs, pairs, po); err != nil {
			return nil, errors.Join(fmt.Errorf("gpu: %s: %w", path, err), m.Close())
		}
	}
	return m, nil
}

// Devices are the devices Load opened, one per ordinal, in order. They belong to m:
// do not close them.
func (m *Model) Devices() []*cuda.Device { return append([]*cuda.Device(nil), m.devs...) }

// Peers is the peer table of the plan's neighbouring pairs (indices into Devices), or
// nil when the plan hands nothing over between devices. It belongs to m.
func (m *Model) Peers() *cuda.Peers { return m.peers }

// Close closes the model (waiting for the session calls in flight and releasing every
// open session), then the peer table, then the devices, and returns every failure. A
// second Close returns nil.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	var errs []error
	if m.Model != nil {
		errs = append(errs, m.Model.Close())
	}
	if m.peers != nil {
		errs = append(errs, m.peers.Close())
	}
	errs = append(errs, closeDevices(m.devs))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("gpu: close: %w", err)
	}
	return nil
}

// PlanFor returns the plan Load would follow with opts, without loading weights: it
// opens the devices for their free memory, plans, and closes them.
func PlanFor(path string, opts Options) (p *split.Plan, err error) {
	mo := opts.Model
	mo.Device, mo.Split.Plan = nil, nil
	devs, bds, err := open(opts.Ordinals, opts.Device)
	if err != nil {
		return nil, err
	}
	mo.Devices = bds
	defer func() {
		if cerr := closeDevices(devs); cerr != nil {
			p, err = nil, errors.Join(err, fmt.Errorf("gpu: %w", cerr))
		}
	}()
	if p, err = model.PlanFor(path, mo); err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	return p, nil
}

// open opens a device per ordinal with o, returning them also as backend.Devices (nil
// for none); on a failure it closes those it opened.
func open(ordinals []int, o cuda.Options) ([]*cuda.Device, []backend.Device, error) {
	var devs []*cuda.Device
	var bds []backend.Device
	for _, ord := range ordinals {
		d, err := cuda.OpenWith(ord, o)
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("gpu: open CUDA device %d: %w", ord, err), closeDevices(devs))
		}
		devs, bds = append(devs, d), append(bds, d)
	}
	return devs, bds, nil
}

// closeDevices closes every device and returns every failure.
func closeDevices(devs []*cuda.Device) error {
	var errs []error
	for _, d := range devs {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}

// All returns the ordinal of every CUDA device, or an error wrapping cuda.ErrNoDriver
// without the driver.
func All() ([]int, error) {
	n, err := cuda.Count()
	if err != nil {
		return nil, err
	}
	ords := make([]int, n)
	for i := range ords {
		ords[i] = i
	}
	return ords, nil
}
