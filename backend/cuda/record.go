//go:build cgo

package cuda

import (
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
)

var _ backend.Recorder = (*Device)(nil)

// recorded is a graph kept by Record: the allocations its kernels use, so that freeing
// any of them drops the graph.
type recorded struct {
	g    *Graph
	uses map[*allocation]struct{}
}

// Record implements backend.Recorder. The first call with a key captures the kernels
// that enqueue issues through k into a CUDA graph (stream capture), instantiates it and
// launches it; later calls with that key launch the graph again without calling
// enqueue. The lookup, the capture and the launch happen under one hold of the GPU's
// lock, so concurrent Records of other keys (other sessions) wait rather than interleave.
// The graph refers to the buffers enqueue used, so the key must name them: two sessions
// with their own activations need two keys. Freeing any buffer a graph uses, or growing
// a scratch area it uses, drops the graph, and the next Record of its key captures
// afresh.
//
// enqueue must only call the kernel methods of k, from the calling goroutine, and must
// not call d itself (see Capture).
func (d *Device) Record(key string, enqueue func(k backend.Kernels)) error {
	err := d.do(func() error {
		r, ok := d.graphs[key]
		if !ok {
			var err error
			if r, err = d.record(enqueue); err != nil {
				return err
			}
			if d.graphs == nil {
				d.graphs = map[string]*recorded{}
			}
			d.graphs[key] = r
		}
		if err := r.g.launch(); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cuda: record %q on %s: %w", key, d.name, err)
	}
	return nil
}

// record captures enqueue's kernels into a graph, noting the allocations it uses; it
// runs under the lock.
func (d *Device) record(enqueue func(k backend.Kernels)) (*recorded, error) {
	if d.view != nil {
		return nil, errors.New("record inside a capture")
	}
	r := &recorded{uses: map[*allocation]struct{}{}}
	d.uses = r.uses
	defer func() { d.uses = nil }()
	g, err := d.capture(func(k backend.Kernels) error { enqueue(k); return nil })
	if err != nil {
		return nil, err
	}
	r.g = g
	return r, nil
}

// noteUse adds a to the allocations of the graph being recorded, if any. Only the calls
// through a capture's Kernels (d.view) are recorded, under the lock the capture holds; a
// call on the Device itself is never part of a capture (it waits for the capture to end).
func (d *Device) noteUse(a *allocation) {
	if a == nil || d.view == nil {
		return
	}
	if d.uses != nil {
		d.uses[a] = struct{}{}
	}
}

// dropGraphs destroys the recorded graphs that use a, or every recorded graph when a is
// nil; it runs under the lock. A graph still running is freed by the driver when it
// completes.
func (d *Device) dropGraphs(a *allocation) error {
	var errs []error
	for key, r := range d.graphs {
		if _, used := r.uses[a]; a != nil && !used {
			continue
		}
		errs = append(errs, r.g.destroy())
		delete(d.graphs, key)
	}
	return errors.Join(errs...)
}
