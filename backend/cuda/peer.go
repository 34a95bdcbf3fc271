package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/infergo/infer/backend"
)

// P2P attributes (CUdevice_P2PAttribute).
const (
	p2pPerformanceRank = 1
	p2pNativeAtomics   = 3
)

// PeerInfo is what the driver says about the path from one device to another.
type PeerInfo struct {
	CanAccess       bool // cuDeviceCanAccessPeer
	PerformanceRank int  // lower is faster
	NativeAtomics   bool
}

// Peer asks the driver whether d can read and write peer's memory directly. It changes
// nothing; EnablePeer does.
func (d *Device) Peer(peer *Device) (PeerInfo, error) {
	var info PeerInfo
	var can C.int
	if err := check("cuDeviceCanAccessPeer", C.cu_device_can_access_peer(&can, d.dev, peer.dev)); err != nil {
		return info, fmt.Errorf("cuda: peer %s→%s: %w", d.name, peer.name, err)
	}
	info.CanAccess = can != 0
	if !info.CanAccess {
		return info, nil
	}
	attrs := []struct {
		id  int
		dst *int
	}{{p2pPerformanceRank, &info.PerformanceRank}}
	for _, a := range attrs {
		var v C.int
		if err := check("cuDeviceGetP2PAttribute", C.cu_device_get_p2p_attribute(&v, C.int(a.id), d.dev, peer.dev)); err != nil {
			return info, fmt.Errorf("cuda: peer %s→%s: %w", d.name, peer.name, err)
		}
		*a.dst = int(v)
	}
	var atomics C.int
	if check("cuDeviceGetP2PAttribute", C.cu_device_get_p2p_attribute(&atomics, p2pNativeAtomics, d.dev, peer.dev)) == nil {
		info.NativeAtomics = atomics != 0
	}
	return info, nil
}

// EnablePeer lets kernels and copies on d use peer's plain allocations directly
// (cuCtxEnablePeerAccess); access already enabled counts as success. Peer access is
// never disabled while the devices live. (VMM buffers need Grant instead.)
func (d *Device) EnablePeer(peer *Device) error {
	err := d.do(func() error { return check("cuCtxEnablePeerAccess", C.cu_ctx_enable_peer_access(peer.ctx, 0)) })
	if errors.Is(err, ErrPeerAccessAlreadyEnabled) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cuda: enable peer access %s→%s: %w", d.name, peer.name, err)
	}
	return nil
}

var _ backend.Transferer = (*Device)(nil)

// TransferFrom enqueues dst = src where src is a buffer of another CUDA device (or of
// d): the copy runs on the source device's stream (cuMemcpyPeerAsync, which the driver
// stages through the host when the devices have no peer path), an event is recorded
// there, and d's stream waits on it, so the host never waits. ok is false when src is
// not a CUDA buffer.
func (d *Device) TransferFrom(dst, src backend.Buffer) (ok bool, err error) {
	o := d.buffer(dst, "TransferFrom dst")
	s, isCUDA := src.(*Buffer)
	if !isCUDA {
		return false, nil
	}
	if s.dt != o.dt || s.rows != o.rows || s.cols != o.cols {
		panic(fmt.Sprintf("cuda: TransferFrom %v (%d, %d) to %v (%d, %d)", s.dt, s.rows, s.cols, o.dt, o.rows, o.cols))
	}
	n := C.size_t(o.Bytes())
	if s.dev == d {
		err := d.do(func() error {
			d.q8.valid = false
			return check("cuMemcpyDtoDAsync_v2", C.cu_memcpy_dtod_async(C.CUdeviceptr(o.ptr), C.CUdeviceptr(s.ptr), n, d.stream))
		})
		return true, err
	}
	src0 := s.dev
	var ev C.CUevent
	err = src0.do(func() error {
		if err := check("cuEventCreate", C.cu_event_create(&ev, 2 /* DISABLE_TIMING */)); err != nil {
			return err
		}
		if err := check("cuMemcpyPeerAsync", C.cu_memcpy_peer_async(C.CUdeviceptr(o.ptr), d.ctx, C.CUdeviceptr(s.ptr), src0.ctx, n, src0.stream)); err != nil {
			C.cu_event_destroy(ev)
			return err
		}
		return check("cuEventRecord", C.cu_event_record(ev, src0.stream))
	})
	if err != nil {
		return true, fmt.Errorf("cuda: transfer %s→%s: %w", src0.name, d.name, err)
	}
	err = d.do(func() error {
		d.q8.valid = false
		werr := check("cuStreamWaitEvent", C.cu_stream_wait_event(d.stream, ev, 0))
		return errors.Join(werr, check("cuEventDestroy_v2", C.cu_event_destroy(ev))) // released once complete
	})
	if err != nil {
		return true, fmt.Errorf("cuda: transfer %s→%s: %w", src0.name, d.name, err)
	}
	return true, nil
}
