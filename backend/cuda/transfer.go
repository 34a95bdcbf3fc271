package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

var (
	_ backend.Transferer      = (*Device)(nil)
	_ backend.SharedAllocator = (*Device)(nil)
)

// TransferFrom enqueues dst = src, where src is a buffer of d or of another device of
// d's peer table, by the pair's path: a peer copy on the producer's stream, a pipelined
// copy through pinned host memory, or a device-to-device copy when both live on one GPU.
// Every path is ordered with events: the copy starts after the work queued so far on
// both devices (src is written, dst no longer read), and d's later work starts after
// it. The host never waits. ok is false only when src is not a CUDA buffer (split then
// copies through host memory, as between a CPU and a GPU stage). Between two CUDA
// devices without a path in one open peer table it is an error, not a silent blocking
// copy through pageable host memory: build the table (NewPeers, or package gpu's Load)
// with the pair.
func (d *Device) TransferFrom(dst, src backend.Buffer) (ok bool, err error) {
	o := d.buffer(dst, "TransferFrom's destination")
	s, isCUDA := src.(*Buffer)
	if !isCUDA {
		return false, nil
	}
	if s.dt != o.dt || s.rows != o.rows || s.cols != o.cols {
		panic(fmt.Sprintf("cuda: TransferFrom %v (%d, %d) to %v (%d, %d)", s.dt, s.rows, s.cols, o.dt, o.rows, o.cols))
	}
	n := o.Bytes()
	if s.dev.device == d.device {
		err := d.do(func() error {
			return check("cuMemcpyDtoDAsync_v2", C.cu_memcpy_dtod_async(C.CUdeviceptr(o.ptr), C.CUdeviceptr(s.ptr), C.size_t(n), d.stream))
		})
		return true, err
	}
	noPath := func(why string) (bool, error) {
		return true, fmt.Errorf("cuda: transfer %s → %s: %s; build a peer table with the pair (NewPeers)", s.dev.name, d.name, why)
	}
	p := d.table()
	if p == nil || s.dev.table() != p {
		return noPath("the devices share no open peer table")
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return noPath("their peer table is closed")
	}
	l := p.links[[2]*Device{s.dev, d}]
	if l == nil {
		return noPath("the pair is not in their peer table")
	}
	if err := l.copy(o.ptr, s.ptr, n, copyBoth); err != nil {
		return true, fmt.Errorf("cuda: transfer %d bytes %s → %s (%v): %w", n, s.dev.name, d.name, l.state, err)
	}
	return true, nil
}

// AllocShared allocates a hidden-state buffer at a stage boundary between d and peer.
// When the two GPUs have a verified peer path (in d's peer table, either direction) it
// is a VMM allocation on d, rounded up to the granularity, which d and exactly peer may
// read and write (cuMemSetAccess); otherwise it is a plain allocation, since staged and
// same-GPU transfers need no mapping.
func (d *Device) AllocShared(dt tensor.DType, rows, cols int, peer backend.Device) (backend.Buffer, error) {
	pd, isCUDA := peer.(*Device)
	p := d.table()
	if !isCUDA || p == nil || !d.info.VMM || pd.ordinal == d.ordinal {
		return d.Alloc(dt, rows, cols)
	}
	p.mu.RLock()
	direct := p.peerEither(d, pd)
	p.mu.RUnlock()
	if !direct {
		return d.Alloc(dt, rows, cols)
	}
	return d.boundary(dt, rows, cols, pd)
}

// boundary allocates a buffer that d and peer may both access: a VMM mapping on d with
// access granted to peer where d supports VMM, else a plain allocation (which peer
// reaches through peer access to d's context).
func (d *Device) boundary(dt tensor.DType, rows, cols int, peer *Device) (*Buffer, error) {
	if !d.info.VMM {
		b, err := d.Alloc(dt, rows, cols)
		if err != nil {
			return nil, err
		}
		return b.(*Buffer), nil
	}
	b, err := d.AllocMapped(dt, rows, cols)
	if err != nil {
		return nil, err
	}
	if err := d.Grant(b, peer); err != nil {
		d.Free(b)
		return nil, err
	}
	return b, nil
}

// copyParts selects the halves of a staged copy: both (a transfer), or one alone (to
// measure how much the pipeline overlaps them).
type copyParts uint8

const (
	copyD2H  copyParts = 1 << iota // device to host slots only
	copyH2D                        // host slots to device only
	copyBoth = copyD2H | copyH2D
)

// link is the transfer mechanism of one ordered pair of devices. Its lock keeps each
// transfer's sequence of records and waits together.
type link struct {
	mu       sync.Mutex
	from, to *Device
	state    PeerState
	// Peer and Same pairs: ready is recorded on from's stream after the copy (from's
	// context); free on to's stream before it (to's context).
	ready, free C.CUevent
	staged      *staged // Staged and Unsupported pairs
}

// newLink creates the events (and, for a staged pair, streams and pinned slots) of a pair.
func newLink(from, to *Device, st PeerState) (*link, error) {
	l := &link{from: from, to: to, state: st}
	if !st.Direct() {
		var err error
		l.staged, err = newStaged(from, to, stagedSlots, stagedSlotBytes)
		return l, err
	}
	err := from.do(func() error { return check("cuEventCreate", C.cu_event_create(&l.ready, eventDisableTiming)) })
	if err != nil {
		return nil, err
	}
	err = to.do(func() error { return check("cuEventCreate", C.cu_event_create(&l.free, eventDisableTiming)) })
	if err != nil {
		return nil, errors.Join(err, from.do(func() error { return check("cuEventDestroy_v2", C.cu_event_destroy(l.ready)) }))
	}
	return l, nil
}

// eventDisableTiming is CU_EVENT_DISABLE_TIMING: the lighter events used for ordering.
const eventDisableTiming = 2

// copy enqueues n bytes from src (on l.from) to dst (on l.to).
func (l *link) copy(dst, src uint64, n int, parts copyParts) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.staged != nil {
		return l.staged.copy(C.CUdeviceptr(dst), C.CUdeviceptr(src), n, parts)
	}
	from, to := l.from, l.to
	err := to.do(func() error {
		return check("cuEventRecord", C.cu_event_record(l.free, to.stream))
	})
	if err != nil {
		return err
	}
	err = from.do(func() error {
		if err := check("cuStreamWaitEvent", C.cu_stream_wait_event(from.stream, l.free, 0)); err != nil {
			return err
		}
		var err error
		if l.state == PeerSame {
			err = check("cuMemcpyDtoDAsync_v2", C.cu_memcpy_dtod_async(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), from.stream))
		} else {
			err = check("cuMemcpyPeerAsync", C.cu_memcpy_peer_async(C.CUdeviceptr(dst), to.ctx, C.CUdeviceptr(src), from.ctx, C.size_t(n), from.stream))
		}
		if err != nil {
			return err
		}
		return check("cuEventRecord", C.cu_event_record(l.ready, from.stream))
	})
	if err != nil {
		return err
	}
	return to.do(func() error { return check("cuStreamWaitEvent", C.cu_stream_wait_event(to.stream, l.ready, 0)) })
}

// sync waits for the link's own streams (staged pairs); Peer and Same pairs use the
// devices' streams.
func (l *link) sync() error {
	if l.staged != nil {
		return l.staged.sync()
	}
	return nil
}

// close releases the link's resources; its streams must be idle.
func (l *link) close() error {
	if l.staged != nil {
		return l.staged.close()
	}
	return errors.Join(
		l.from.do(func() error { return check("cuEventDestroy_v2", C.cu_event_destroy(l.ready)) }),
		l.to.do(func() error { return check("cuEventDestroy_v2", C.cu_event_destroy(l.free)) }),
	)
}
