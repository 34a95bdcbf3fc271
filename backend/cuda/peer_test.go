package cuda

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakePeers is a peerDriver with injected answers, keyed by ordinal pair, that records
// the pairs it was asked to enable and verify.
type fakePeers struct {
	ordinals []int
	noPath   map[[2]int]bool
	probeErr map[[2]int]error
	enable_  map[[2]int]error
	verify_  map[[2]int]error
	enabled  [][2]int
	verified [][2]int
}

func (f *fakePeers) key(from, to int) [2]int { return [2]int{f.ordinals[from], f.ordinals[to]} }
func (f *fakePeers) ordinal(i int) int       { return f.ordinals[i] }

func (f *fakePeers) probe(from, to int) (PeerInfo, error) {
	k := f.key(from, to)
	return PeerInfo{CanAccess: !f.noPath[k]}, f.probeErr[k]
}

func (f *fakePeers) enable(from, to int) error {
	f.enabled = append(f.enabled, f.key(from, to))
	return f.enable_[f.key(from, to)]
}

func (f *fakePeers) verify(from, to int) error {
	f.verified = append(f.verified, f.key(from, to))
	return f.verify_[f.key(from, to)]
}

func TestResolve(t *testing.T) {
	tooMany := &Error{Op: "cuCtxEnablePeerAccess", Code: ErrTooManyPeers}
	already := &Error{Op: "cuCtxEnablePeerAccess", Code: ErrPeerAccessAlreadyEnabled}
	tests := []struct {
		name     string
		ordinals []int
		pairs    [][2]int
		mode     PeerMode
		staged   [][2]int
		fake     fakePeers
		want     []PeerState
		enabled  [][2]int // ordinal pairs enable was called for, in order
		logs     int
	}{
		{name: "both directions peer", ordinals: []int{0, 1}, pairs: [][2]int{{0, 1}, {1, 0}},
			want: []PeerState{PeerEnabled, PeerEnabled}, enabled: [][2]int{{0, 1}, {1, 0}}},
		{name: "already enabled is success", ordinals: []int{0, 1}, pairs: [][2]int{{0, 1}},
			fake: fakePeers{enable_: map[[2]int]error{{0, 1}: already}},
			want: []PeerState{PeerEnabled}, enabled: [][2]int{{0, 1}}},
		{name: "no path", ordinals: []int{0, 1}, pairs: [][2]int{{0, 1}, {1, 0}},
			fake: fakePeers{noPath: map[[2]int]bool{{0, 1}: true, {1, 0}: true}},
			want: []PeerState{PeerUnsupported, PeerUnsupported}, logs: 2},
		{name: "too many peers", ordinals: []int{0, 1}, pairs: [][2]int{{0, 1}, {1, 0}},
			fake: fakePeers{enable_: map[[2]int]error{{1, 0}: tooMany}},
			want: []PeerState{PeerEnabled, PeerStaged}, enabled: [][2]int{{0, 1}, {1, 0}}, logs: 1},
		{name: "verify fails", ordinals: []int{0, 1}, pairs: [][2]int{{0, 1}, {1, 0}},
			fake: fakePeers{verify_: map[[2]int]error{{0, 1}: errors.New("byte 7 differs")}},
			want: []PeerState{PeerStaged, PeerEnabled}, enabled: [][2]int{{0, 1}, {1, 0}}, logs: 1},
		{name: "peer off", ordinals: []int{0, 1}, pairs: [][2]int{{0, 1}, {1, 0}}, mode: PeerOff,
			want: []PeerState{PeerStaged, PeerStaged}, logs: 2},
		{name: "mixed", ordinals: []int{0, 1}, pairs: [][2]int{{0, 1}, {1, 0}}, staged: [][2]int{{1, 0}},
			want: []PeerState{PeerEnabled, PeerStaged}, enabled: [][2]int{{0, 1}}, logs: 1},
		{name: "virtual devices 0,1,0,1", ordinals: []int{0, 1, 0, 1}, pairs: [][2]int{{0, 1}, {1, 2}, {2, 3}},
			want: []PeerState{PeerEnabled, PeerEnabled, PeerEnabled}, enabled: [][2]int{{0, 1}, {1, 0}}},
		// Staged names the second Device pair on GPUs 0->1: it stages although the first,
		// on the same GPUs, is Peer; and a third pair on them follows the first.
		{name: "virtual devices, second pair staged", ordinals: []int{0, 1, 0, 1, 0, 1}, pairs: [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}},
			staged: [][2]int{{2, 3}},
			want:   []PeerState{PeerEnabled, PeerEnabled, PeerStaged, PeerEnabled, PeerEnabled}, enabled: [][2]int{{0, 1}, {1, 0}}, logs: 1},
		{name: "virtual devices, first pair staged", ordinals: []int{0, 1, 0, 1}, pairs: [][2]int{{0, 1}, {1, 2}, {2, 3}},
			staged: [][2]int{{0, 1}},
			want:   []PeerState{PeerStaged, PeerEnabled, PeerEnabled}, enabled: [][2]int{{1, 0}, {0, 1}}, logs: 1},
		{name: "same GPU", ordinals: []int{0, 0}, pairs: [][2]int{{0, 1}},
			want: []PeerState{PeerSame}},
		{name: "only planned pairs", ordinals: []int{0, 1, 2}, pairs: [][2]int{{0, 1}, {1, 2}},
			want: []PeerState{PeerEnabled, PeerEnabled}, enabled: [][2]int{{0, 1}, {1, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fake
			f.ordinals = tt.ordinals
			var logs []string
			logf := func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
			got, err := resolve(&f, tt.pairs, tt.mode, tt.staged, logf)
			if err != nil {
				t.Fatal(err)
			}
			var states []PeerState
			for i, p := range got {
				states = append(states, p.State)
				if p.From != tt.pairs[i][0] || p.To != tt.pairs[i][1] {
					t.Errorf("pair %d is %d->%d, want %v", i, p.From, p.To, tt.pairs[i])
				}
				if (p.Reason == "") != p.State.Direct() {
					t.Errorf("pair %v: state %v with reason %q", tt.pairs[i], p.State, p.Reason)
				}
			}
			if !slices.Equal(states, tt.want) {
				t.Errorf("states %v, want %v", states, tt.want)
			}
			if !slices.Equal(f.enabled, tt.enabled) {
				t.Errorf("enabled %v, want %v", f.enabled, tt.enabled)
			}
			if !slices.Equal(f.verified, f.enabled) && tt.fake.enable_ == nil {
				t.Errorf("verified %v, want every enabled pair %v", f.verified, f.enabled)
			}
			if len(logs) != tt.logs {
				t.Errorf("%d log lines, want %d: %q", len(logs), tt.logs, logs)
			}
			for _, l := range logs {
				if !strings.Contains(l, "stage through pinned host memory") {
					t.Errorf("log line %q does not say the pair stages", l)
				}
			}
		})
	}
}

// TestResolveTooManyPeersNotVerified checks that a pair whose enable fails is not
// verified and that its reason names the driver error.
func TestResolveTooManyPeersNotVerified(t *testing.T) {
	f := fakePeers{ordinals: []int{0, 1}, enable_: map[[2]int]error{{0, 1}: &Error{Op: "cuCtxEnablePeerAccess", Code: ErrTooManyPeers}}}
	got, err := resolve(&f, [][2]int{{0, 1}}, PeerAuto, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].State != PeerStaged || !strings.Contains(got[0].Reason, "CUDA_ERROR_TOO_MANY_PEERS") || len(f.verified) != 0 {
		t.Errorf("got %+v, verified %v; want Staged naming TOO_MANY_PEERS, nothing verified", got[0], f.verified)
	}
}

// TestResolvePeerLimit plans a chain over ten GPUs (1->2->...->10) plus a star from
// GPU 0 to each of them, and checks that no GPU gets more than maxPeers peers: the chain
// gives every GPU at most two, the star takes GPU 0 to the limit, and its pairs past
// the limit stage without asking the driver.
func TestResolvePeerLimit(t *testing.T) {
	ord := make([]int, 11)
	for i := range ord {
		ord[i] = i
	}
	var pairs [][2]int
	for j := 1; j < 10; j++ {
		pairs = append(pairs, [2]int{j, j + 1}) // the chain
	}
	for j := 1; j < len(ord); j++ {
		pairs = append(pairs, [2]int{0, j}) // the star
	}
	f := fakePeers{ordinals: ord}
	got, err := resolve(&f, pairs, PeerAuto, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	peersOf := map[int]map[int]bool{}
	link := func(a, b int) {
		if peersOf[a] == nil {
			peersOf[a] = map[int]bool{}
		}
		peersOf[a][b] = true
	}
	var staged [][2]int
	for i, p := range got {
		switch p.State {
		case PeerEnabled:
			link(p.From, p.To)
			link(p.To, p.From)
		case PeerStaged:
			staged = append(staged, [2]int{p.From, p.To})
			if !strings.Contains(p.Reason, "limit") {
				t.Errorf("pair %d->%d stages for %q, want the peer limit", p.From, p.To, p.Reason)
			}
		default:
			t.Errorf("pair %d->%d is %v", p.From, p.To, p.State)
		}
		if i < 9 && p.State != PeerEnabled {
			t.Errorf("chain pair %d->%d is %v, want peer", p.From, p.To, p.State)
		}
	}
	for g, ps := range peersOf {
		if len(ps) > maxPeers {
			t.Errorf("GPU %d has %d peers, more than %d", g, len(ps), maxPeers)
		}
	}
	if n := len(peersOf[0]); n != maxPeers {
		t.Errorf("GPU 0 has %d peers, want the limit %d", n, maxPeers)
	}
	if want := [][2]int{{0, 9}, {0, 10}}; !slices.Equal(staged, want) {
		t.Errorf("staged pairs %v, want %v", staged, want)
	}
	if len(f.enabled) != 9+maxPeers {
		t.Errorf("enable asked for %d pairs, want %d", len(f.enabled), 9+maxPeers)
	}
}

func TestResolveProbeError(t *testing.T) {
	f := fakePeers{ordinals: []int{0, 1}, probeErr: map[[2]int]error{{0, 1}: &Error{Op: "cuDeviceCanAccessPeer", Code: ErrInvalidDevice}}}
	if _, err := resolve(&f, [][2]int{{0, 1}}, PeerAuto, nil, nil); !errors.Is(err, ErrInvalidDevice) {
		t.Fatalf("resolve with a failing probe: %v, want ErrInvalidDevice", err)
	}
}

func TestParsePeerMode(t *testing.T) {
	for s, want := range map[string]PeerMode{"auto": PeerAuto, "on": PeerAuto, "off": PeerOff, "OFF": PeerOff} {
		if got, err := ParsePeerMode(s); err != nil || got != want {
			t.Errorf("ParsePeerMode(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := ParsePeerMode("sometimes"); err == nil {
		t.Error("ParsePeerMode(sometimes) succeeded")
	}
	if PeerEnabled.String() != "peer" || PeerStaged.String() != "staged" || PeerOff.String() != "off" {
		t.Error("state or mode names changed")
	}
}
