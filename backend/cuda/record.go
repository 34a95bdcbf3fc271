package cuda

import (
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
// that enqueue issues into a CUDA graph (stream capture), instantiates it and launches
// it; later calls with that key launch the graph again without calling enqueue. The
// graph refers to the buffers enqueue used, so the key must name them: two sessions
// with their own activations need two keys. Freeing any buffer a graph uses, or growing
// a scratch area it uses, drops the graph, and the next Record of its key captures
// afresh.
//
// enqueue must only call kernel methods of d: no Upload, Download, Sync, Alloc or Free,
// which cannot be captured.
func (d *Device) Record(key string, enqueue func()) error {
	d.mu.Lock()
	r, ok := d.graphs[key]
	d.mu.Unlock()
	if !ok {
		var err error
		if r, err = d.capture(enqueue); err != nil {
			return fmt.Errorf("cuda: record %q: %w", key, err)
		}
		d.mu.Lock()
		if d.graphs == nil {
			d.graphs = map[string]*recorded{}
		}
		d.graphs[key] = r
		d.mu.Unlock()
	}
	if err := r.g.Launch(); err != nil {
		return fmt.Errorf("cuda: record %q: replay on %s: %w", key, d.name, err)
	}
	return nil
}

// capture records enqueue's kernels into a graph, noting the allocations it uses.
func (d *Device) capture(enqueue func()) (*recorded, error) {
	r := &recorded{uses: map[*allocation]struct{}{}}
	d.mu.Lock()
	d.uses = r.uses
	d.mu.Unlock()
	g, err := d.Capture(func() error { enqueue(); return nil })
	d.mu.Lock()
	d.uses = nil
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	r.g = g
	return r, nil
}

// noteUse adds a to the allocations of the graph being recorded, if any.
func (d *Device) noteUse(a *allocation) {
	if a == nil {
		return
	}
	d.mu.Lock()
	if d.uses != nil {
		d.uses[a] = struct{}{}
	}
	d.mu.Unlock()
}

// dropGraphs destroys the recorded graphs that use a, or every recorded graph when a is
// nil; it runs under do, after the stream has drained.
func (d *Device) dropGraphs(a *allocation) error {
	var first error
	for key, r := range d.graphs {
		if _, used := r.uses[a]; a != nil && !used {
			continue
		}
		if err := r.g.destroy(); err != nil && first == nil {
			first = err
		}
		delete(d.graphs, key)
	}
	return first
}
