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

// Peers is the peer-access table of one set of devices: for every ordered pair a plan
// needs (neighbouring stages), the state NewPeers decided and the resources its
// transfers use. NewPeers makes every decision under one lock before any work is
// queued; afterwards the table is read-only, and no method disables peer access.
//
// Each device belongs to at most one open table; Device.TransferFrom finds it there.
type Peers struct {
	mu     sync.RWMutex // transfers hold it shared; Close holds it exclusively
	devs   []*Device
	pairs  []Pair
	links  map[[2]*Device]*link // from, to
	closed bool
}

// NewPeers runs the peer-access state machine for pairs (indices into devs: {from, to},
// where from produces the hidden state and to consumes it) and sets up their transfers.
// Two entries of devs may be the same GPU (virtual devices): those pairs copy device to
// device. A failing driver probe is an error; every other failure only stages the pair.
func NewPeers(devs []*Device, pairs [][2]int, opts PeerOptions) (*Peers, error) {
	for _, pr := range pairs {
		if pr[0] < 0 || pr[0] >= len(devs) || pr[1] < 0 || pr[1] >= len(devs) || devs[pr[0]] == devs[pr[1]] {
			return nil, fmt.Errorf("cuda: peer pair %v: not two devices of %d", pr, len(devs))
		}
	}
	p := &Peers{devs: devs, links: map[[2]*Device]*link{}}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range devs {
		if err := d.attach(p); err != nil {
			p.detach()
			return nil, err
		}
	}
	var err error
	p.pairs, err = resolve(devicePeers(devs), pairs, opts.Mode, opts.Staged, opts.Logf)
	if err != nil {
		p.detach()
		return nil, err
	}
	for _, pr := range p.pairs {
		from, to := devs[pr.From], devs[pr.To]
		if p.links[[2]*Device{from, to}] != nil {
			continue
		}
		l, err := newLink(from, to, pr.State)
		if err != nil {
			p.closeLocked()
			return nil, fmt.Errorf("cuda: transfer %s → %s: %w", from.name, to.name, err)
		}
		p.links[[2]*Device{from, to}] = l
	}
	return p, nil
}

// Pairs returns the table: one entry per pair given to NewPeers, in order.
func (p *Peers) Pairs() []Pair { return append([]Pair(nil), p.pairs...) }

// State returns the state of the pair from → to (device indices), or PeerUnknown for a
// pair the table was not built for.
func (p *Peers) State(from, to int) PeerState {
	for _, pr := range p.pairs {
		if pr.From == from && pr.To == to {
			return pr.State
		}
	}
	return PeerUnknown
}

// peerEither reports whether a planned pair between two devices of the table, in
// either direction, is Peer.
func (p *Peers) peerEither(a, b *Device) bool {
	for _, k := range [][2]*Device{{a, b}, {b, a}} {
		if l := p.links[k]; l != nil && l.state == PeerEnabled {
			return true
		}
	}
	return false
}

// Close synchronizes every stream of the table's devices and transfers, then releases
// the transfers' streams, events and pinned memory and detaches the devices. Peer
// access stays enabled. Close the table before its devices.
func (p *Peers) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	return p.closeLocked()
}

func (p *Peers) closeLocked() error {
	p.closed = true
	var errs []error
	for _, d := range p.devs {
		errs = append(errs, d.do(func() error {
			return check("cuStreamSynchronize", C.cu_stream_synchronize(d.stream))
		}))
	}
	for _, l := range p.links {
		errs = append(errs, l.sync())
	}
	for _, l := range p.links {
		errs = append(errs, l.close())
	}
	p.links = nil
	p.detach()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cuda: close peer table: %w", err)
	}
	return nil
}

// attach makes p d's table; a device belongs to one open table at a time.
func (d *Device) attach(p *Peers) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.peers != nil && d.peers != p {
		return fmt.Errorf("cuda: %s already belongs to an open peer table", d.name)
	}
	d.peers = p
	return nil
}

// detach releases the devices attached to p.
func (p *Peers) detach() {
	for _, d := range p.devs {
		d.mu.Lock()
		if d.peers == p {
			d.peers = nil
		}
		d.mu.Unlock()
	}
}

// table returns the peer table d belongs to, or nil.
func (d *Device) table() *Peers {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.peers
}

// devicePeers is the real peerDriver.
type devicePeers []*Device

func (ds devicePeers) ordinal(i int) int                    { return ds[i].ordinal }
func (ds devicePeers) probe(from, to int) (PeerInfo, error) { return ds[from].Peer(ds[to]) }
func (ds devicePeers) enable(from, to int) error            { return ds[from].enablePeer(ds[to]) }

// verifyBytes is the size of the verification copy: more than one page and not a
// multiple of one, so a copy that drops or shifts bytes shows.
const verifyBytes = 1<<20 + 4099

// verify checks the peer path from → to on the kind of memory hand-offs use: it copies a
// known pattern with cuMemcpyPeerAsync on from's stream (the handoff's path) into a
// boundary buffer of to (a VMM mapping that from may access, as AllocShared makes for a
// Peer pair), reads it back and compares; once from a plain allocation of from and once
// from a mapped one, since a stage's output may be either.
func (ds devicePeers) verify(from, to int) error {
	src, dst := ds[from], ds[to]
	b, err := dst.boundary(tensor.I8, 1, verifyBytes, src)
	if err != nil {
		return err
	}
	defer dst.Free(b)
	kinds := []bool{false}
	if src.info.VMM {
		kinds = append(kinds, true)
	}
	for i, mapped := range kinds {
		want := make([]byte, verifyBytes)
		for j := range want {
			want[j] = byte(j*131 + j>>11 + 0x5a + 77*i)
		}
		if err := verifyCopy(src, dst, b, want, mapped); err != nil {
			what := "plain"
			if mapped {
				what = "mapped"
			}
			return fmt.Errorf("from a %s buffer into a boundary buffer: %w", what, err)
		}
	}
	return nil
}

// verifyCopy uploads want to a new buffer of src (mapped or plain), copies it into b on
// dst by the peer path, and compares what b then holds.
func verifyCopy(src, dst *Device, b *Buffer, want []byte, mapped bool) error {
	var a backend.Buffer
	var err error
	if mapped {
		a, err = src.AllocMapped(tensor.I8, 1, len(want))
	} else {
		a, err = src.Alloc(tensor.I8, 1, len(want))
	}
	if err != nil {
		return err
	}
	defer src.Free(a)
	if err := errors.Join(src.Upload(a, want), dst.Sync()); err != nil { // b is zeroed, not in use
		return err
	}
	pa := a.(*Buffer).ptr
	err = src.do(func() error {
		err := check("cuMemcpyPeerAsync", C.cu_memcpy_peer_async(C.CUdeviceptr(b.ptr), dst.ctx, C.CUdeviceptr(pa), src.ctx, C.size_t(len(want)), src.stream))
		return errors.Join(err, check("cuStreamSynchronize", C.cu_stream_synchronize(src.stream)))
	})
	if err != nil {
		return err
	}
	got := make([]byte, len(want))
	if err := dst.Download(got, b); err != nil {
		return err
	}
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("byte %d of %d is %#x, want %#x", i, len(want), got[i], want[i])
		}
	}
	return nil
}
