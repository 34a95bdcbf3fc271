package cuda

/*
#include "driver.h"
*/
import "C"

import "errors"

// The prefill path (gemm) multiplies F16 copies of quantized weights. Dequantizing a
// weight is memory-bound and its GEMM is compute-bound, so the two can share the GPU:
// ahead dequantizes each weight on a side stream into one of two slots, while the
// compute stream still works on the earlier kernels the host has queued (the host runs
// far ahead of the GPU), and the compute stream waits only for that weight's copy
// before its GEMM. A slot is reused once the GEMM that read it is done. The result is
// the dequant kernel's output, so numbers do not change. Only batches of aheadMinRows
// rows or more take this path (matmul.go says why).
//
// Ordering: the side stream reads only weights. Before a dequantization it waits for
// the compute stream's uploads so far (written), so a weight uploaded just before its
// first MatMul is complete, and for the slot's previous GEMM (free). The compute stream
// waits for every copy it uses (ready), so a Sync or a stream drain of the compute
// stream also drains the side stream.
//
// Upload records no event itself: it only marks the device (uploaded), and the next
// dequantization records written on the compute stream first, after everything queued
// so far, uploads included. A decode step, which uploads its tokens and positions but
// dequantizes nothing, thus costs no event records once the side stream exists.
type ahead struct {
	stream  C.CUstream
	written C.CUevent // recorded on the compute stream by the first dequantization after an Upload
	slots   [2]aheadSlot
	next    int
}

// aheadSlot is one F16 copy of a weight, with its events.
type aheadSlot struct {
	mem   allocation // grown on demand (grow)
	ready C.CUevent  // recorded on the side stream after the copy is written
	free  C.CUevent  // recorded on the compute stream after the GEMM that read it
}

// Stream priorities, clamped by the driver to the context's range (lower runs first):
// the compute stream's and the side stream's. When both streams have blocks waiting for
// an SM, the GEMM's are placed first and the dequantization takes what is left (SMs
// the GEMM's grid does not cover, the tail of its last wave); at equal priority a
// dequantization that became ready with the GEMM (both wait for the GEMM before) could
// take every SM first and hold the GEMM back.
const (
	priorityFirst = -1 << 10
	priorityLast  = 1 << 10
)

// newAhead creates the side stream (at the compute stream's priority when first is
// set, else at the least) and events; it runs under do.
func newAhead(first bool) (*ahead, error) {
	a := &ahead{}
	prio := priorityLast
	if first {
		prio = priorityFirst
	}
	err := check("cuStreamCreateWithPriority", C.cu_stream_create_with_priority(&a.stream, 1, C.int(prio))) // non-blocking
	if err == nil {
		err = check("cuEventCreate", C.cu_event_create(&a.written, eventDisableTiming))
	}
	for i := range a.slots {
		if err == nil {
			err = check("cuEventCreate", C.cu_event_create(&a.slots[i].ready, eventDisableTiming))
		}
		if err == nil {
			err = check("cuEventCreate", C.cu_event_create(&a.slots[i].free, eventDisableTiming))
		}
	}
	if err != nil {
		return nil, errors.Join(err, a.close())
	}
	return a, nil
}

// markWritten orders the next dequantization after the uploads queued so far on the
// compute stream; it runs under do. It records nothing: dequantAhead records written
// when the mark is set.
func (d *Device) markWritten() { d.uploaded = true }

// dequantAhead enqueues w's dequantization to F16 on the side stream and makes the
// compute stream wait for it; it returns the copy's address and the slot, whose free
// event the caller records after the GEMM that reads the copy. It runs under do.
func (d *Device) dequantAhead(w *Buffer) (C.CUdeviceptr, *aheadSlot, error) {
	if d.ahead == nil {
		a, err := newAhead(d.blas.tune.sideFirst)
		if err != nil {
			return 0, nil, err
		}
		d.ahead = a
	}
	a := d.ahead
	if d.uploaded { // order after the uploads, and whatever else is queued so far
		if err := check("cuEventRecord", C.cu_event_record(a.written, d.stream)); err != nil {
			return 0, nil, err
		}
		d.uploaded = false
	}
	s := &a.slots[a.next]
	a.next ^= 1
	if need := w.rows * w.cols * 2; s.mem.size < need {
		if err := a.grow(d, s, need); err != nil {
			return 0, nil, err
		}
	}
	for _, e := range [...]C.CUevent{s.free, a.written} {
		if err := check("cuStreamWaitEvent", C.cu_stream_wait_event(a.stream, e, 0)); err != nil {
			return 0, nil, err
		}
	}
	if err := d.widen(a.stream, s.mem.ptr, w); err != nil {
		return 0, nil, err
	}
	if err := check("cuEventRecord", C.cu_event_record(s.ready, a.stream)); err != nil {
		return 0, nil, err
	}
	return s.mem.ptr, s, check("cuStreamWaitEvent", C.cu_stream_wait_event(d.stream, s.ready, 0))
}

// grow replaces slot s's memory by at least need bytes, after both streams drain (the
// old copy may still be read or written); it runs under do.
func (a *ahead) grow(d *Device, s *aheadSlot, need int) error {
	for _, st := range []C.CUstream{d.stream, a.stream} {
		if err := check("cuStreamSynchronize", C.cu_stream_synchronize(st)); err != nil {
			return err
		}
	}
	return regrow(&s.mem, need)
}

// close drains the side stream and releases the slots, events and stream; it runs
// under do.
func (a *ahead) close() error {
	if a == nil {
		return nil
	}
	var errs []error
	if a.stream != nil {
		errs = append(errs, check("cuStreamSynchronize", C.cu_stream_synchronize(a.stream)))
	}
	for i := range a.slots {
		s := &a.slots[i]
		if s.mem.ptr != 0 {
			errs = append(errs, s.mem.release())
		}
		for _, e := range []C.CUevent{s.ready, s.free} {
			if e != nil {
				errs = append(errs, check("cuEventDestroy_v2", C.cu_event_destroy(e)))
			}
		}
	}
	if a.written != nil {
		errs = append(errs, check("cuEventDestroy_v2", C.cu_event_destroy(a.written)))
	}
	if a.stream != nil {
		errs = append(errs, check("cuStreamDestroy_v2", C.cu_stream_destroy(a.stream)))
	}
	return errors.Join(errs...)
}
