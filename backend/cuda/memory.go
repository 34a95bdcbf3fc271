package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// allocation is one block of device memory: a plain cuMemAlloc, or a VMM mapping.
type allocation struct {
	ptr    C.CUdeviceptr
	size   int
	handle C.CUmemGenericAllocationHandle // VMM only
	mapped bool
	zeroed bool // zeroScratch cleared it on the stream outside a graph capture
}

// release frees the allocation; it runs under do.
func (a *allocation) release() error {
	if !a.mapped {
		return check("cuMemFree_v2", C.cu_mem_free(a.ptr))
	}
	return a.unmap()
}

// Alloc returns a zeroed (rows, cols) buffer of dt in a plain device allocation (weights,
// KV cache). The zeroing is queued on the device stream.
func (d *Device) Alloc(dt tensor.DType, rows, cols int) (backend.Buffer, error) {
	return d.alloc(dt, rows, cols, false)
}

// AllocMapped is Alloc through the VMM allocator (cuMemCreate + cuMemMap), for
// activations and the hidden state handed between stages: its size is rounded up to the
// allocation granularity, and Grant can open it to a peer device.
func (d *Device) AllocMapped(dt tensor.DType, rows, cols int) (*Buffer, error) {
	b, err := d.alloc(dt, rows, cols, true)
	if err != nil {
		return nil, err
	}
	return b.(*Buffer), nil
}

func (d *Device) alloc(dt tensor.DType, rows, cols int, mapped bool) (backend.Buffer, error) {
	if !dt.Known() || rows < 0 || cols < 0 || cols%dt.BlockSize() != 0 {
		return nil, fmt.Errorf("cuda: alloc %v (%d, %d) on %s: bad shape", dt, rows, cols, d.name)
	}
	size := max(rows*dt.RowBytes(cols), 256)
	b := &Buffer{dev: d, dt: dt, rows: rows, cols: cols}
	err := d.do(func() error {
		a := &allocation{size: size}
		var err error
		if mapped {
			err = d.vmm.mapNew(a)
		} else {
			err = check("cuMemAlloc_v2", C.cu_mem_alloc(&a.ptr, C.size_t(size)))
		}
		if err != nil {
			return err
		}
		if err := check("cuMemsetD8Async", C.cu_memset_d8_async(a.ptr, 0, C.size_t(size), d.stream)); err != nil {
			a.release()
			return err
		}
		d.allocs[a] = struct{}{}
		b.alloc, b.ptr = a, uint64(a.ptr)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: alloc %v (%d, %d) = %d bytes on %s: %w", dt, rows, cols, size, d.name, err)
	}
	return b, nil
}

// Free releases a buffer returned by Alloc or AllocMapped, after the queued work that may
// use it; views need no Free.
func (d *Device) Free(buf backend.Buffer) {
	b := d.buffer(buf, "Free's argument")
	d.enqueueAs("free", 0, func() error { // not a kernel: a capture's view refuses it
		if _, ok := d.allocs[b.alloc]; !ok {
			return nil // freed already, or freed by Close
		}
		delete(d.allocs, b.alloc)
		if err := check("cuStreamSynchronize", C.cu_stream_synchronize(d.stream)); err != nil {
			return err
		}
		if err := d.dropGraphs(b.alloc); err != nil {
			return err
		}
		if d.wcache != nil { // the weight's F16 copy goes with it
			if err := d.wcache.prune(d); err != nil {
				return err
			}
		}
		return b.alloc.release()
	})
}

// MemInfo returns the device's free and total memory in bytes.
func (d *Device) MemInfo() (free, total uint64, err error) {
	err = d.do(func() error {
		var f, t C.size_t
		if err := check("cuMemGetInfo_v2", C.cu_mem_get_info(&f, &t)); err != nil {
			return err
		}
		free, total = uint64(f), uint64(t)
		return nil
	})
	return free, total, err
}

// Upload copies src, the raw bytes of all of dst's rows, into dst through pinned staging
// memory. It returns once src has been copied out; the device copy may still be queued.
func (d *Device) Upload(dst backend.Buffer, src []byte) error {
	return d.upload(d.buffer(dst, "Upload's destination"), memPayload(src))
}

var _ backend.ReaderUploader = (*Device)(nil) // else the loader would quietly upload from the mapping

// UploadFrom is Upload reading the bytes from src (a tensor's section of a model file)
// straight into the pinned staging slots, several slots at once, so the file's memory
// mapping is never faulted in: it implements backend.ReaderUploader.
func (d *Device) UploadFrom(dst backend.Buffer, src *io.SectionReader) error {
	return d.upload(d.buffer(dst, "UploadFrom's destination"), readerPayload{src})
}

// upload copies src into b through the staging ring.
func (d *Device) upload(b *Buffer, src payload) error {
	if src.size() != b.Bytes() {
		return fmt.Errorf("cuda: upload to %v (%d, %d): %d bytes given, %d needed", b.dt, b.rows, b.cols, src.size(), b.Bytes())
	}
	err := d.do(func() error {
		if src.size() > 2*d.staging.slotBytes {
			d.staging.grow(stagingMaxSlots)
		}
		for off := 0; off < src.size(); {
			n, err := d.staging.put(src, off, C.CUdeviceptr(b.ptr+uint64(off)), d.stream)
			if err != nil {
				return err
			}
			off += n
		}
		d.markWritten()
		return nil
	})
	if err != nil {
		return fmt.Errorf("cuda: upload %d bytes to %s: %w", src.size(), d.name, err)
	}
	return nil
}

// Download waits for queued work and copies src's raw bytes into dst. It returns the
// device's first failure, if any, since the data would be meaningless.
func (d *Device) Download(dst []byte, src backend.Buffer) error {
	b := d.buffer(src, "Download's source")
	if len(dst) != b.Bytes() {
		return fmt.Errorf("cuda: download from %v (%d, %d): %d bytes given, %d needed", b.dt, b.rows, b.cols, len(dst), b.Bytes())
	}
	err := d.do(func() error {
		if d.err != nil {
			return d.err
		}
		for off := 0; off < len(dst); {
			n, err := d.staging.get(dst[off:], C.CUdeviceptr(b.ptr+uint64(off)), d.stream)
			if err != nil {
				d.fail(err)
				return err
			}
			off += n
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cuda: download %d bytes from %s: %w", len(dst), d.name, err)
	}
	return nil
}

// Staging memory: stagingSlots pinned slots of stagingSlotBytes each at first, so that
// filling one slot overlaps the copy out of the other. The first upload larger than two
// slots grows the ring to stagingMaxSlots (64 MiB): a round then fills up to half of
// them on as many goroutines while the device copies the other half out, so that a
// model load runs at the speed of several memcpys from the page cache, not one.
const (
	stagingSlots     = 2
	stagingMaxSlots  = 16
	stagingSlotBytes = 4 << 20
)

// staging is pinned host memory for transfers; slot i may be refilled once its event
// (recorded after its last copy) has completed.
type staging struct {
	slots     []stagingSlot
	slotBytes int
	next      int
	grown     bool     // grow was tried: the ring stays as it is
	pieces    [][]byte // a round's slot prefixes, reused
}

type stagingSlot struct {
	mem  []byte // pinned, C-allocated: a Go view of C memory
	done C.CUevent
}

func newStaging(slots, size int) (*staging, error) {
	s := &staging{slotBytes: size}
	for range slots {
		if err := s.add(); err != nil {
			return nil, errors.Join(err, s.close())
		}
	}
	return s, nil
}

// add appends one pinned slot with its event.
func (s *staging) add() error {
	var p unsafe.Pointer
	if err := check("cuMemAllocHost_v2", C.cu_mem_alloc_host(&p, C.size_t(s.slotBytes))); err != nil {
		return err
	}
	var e C.CUevent
	if err := check("cuEventCreate", C.cu_event_create(&e, eventDisableTiming)); err != nil {
		return errors.Join(err, check("cuMemFreeHost", C.cu_mem_free_host(p)))
	}
	s.slots = append(s.slots, stagingSlot{mem: unsafe.Slice((*byte)(p), s.slotBytes), done: e})
	return nil
}

// grow adds slots up to n, once. Pinned memory is a resource the system may refuse: a
// failure only keeps the ring as large as it got, since every size works.
func (s *staging) grow(n int) {
	if s.grown {
		return
	}
	s.grown = true
	for len(s.slots) < n {
		if s.add() != nil {
			return
		}
	}
}

// put copies src's bytes from from on into the next round of slots (up to half the ring, one
// goroutine per slot) and queues their copies to dst; it returns the number of bytes
// taken. The slots of the round before stay busy on the device meanwhile.
func (s *staging) put(src payload, from int, dst C.CUdeviceptr, stream C.CUstream) (int, error) {
	rest := src.size() - from
	k := roundSlots(rest, s.slotBytes, len(s.slots))
	s.pieces = s.pieces[:0]
	for i := range k {
		sl := &s.slots[(s.next+i)%len(s.slots)]
		if err := check("cuEventSynchronize", C.cu_event_synchronize(sl.done)); err != nil {
			return 0, err
		}
		s.pieces = append(s.pieces, sl.mem[:min(len(sl.mem), rest-i*s.slotBytes)])
	}
	n, err := fillPieces(s.pieces, src, from)
	if err != nil {
		return 0, err
	}
	off := 0
	for i, p := range s.pieces {
		sl := &s.slots[(s.next+i)%len(s.slots)]
		if err := check("cuMemcpyHtoDAsync_v2", C.cu_memcpy_htod_async(dst+C.CUdeviceptr(off), unsafe.Pointer(&p[0]), C.size_t(len(p)), stream)); err != nil {
			return 0, err
		}
		if err := check("cuEventRecord", C.cu_event_record(sl.done, stream)); err != nil {
			return 0, err
		}
		off += len(p)
	}
	s.next = (s.next + k) % len(s.slots)
	return n, nil
}

// get copies a prefix of the device bytes at src into dst through a slot, waiting for
// the stream; it returns the number of bytes copied.
func (s *staging) get(dst []byte, src C.CUdeviceptr, stream C.CUstream) (int, error) {
	sl := &s.slots[0]
	n := min(len(dst), len(sl.mem))
	if err := check("cuMemcpyDtoHAsync_v2", C.cu_memcpy_dtoh_async(unsafe.Pointer(&sl.mem[0]), src, C.size_t(n), stream)); err != nil {
		return 0, err
	}
	if err := check("cuStreamSynchronize", C.cu_stream_synchronize(stream)); err != nil {
		return 0, err
	}
	return copy(dst, sl.mem[:n]), nil
}

func (s *staging) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, sl := range s.slots {
		errs = append(errs, check("cuMemFreeHost", C.cu_mem_free_host(unsafe.Pointer(&sl.mem[0]))),
			check("cuEventDestroy_v2", C.cu_event_destroy(sl.done)))
	}
	s.slots = nil
	return errors.Join(errs...)
}
