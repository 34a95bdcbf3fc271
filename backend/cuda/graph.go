package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Graph is a recorded sequence of kernels and copies on one device (a CUDA graph),
// replayed with Launch. Kernels read positions and token ids from device buffers, so one
// decode step recorded once can be replayed for every token after uploading its inputs.
type Graph struct {
	dev  *Device
	exec C.CUgraphExec
}

// Capture records the work that record enqueues on d into a Graph instead of running
// it. record must only call kernel methods and Free-free device operations: no Upload,
// Download, Sync or Alloc.
func (d *Device) Capture(record func() error) (*Graph, error) {
	err := d.do(func() error {
		if err := check("cuStreamBeginCapture_v2", C.cu_stream_begin_capture(d.stream, 2 /* RELAXED */)); err != nil {
			return err
		}
		d.capturing, d.q8.valid = true, false
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: capture on %s: %w", d.name, err)
	}
	recErr := record()
	g := &Graph{dev: d}
	err = d.do(func() error {
		d.capturing, d.q8.valid = false, false
		var graph C.CUgraph
		if err := check("cuStreamEndCapture", C.cu_stream_end_capture(d.stream, &graph)); err != nil {
			return err
		}
		defer C.cu_graph_destroy(graph)
		if recErr != nil || d.err != nil {
			return errors.Join(recErr, d.err)
		}
		return check("cuGraphInstantiateWithFlags", C.cu_graph_instantiate(&g.exec, graph))
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: capture on %s: %w", d.name, err)
	}
	return g, nil
}

// Launch enqueues one replay of the graph on its device's stream.
func (g *Graph) Launch() error {
	d := g.dev
	return d.do(func() error {
		if g.exec == nil {
			return errors.New("graph closed")
		}
		d.q8.valid = false // the graph's kernels overwrite the quantized activations
		return check("cuGraphLaunch", C.cu_graph_launch(g.exec, d.stream))
	})
}

// Close releases the graph.
func (g *Graph) Close() error {
	return g.dev.do(g.destroy)
}

// destroy releases the graph; it runs under do.
func (g *Graph) destroy() error {
	if g.exec == nil {
		return nil
	}
	err := check("cuGraphExecDestroy", C.cu_graph_exec_destroy(g.exec))
	g.exec = nil
	return err
}
