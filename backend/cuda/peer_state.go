package cuda

import (
	"errors"
	"fmt"
	"strings"
)

// PeerOptions configures NewPeers.
type PeerOptions struct {
	// Mode is PeerAuto (the default) or PeerOff, which stages every pair.
	Mode PeerMode
	// Staged lists pairs (device indices) that stage through host memory even in
	// PeerAuto: one direction of a link known to misbehave, or a test's mixed plan.
	Staged [][2]int
	// Logf, if not nil, gets one line for each pair that falls back to staging.
	Logf func(format string, args ...any)
}

// maxPeers is the driver's limit on peer connections per device (CUDA_ERROR_TOO_MANY_PEERS
// past it); the state machine never asks for more.
const maxPeers = 8

// PeerMode chooses whether device pairs may use direct peer access.
type PeerMode uint8

const (
	// PeerAuto enables peer access for each planned pair that can use it and passes the
	// verification copy; every other pair stages through pinned host memory.
	PeerAuto PeerMode = iota
	// PeerOff stages every pair through pinned host memory (`--peer off`), for boards
	// that corrupt peer traffic. Peer access is not enabled.
	PeerOff
)

// String is "auto" or "off".
func (m PeerMode) String() string {
	if m == PeerOff {
		return "off"
	}
	return "auto"
}

// ParsePeerMode parses a --peer flag: "auto" (or "on") and "off".
func ParsePeerMode(s string) (PeerMode, error) {
	switch strings.ToLower(s) {
	case "auto", "on", "":
		return PeerAuto, nil
	case "off":
		return PeerOff, nil
	}
	return PeerAuto, fmt.Errorf("cuda: peer mode %q: want auto or off", s)
}

// PeerState is where an ordered device pair stands in the peer-access state machine:
//
//	Unknown --probe--> Capable --enable+verify--> Peer
//	        \--------> Unsupported                \--> Staged
//
// Peer pairs copy directly; Staged and Unsupported pairs copy through pinned host
// memory; Same pairs are two Device values on one GPU and copy device to device.
type PeerState uint8

// The states of a pair.
const (
	PeerUnknown     PeerState = iota // not probed yet
	PeerCapable                      // the driver reports a peer path; not yet enabled
	PeerUnsupported                  // no peer path between the GPUs
	PeerEnabled                      // peer access enabled and verified
	PeerStaged                       // capable, but mode off, enable failed or verify failed
	PeerSame                         // the same physical GPU
)

// peerStateNames are the PeerState names, indexed by state.
var peerStateNames = [...]string{"unknown", "capable", "unsupported", "peer", "staged", "same"}

// String is the state's short name, as `infer devices` prints it.
func (s PeerState) String() string {
	if int(s) < len(peerStateNames) {
		return peerStateNames[s]
	}
	return fmt.Sprintf("PeerState(%d)", s)
}

// Direct reports whether transfers of the pair avoid host memory.
func (s PeerState) Direct() bool { return s == PeerEnabled || s == PeerSame }

// PeerInfo is what the driver says about the path from one device to another.
type PeerInfo struct {
	CanAccess       bool // cuDeviceCanAccessPeer
	PerformanceRank int  // lower is faster
	NativeAtomics   bool
}

// Pair is one ordered device pair of a peer table, as the state machine left it.
type Pair struct {
	From, To int       // indices into the devices given to NewPeers
	State    PeerState // never Unknown or Capable once NewPeers returns
	Info     PeerInfo  // the probe's answer
	Reason   string    // why the pair stages; empty for Peer and Same pairs
}

// peerDriver is what the state machine asks of the driver, by device index; tests
// inject a fake. enable may return ErrPeerAccessAlreadyEnabled, which counts as success;
// verify copies a known pattern from one device to the other by the peer path and
// compares it.
type peerDriver interface {
	ordinal(i int) int
	probe(from, to int) (PeerInfo, error)
	enable(from, to int) error
	verify(from, to int) error
}

// resolve runs the state machine for each planned pair, once per pair of physical GPUs,
// enabling peer access only for those pairs (and never past maxPeers per GPU). staged
// lists pairs forced to stage whatever mode says. logf gets one line per pair that
// stages. Only a failing probe is an error: every other failure means Staged.
func resolve(drv peerDriver, pairs [][2]int, mode PeerMode, staged [][2]int, logf func(string, ...any)) ([]Pair, error) {
	forced := map[[2]int]bool{}
	for _, p := range staged {
		forced[p] = true
	}
	// done holds the decisions by ordinal pair and whether the pair was forced to stage:
	// two Device pairs on the same GPUs share the decision, unless Staged names one of
	// them and not the other.
	type decision struct {
		from, to int
		forced   bool
	}
	done := map[decision]Pair{}
	linked := map[int]map[int]bool{} // ordinal -> ordinals it has peer access with
	out := make([]Pair, 0, len(pairs))
	for _, pr := range pairs {
		from, to := drv.ordinal(pr[0]), drv.ordinal(pr[1])
		key := decision{from, to, forced[pr]}
		p, seen := done[key]
		if !seen {
			var err error
			p, err = resolvePair(drv, pr, mode, forced[pr], linked)
			if err != nil {
				return nil, err
			}
			if p.Reason != "" && logf != nil {
				logf("cuda: peer %d->%d: %s; transfers stage through pinned host memory", from, to, p.Reason)
			}
			done[key] = p
		}
		p.From, p.To = pr[0], pr[1]
		out = append(out, p)
	}
	return out, nil
}

// resolvePair takes one pair from Unknown to its final state.
func resolvePair(drv peerDriver, pr [2]int, mode PeerMode, forced bool, linked map[int]map[int]bool) (Pair, error) {
	p := Pair{From: pr[0], To: pr[1], State: PeerUnknown}
	from, to := drv.ordinal(pr[0]), drv.ordinal(pr[1])
	if from == to {
		p.State = PeerSame
		return p, nil
	}
	info, err := drv.probe(pr[0], pr[1])
	if err != nil {
		return p, fmt.Errorf("cuda: probe peer %d->%d: %w", from, to, err)
	}
	p.Info = info
	if !info.CanAccess {
		p.State, p.Reason = PeerUnsupported, "no peer path (cuDeviceCanAccessPeer = 0)"
		return p, nil
	}
	p.State = PeerCapable
	switch {
	case mode == PeerOff:
		p.State, p.Reason = PeerStaged, "peer access off"
		return p, nil
	case forced:
		p.State, p.Reason = PeerStaged, "pair forced to stage"
		return p, nil
	case !linked[from][to] && (len(linked[from]) >= maxPeers || len(linked[to]) >= maxPeers):
		p.State, p.Reason = PeerStaged, fmt.Sprintf("%d-peer limit reached", maxPeers)
		return p, nil
	}
	if err := drv.enable(pr[0], pr[1]); err != nil && !errors.Is(err, ErrPeerAccessAlreadyEnabled) {
		p.State, p.Reason = PeerStaged, fmt.Sprintf("enable failed: %v", err)
		return p, nil
	}
	for _, e := range [][2]int{{from, to}, {to, from}} {
		if linked[e[0]] == nil {
			linked[e[0]] = map[int]bool{}
		}
		linked[e[0]][e[1]] = true
	}
	if err := drv.verify(pr[0], pr[1]); err != nil {
		p.State, p.Reason = PeerStaged, fmt.Sprintf("verification copy failed: %v", err)
		return p, nil
	}
	p.State = PeerEnabled
	return p, nil
}
