package cuda

/*
#include "driver.h"
*/
import "C"

import "fmt"

// P2P attributes (CUdevice_P2PAttribute).
const (
	p2pPerformanceRank = 1
	p2pNativeAtomics   = 3
)

// Peer asks the driver whether d can read and write peer's memory directly. It changes
// nothing; NewPeers decides and enables.
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
	var rank C.int
	if err := check("cuDeviceGetP2PAttribute", C.cu_device_get_p2p_attribute(&rank, p2pPerformanceRank, d.dev, peer.dev)); err != nil {
		return info, fmt.Errorf("cuda: peer %s→%s: %w", d.name, peer.name, err)
	}
	info.PerformanceRank = int(rank)
	var atomics C.int
	if check("cuDeviceGetP2PAttribute", C.cu_device_get_p2p_attribute(&atomics, p2pNativeAtomics, d.dev, peer.dev)) == nil {
		info.NativeAtomics = atomics != 0
	}
	return info, nil
}

// enablePeer lets copies and kernels on d use peer's plain allocations directly
// (cuCtxEnablePeerAccess). It returns the driver's error as is, ALREADY_ENABLED too;
// only NewPeers calls it, and nothing ever disables peer access.
func (d *Device) enablePeer(peer *Device) error {
	return d.do(func() error { return check("cuCtxEnablePeerAccess", C.cu_ctx_enable_peer_access(peer.ctx, 0)) })
}
