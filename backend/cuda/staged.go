package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// A staged transfer moves a payload through pinned host memory in chunks: the D2H copy
// of chunk k runs on the producer's copy stream, an event marks its slot filled, and the
// H2D copy of chunk k runs on the consumer's copy stream once it is; meanwhile chunk k+1
// is copied out into the next slot. A slot is refilled only after the event recorded
// behind its H2D copy, so the host never waits and the two halves overlap: a 64 MiB
// payload costs about one half plus one chunk, not the sum of both halves.
const (
	stagedSlots     = 4       // pinned host slots per staged pair
	stagedSlotBytes = 4 << 20 // bytes per slot: the largest chunk
	stagedMinChunk  = 256 << 10
	stagedChunks    = 8        // chunks a large payload is cut into, within the limits above
	chunkAlign      = 64 << 10 // chunk sizes round up to this
)

// chunkSize returns the bytes per chunk of an n-byte staged payload: the whole payload
// up to stagedMinChunk (one chunk has the least latency), else about n/stagedChunks,
// aligned, at least stagedMinChunk and at most slotBytes. The last chunk takes the rest.
func chunkSize(n, slotBytes int) int {
	if n <= stagedMinChunk {
		return max(min(n, slotBytes), 1)
	}
	c := (n + stagedChunks - 1) / stagedChunks
	c = (c + chunkAlign - 1) / chunkAlign * chunkAlign
	return max(min(max(c, stagedMinChunk), slotBytes), 1)
}

// staged holds what one pair's staged transfers use.
type staged struct {
	from, to  *Device
	d2h, h2d  C.CUstream // copy streams: d2h in from's context, h2d in to's
	srcReady  C.CUevent  // on from's stream before the copy (from's context)
	d2hDone   C.CUevent  // on the d2h stream after the last chunk (from's context)
	dstFree   C.CUevent  // on to's stream before the copy (to's context)
	h2dDone   C.CUevent  // on the h2d stream after the last chunk (to's context)
	slots     []stagedSlot
	slotBytes int
	next      int // the slot the next chunk uses
}

// stagedSlot is one pinned host buffer and the two events ordering its reuse.
type stagedSlot struct {
	mem     unsafe.Pointer // slotBytes of portable pinned memory
	filled  C.CUevent      // on the d2h stream after the copy into mem (from's context)
	emptied C.CUevent      // on the h2d stream after the copy out of mem (to's context)
}

// newStaged creates the copy streams, events and slots of the pair from → to.
func newStaged(from, to *Device, slots, slotBytes int) (*staged, error) {
	s := &staged{from: from, to: to, slotBytes: slotBytes, slots: make([]stagedSlot, slots)}
	err := from.do(func() error {
		errs := []error{
			check("cuStreamCreate", C.cu_stream_create(&s.d2h, 1 /* NON_BLOCKING */)),
			check("cuEventCreate", C.cu_event_create(&s.srcReady, eventDisableTiming)),
			check("cuEventCreate", C.cu_event_create(&s.d2hDone, eventDisableTiming)),
		}
		for i := range s.slots {
			sl := &s.slots[i]
			errs = append(errs,
				check("cuMemHostAlloc", C.cu_mem_host_alloc(&sl.mem, C.size_t(slotBytes), 1 /* PORTABLE */)),
				check("cuEventCreate", C.cu_event_create(&sl.filled, eventDisableTiming)))
		}
		return errors.Join(errs...)
	})
	if err == nil {
		err = to.do(func() error {
			errs := []error{
				check("cuStreamCreate", C.cu_stream_create(&s.h2d, 1 /* NON_BLOCKING */)),
				check("cuEventCreate", C.cu_event_create(&s.dstFree, eventDisableTiming)),
				check("cuEventCreate", C.cu_event_create(&s.h2dDone, eventDisableTiming)),
			}
			for i := range s.slots {
				errs = append(errs, check("cuEventCreate", C.cu_event_create(&s.slots[i].emptied, eventDisableTiming)))
			}
			return errors.Join(errs...)
		})
	}
	if err != nil {
		return nil, errors.Join(err, s.close())
	}
	return s, nil
}

// copy enqueues n bytes from src (on s.from) to dst (on s.to) through the slots, or only
// the D2H or H2D half of it (parts), with the events that order it after the work queued
// on both devices and the consumer's later work after it. It never waits on the host.
func (s *staged) copy(dst, src C.CUdeviceptr, n int, parts copyParts) error {
	if n <= 0 {
		return nil
	}
	from, to := s.from, s.to
	d2h, h2d := parts&copyD2H != 0, parts&copyH2D != 0
	if d2h {
		err := from.do(func() error {
			return errors.Join(check("cuEventRecord", C.cu_event_record(s.srcReady, from.stream)),
				check("cuStreamWaitEvent", C.cu_stream_wait_event(s.d2h, s.srcReady, 0)))
		})
		if err != nil {
			return err
		}
	}
	if h2d {
		err := to.do(func() error {
			return errors.Join(check("cuEventRecord", C.cu_event_record(s.dstFree, to.stream)),
				check("cuStreamWaitEvent", C.cu_stream_wait_event(s.h2d, s.dstFree, 0)))
		})
		if err != nil {
			return err
		}
	}
	chunk := chunkSize(n, s.slotBytes)
	for off := 0; off < n; off += chunk {
		m := C.size_t(min(chunk, n-off))
		sl := &s.slots[s.next]
		s.next = (s.next + 1) % len(s.slots)
		if d2h {
			err := from.do(func() error {
				if err := check("cuStreamWaitEvent", C.cu_stream_wait_event(s.d2h, sl.emptied, 0)); err != nil {
					return err
				}
				if err := check("cuMemcpyDtoHAsync_v2", C.cu_memcpy_dtoh_async(sl.mem, src+C.CUdeviceptr(off), m, s.d2h)); err != nil {
					return err
				}
				return check("cuEventRecord", C.cu_event_record(sl.filled, s.d2h))
			})
			if err != nil {
				return err
			}
		}
		if h2d {
			err := to.do(func() error {
				if d2h {
					if err := check("cuStreamWaitEvent", C.cu_stream_wait_event(s.h2d, sl.filled, 0)); err != nil {
						return err
					}
				}
				if err := check("cuMemcpyHtoDAsync_v2", C.cu_memcpy_htod_async(dst+C.CUdeviceptr(off), sl.mem, m, s.h2d)); err != nil {
					return err
				}
				return check("cuEventRecord", C.cu_event_record(sl.emptied, s.h2d))
			})
			if err != nil {
				return err
			}
		}
	}
	if d2h { // from's later work may overwrite src only once it has been read
		err := from.do(func() error {
			return errors.Join(check("cuEventRecord", C.cu_event_record(s.d2hDone, s.d2h)),
				check("cuStreamWaitEvent", C.cu_stream_wait_event(from.stream, s.d2hDone, 0)))
		})
		if err != nil {
			return err
		}
	}
	if h2d { // to's later work reads dst only once it has been written
		return to.do(func() error {
			return errors.Join(check("cuEventRecord", C.cu_event_record(s.h2dDone, s.h2d)),
				check("cuStreamWaitEvent", C.cu_stream_wait_event(to.stream, s.h2dDone, 0)))
		})
	}
	return nil
}

// sync waits for both copy streams.
func (s *staged) sync() error {
	return errors.Join(
		s.from.do(func() error { return check("cuStreamSynchronize", C.cu_stream_synchronize(s.d2h)) }),
		s.to.do(func() error { return check("cuStreamSynchronize", C.cu_stream_synchronize(s.h2d)) }),
	)
}

// close releases what newStaged created (any part of it); the streams must be idle.
func (s *staged) close() error {
	var errs []error
	destroy := func(e C.CUevent) {
		if e != nil {
			errs = append(errs, check("cuEventDestroy_v2", C.cu_event_destroy(e)))
		}
	}
	errs = append(errs, s.from.do(func() error {
		if s.d2h != nil {
			errs = append(errs, check("cuStreamDestroy_v2", C.cu_stream_destroy(s.d2h)))
		}
		destroy(s.srcReady)
		destroy(s.d2hDone)
		for _, sl := range s.slots {
			destroy(sl.filled)
			if sl.mem != nil {
				errs = append(errs, check("cuMemFreeHost", C.cu_mem_free_host(sl.mem)))
			}
		}
		return nil
	}))
	errs = append(errs, s.to.do(func() error {
		if s.h2d != nil {
			errs = append(errs, check("cuStreamDestroy_v2", C.cu_stream_destroy(s.h2d)))
		}
		destroy(s.dstFree)
		destroy(s.h2dDone)
		for _, sl := range s.slots {
			destroy(sl.emptied)
		}
		return nil
	}))
	s.slots = nil
	return errors.Join(errs...)
}
