//go:build cgo

package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Weights ahead, in captured decode graphs. Between the q/k/v mat-vec and the o mat-vec
// of a block run RoPE, the cache stores and attention, which read little memory. While a
// graph is captured, the weights of the mat-vecs after such a stretch are prefetched into
// L2 by a small kernel (weights_ahead) on a side stream forked from the end of the
// mat-vec before the stretch, so that they stream in while those kernels run, and the
// mat-vecs then find them in L2. The prefetch loads into no register and writes nothing,
// so it needs no order with any kernel; the graph joins the side stream at its end. A
// stretch prefetches at most a budget of bytes (half the L2 by default: the o matrix,
// then the start of gate and up); INFER_CUDA_AHEAD sets it in MiB (0: off).

// aheadMinKernels is the kernels between two mat-vecs that make a stretch to prefetch
// across: RoPE, the cache stores and attention are 3 or more; a norm or SwiGLU alone 1.
const aheadMinKernels = 3

// aheadThreads and aheadLines shape weights_ahead: lines of 128 bytes a thread.
const (
	aheadThreads = 256
	aheadLines   = 4
)

// weightsAhead is a capture's prefetch state.
type weightsAhead struct {
	side     C.CUstream
	mvDone   C.CUevent // recorded on the device stream after each fused mat-vec
	sideDone C.CUevent // the join
	budget   int64     // bytes a stretch may prefetch
	left     int64     // bytes the current stretch may still prefetch
	since    int       // kernels launched on the device stream since the last mat-vec
	mvs      int       // fused mat-vecs launched in this capture
	forked   bool      // the side stream has joined the capture
}

// aheadBudget is the bytes a stretch prefetches on d: INFER_CUDA_AHEAD MiB when set,
// else half of d's L2; 0 when off or unknown.
func (d *Device) aheadBudget() int64 {
	if s := os.Getenv("INFER_CUDA_AHEAD"); s != "" {
		mb, err := strconv.Atoi(s)
		if err != nil || mb < 0 {
			return 0
		}
		return int64(mb) << 20
	}
	var l2 C.int
	if check("cuDeviceGetAttribute", C.cu_device_get_attribute(&l2, 38 /* L2_CACHE_SIZE */, d.dev)) != nil {
		return 0
	}
	return int64(l2) / 2
}

// newWeightsAhead sets up a capture's prefetch, or returns nil when it is off or the
// kernels lack weights_ahead; it runs under the lock, before the capture begins.
func (d *Device) newWeightsAhead() (*weightsAhead, error) {
	budget := d.aheadBudget()
	if budget <= 0 || d.noFuse || !d.has("weights_ahead") {
		return nil, nil
	}
	a := &weightsAhead{budget: budget}
	err := check("cuStreamCreate", C.cu_stream_create(&a.side, 1 /* NON_BLOCKING */))
	if err == nil {
		err = check("cuEventCreate", C.cu_event_create(&a.mvDone, eventDisableTiming))
	}
	if err == nil {
		err = check("cuEventCreate", C.cu_event_create(&a.sideDone, eventDisableTiming))
	}
	if err != nil {
		return nil, fmt.Errorf("weights ahead: %w", errors.Join(err, a.close()))
	}
	return a, nil
}

// launched counts a kernel launched on stream s of d.
func (a *weightsAhead) launched(d *Device, s C.CUstream) {
	if s == d.stream {
		a.since++
	}
}

// before prefetches what it may of h's weights on the side stream, forking it from the
// end of the previous mat-vec when a stretch lies between; it runs under the lock.
func (a *weightsAhead) before(d *Device, h *heldMV) error {
	if a.mvs > 0 && a.since >= aheadMinKernels {
		if err := check("cuStreamWaitEvent", C.cu_stream_wait_event(a.side, a.mvDone, 0)); err != nil {
			return err
		}
		a.forked, a.left = true, a.budget
	}
	for _, w := range h.ws {
		if a.left <= 0 {
			break
		}
		n := min(int64(w.Bytes()), a.left)
		a.left -= n
		lines := ceilDiv(int(n), 128)
		grid := dim3{min(ceilDiv(lines, aheadThreads*aheadLines), maxGrid), 1, 1}
		if err := d.launchOn(a.side, "weights_ahead", grid, dim3{aheadThreads, 1, 1}, new(args).ptr(w.ptr).u64(uint64(n))); err != nil {
			return err
		}
	}
	return nil
}

// after marks the end of a fused mat-vec on the device stream.
func (a *weightsAhead) after(d *Device) error {
	a.since = 0
	a.mvs++
	return check("cuEventRecord", C.cu_event_record(a.mvDone, d.stream))
}

// join makes the device stream wait for the side stream, if it joined the capture, so
// that the capture ends with both; it runs under the lock, before the capture ends.
func (a *weightsAhead) join(d *Device) error {
	if a == nil || !a.forked {
		return nil
	}
	a.forked = false
	if err := check("cuEventRecord", C.cu_event_record(a.sideDone, a.side)); err != nil {
		return err
	}
	return check("cuStreamWaitEvent", C.cu_stream_wait_event(d.stream, a.sideDone, 0))
}

// close releases the side stream and events (the graph keeps none of them).
func (a *weightsAhead) close() error {
	if a == nil {
		return nil
	}
	var errs []error
	for _, e := range []C.CUevent{a.mvDone, a.sideDone} {
		if e != nil {
			errs = append(errs, check("cuEventDestroy_v2", C.cu_event_destroy(e)))
		}
	}
	if a.side != nil {
		errs = append(errs, check("cuStreamDestroy_v2", C.cu_stream_destroy(a.side)))
	}
	return errors.Join(errs...)
}
