package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/infergo/infer/backend"
)

// Graph is a recorded sequence of kernels and copies on one device (a CUDA graph),
// replayed with Launch. Kernels read positions and token ids from device buffers, so one
// decode step recorded once can be replayed for every token after uploading its inputs.
type Graph struct {
	dev  *Device
	exec C.CUgraphExec
}

// captureView marks the Kernels a capture hands to its callback; it is active from the
// start of the capture to its end.
type captureView struct{ active atomic.Bool }

// Capture records the kernels that record issues through k into a Graph instead of
// running them. It holds the GPU's lock from the start of the capture to its end: every
// other call on the device, and on any other Device of the same GPU, waits until the
// graph is instantiated, so that no other goroutine's work is captured or breaks the
// capture. record must therefore issue its kernels through k, from the goroutine that
// called Capture, and must not call the Device itself (that would wait for the capture
// to end). k accepts only kernel methods; it is useless once Capture returns.
func (d *Device) Capture(record func(k backend.Kernels) error) (*Graph, error) {
	var g *Graph
	err := d.do(func() error {
		var err error
		g, err = d.capture(record)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: capture on %s: %w", d.name, err)
	}
	return g, nil
}

// capture is Capture under the lock (taken by do, which launched any held kernels).
// The stream leaves capture mode on every path, a panicking record included.
func (d *Device) capture(record func(k backend.Kernels) error) (g *Graph, err error) {
	if d.capturing {
		return nil, errors.New("capture inside a capture")
	}
	if err := check("cuStreamBeginCapture_v2", C.cu_stream_begin_capture(d.stream, 2 /* RELAXED */)); err != nil {
		return nil, err
	}
	d.capturing = true
	v := &Device{device: d.device, view: &captureView{}}
	v.view.active.Store(true)
	ended := false
	end := func() (C.CUgraph, error) {
		ended = true
		v.view.active.Store(false)
		var flushErr error
		if d.held != nil || d.pair != nil { // held kernels belong to the graph
			flushErr = d.flush()
		}
		d.capturing = false
		d.writes++ // the captured kernels did not run; what they would write is unknown
		var graph C.CUgraph
		err := check("cuStreamEndCapture", C.cu_stream_end_capture(d.stream, &graph))
		return graph, errors.Join(flushErr, err)
	}
	defer func() {
		if !ended { // record panicked: end the capture, drop the graph, re-panic
			if graph, err := end(); err == nil && graph != nil {
				C.cu_graph_destroy(graph) // unchecked: the panic is what the caller sees
			}
		}
	}()
	recErr := record(v)
	graph, err := end()
	if graph != nil {
		defer func() {
			err = errors.Join(err, check("cuGraphDestroy", C.cu_graph_destroy(graph)))
		}()
	}
	if err = errors.Join(recErr, err, d.err); err != nil {
		return nil, err
	}
	g = &Graph{dev: d}
	if err := check("cuGraphInstantiateWithFlags", C.cu_graph_instantiate(&g.exec, graph)); err != nil {
		return nil, err
	}
	return g, nil
}

// Launch enqueues one replay of the graph on its device's stream.
func (g *Graph) Launch() error {
	return g.dev.do(g.launch)
}

// launch enqueues one replay; it runs under the lock.
func (g *Graph) launch() error {
	if g.exec == nil {
		return errors.New("graph closed")
	}
	return check("cuGraphLaunch", C.cu_graph_launch(g.exec, g.dev.stream))
}

// Close releases the graph.
func (g *Graph) Close() error {
	return g.dev.do(g.destroy)
}

// destroy releases the graph; it runs under the lock. A graph still running is freed
// by the driver when it completes.
func (g *Graph) destroy() error {
	if g.exec == nil {
		return nil
	}
	err := check("cuGraphExecDestroy", C.cu_graph_exec_destroy(g.exec))
	g.exec = nil
	return err
}
