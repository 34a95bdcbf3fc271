//go:build cgo

package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/infergo/infer/backend"
	"github.com/infergo/infer/tensor"
)

// openOrdinals opens the given GPUs (an ordinal may repeat: virtual devices) for t, or
// skips t without a driver or with fewer GPUs than it names.
func openOrdinals(t testing.TB, ordinals ...int) []*Device {
	t.Helper()
	n, err := Count()
	if errors.Is(err, ErrNoDriver) {
		t.Skipf("cuda: no CUDA driver: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ordinals {
		if o >= n {
			t.Skipf("cuda: needs GPU %d, found %d GPUs (run on nvidia-h200-x2)", o, n)
		}
	}
	var devs []*Device
	for _, o := range ordinals {
		devs = append(devs, openTestWith(t, o, Options{}))
	}
	return devs
}

// newTestPeers builds a peer table for t, closed (before the devices) when t ends.
func newTestPeers(t testing.TB, devs []*Device, pairs [][2]int, opts PeerOptions) *Peers {
	t.Helper()
	opts.Logf = t.Logf
	p, err := NewPeers(devs, pairs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Peers.Close: %v", err)
		}
	})
	for _, pr := range p.Pairs() {
		t.Logf("pair %d->%d (%s -> %s): %v %+v %s", pr.From, pr.To, devs[pr.From].name, devs[pr.To].name, pr.State, pr.Info, pr.Reason)
	}
	return p
}

var bothWays = [][2]int{{0, 1}, {1, 0}}

// needPeerPath skips t unless the driver reports a peer path between devs[0] and
// devs[1] in both directions (NVLink, or PCIe with P2P): on other machines peer pairs
// stage, which the staged tests cover.
func needPeerPath(t *testing.T, devs []*Device) {
	t.Helper()
	for _, pr := range bothWays {
		info, err := devs[pr[0]].Peer(devs[pr[1]])
		if err != nil {
			t.Fatal(err)
		}
		if !info.CanAccess {
			t.Skipf("no peer path from %s to %s (cuDeviceCanAccessPeer = 0): this machine stages every pair", devs[pr[0]].name, devs[pr[1]].name)
		}
	}
}

// TestPeersReachPeer checks the state machine on two GPUs with a peer path: both
// directions end Peer, and building the table again (access already enabled) gives the
// same answer.
func TestPeersReachPeer(t *testing.T) {
	devs := openOrdinals(t, 0, 1)
	needPeerPath(t, devs)
	for round := range 2 {
		p, err := NewPeers(devs, bothWays, PeerOptions{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range p.Pairs() {
			t.Logf("round %d: pair %d->%d: %v %+v", round, pr.From, pr.To, pr.State, pr.Info)
			if pr.State != PeerEnabled {
				t.Errorf("round %d: pair %d->%d is %v (%s), want peer", round, pr.From, pr.To, pr.State, pr.Reason)
			}
		}
		if _, err := NewPeers(devs, bothWays, PeerOptions{}); err == nil {
			t.Error("a second open table on the same devices was accepted")
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// transferConfig is one way to connect two devices.
type transferConfig struct {
	name     string
	ordinals []int
	opts     PeerOptions
	want     [2]PeerState // 0->1, 1->0
}

var transferConfigs = []transferConfig{
	{"peer", []int{0, 1}, PeerOptions{}, [2]PeerState{PeerEnabled, PeerEnabled}},
	{"staged", []int{0, 1}, PeerOptions{Mode: PeerOff}, [2]PeerState{PeerStaged, PeerStaged}},
	{"mixed", []int{0, 1}, PeerOptions{Staged: [][2]int{{1, 0}}}, [2]PeerState{PeerEnabled, PeerStaged}},
	{"same", []int{0, 0}, PeerOptions{}, [2]PeerState{PeerSame, PeerSame}},
}

// setUp opens the config's devices and table and checks the states; a config that
// expects a Peer pair is skipped on a machine without a peer path.
func (c transferConfig) setUp(t *testing.T) ([]*Device, *Peers) {
	devs := openOrdinals(t, c.ordinals...)
	if c.want[0] == PeerEnabled || c.want[1] == PeerEnabled {
		needPeerPath(t, devs)
	}
	p := newTestPeers(t, devs, bothWays, c.opts)
	for i, pr := range bothWays {
		if st := p.State(pr[0], pr[1]); st != c.want[i] {
			t.Fatalf("pair %v is %v, want %v", pr, st, c.want[i])
		}
	}
	return devs, p
}

// TestTransferExact moves random data over every path, both ways, for sizes from a few
// bytes to past the staging slots, most of them no multiple of a chunk, between plain
// buffers and between shared (VMM) ones.
func TestTransferExact(t *testing.T) {
	shapes := []struct {
		dt         tensor.DType
		rows, cols int
	}{
		{tensor.I8, 1, 1}, {tensor.I8, 1, 4099}, {tensor.F32, 1, 4096}, {tensor.F32, 2, 4096},
		{tensor.F32, 3, 1001}, {tensor.I8, 1, 5<<20 + 3}, {tensor.F32, 37, 12345}, {tensor.F32, 512, 4096},
	}
	for _, c := range transferConfigs {
		t.Run(c.name, func(t *testing.T) {
			devs, _ := c.setUp(t)
			for _, shared := range []bool{false, true} {
				for si, sh := range shapes {
					for _, pr := range bothWays {
						from, to := devs[pr[0]], devs[pr[1]]
						name := fmt.Sprintf("%v(%d,%d) %d->%d shared=%v", sh.dt, sh.rows, sh.cols, pr[0], pr[1], shared)
						alloc := func(d, peer *Device) backend.Buffer {
							var b backend.Buffer
							var err error
							if shared {
								b, err = d.AllocShared(sh.dt, sh.rows, sh.cols, peer)
							} else {
								b, err = d.Alloc(sh.dt, sh.rows, sh.cols)
							}
							if err != nil {
								t.Fatalf("%s: alloc: %v", name, err)
							}
							return b
						}
						src, dst := alloc(from, to), alloc(to, from)
						want := fillBytes(rand.New(rand.NewPCG(uint64(si*10+pr[0]), 7)), src.(*Buffer).Bytes())
						if err := from.Upload(src, want); err != nil {
							t.Fatal(err)
						}
						if ok, err := to.TransferFrom(dst, src); !ok || err != nil {
							t.Fatalf("%s: TransferFrom: %v, %v", name, ok, err)
						}
						got := make([]byte, len(want))
						if err := to.Download(got, dst); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if i := firstDiff(got, want); i >= 0 {
							t.Errorf("%s: byte %d of %d differs", name, i, len(want))
						}
						if shared && sh.rows == 512 {
							t.Logf("%s: src mapped %v, dst mapped %v", name, src.(*Buffer).alloc.mapped, dst.(*Buffer).alloc.mapped)
						}
						from.Free(src)
						to.Free(dst)
					}
				}
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// TestTransferStress is the upstream regression scenario at the transfer level: hidden
// states of 2 and 512 rows × 4096 f32 alternate 1000 times, 0 -> 1 and back 1 -> 0,
// queued back to back (the host waits only to check every tenth round), with peer on,
// forced staged and mixed. Sources alternate too, so stale data shows.
func TestTransferStress(t *testing.T) {
	const cols, maxRows, rounds = 4096, 512, 1000
	for _, c := range transferConfigs[:3] {
		t.Run(c.name, func(t *testing.T) {
			devs, _ := c.setUp(t)
			d0, d1 := devs[0], devs[1]
			var srcs [2]backend.Buffer
			var want [2][]byte
			for k := range srcs {
				srcs[k] = must(d0.Alloc(tensor.F32, maxRows, cols))
				want[k] = fillBytes(rand.New(rand.NewPCG(uint64(100+k), 7)), maxRows*cols*4)
				if err := d0.Upload(srcs[k], want[k]); err != nil {
					t.Fatal(err)
				}
			}
			mid := must(d1.AllocShared(tensor.F32, maxRows, cols, d0))
			back := must(d0.AllocShared(tensor.F32, maxRows, cols, d1))
			got := make([]byte, maxRows*cols*4)
			for i := range rounds {
				rows := 2
				if i%2 == 1 {
					rows = maxRows
				}
				k := (i / 2) % 2
				if ok, err := d1.TransferFrom(mid.Slice(0, rows), srcs[k].Slice(0, rows)); !ok || err != nil {
					t.Fatalf("round %d: 0->1: %v, %v", i, ok, err)
				}
				if ok, err := d0.TransferFrom(back.Slice(0, rows), mid.Slice(0, rows)); !ok || err != nil {
					t.Fatalf("round %d: 1->0: %v, %v", i, ok, err)
				}
				if i%10 < 8 && i != rounds-1 {
					continue
				}
				n := rows * cols * 4
				if err := d0.Download(got[:n], back.Slice(0, rows)); err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
				if j := firstDiff(got[:n], want[k][:n]); j >= 0 {
					t.Fatalf("round %d (%d rows): byte %d of %d differs", i, rows, j, n)
				}
			}
			if err := errors.Join(d0.Sync(), d1.Sync()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func must(b backend.Buffer, err error) backend.Buffer {
	if err != nil {
		panic(err)
	}
	return b
}

// maxStagedOverlap bounds Timing.Overlap of a 64 MiB staged transfer: the pipeline
// costs about one half plus one chunk (staged.go), about 0.53 of the two halves' sum;
// 0.75 leaves room for a noisy host and still fails a pipeline that does not overlap.
const maxStagedOverlap = 0.75

// TestTransferTimings times each path at the sizes that matter: one hidden state
// (16 KiB), 64 MiB (the staged overlap check) and 256 MiB (peer bandwidth), and asserts
// the staged pipeline's overlap at 64 MiB.
func TestTransferTimings(t *testing.T) {
	for _, c := range transferConfigs[:2] {
		t.Run(c.name, func(t *testing.T) {
			_, p := c.setUp(t)
			for _, size := range []int{16 << 10, 64 << 20, 256 << 20} {
				reps := max(5, min(200, (1<<30)/size))
				tm, err := p.Measure(0, 1, size, reps)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s 0->1 %9d bytes: %8.1f us %7.1f GB/s  D2H %8.1f us  H2D %8.1f us  overlap %.2f",
					tm.Path, size, us(tm.Time.Seconds()), tm.GBps(), us(tm.D2H.Seconds()), us(tm.H2D.Seconds()), tm.Overlap())
				if tm.Path != c.want[0] {
					t.Errorf("%d bytes went by %v, want %v", size, tm.Path, c.want[0])
				}
				if tm.Path != PeerStaged || size != 64<<20 {
					continue
				}
				if o := tm.Overlap(); o <= 0 || o > maxStagedOverlap {
					t.Errorf("staged 64 MiB: %v against D2H %v + H2D %v: overlap %.2f, want at most %.2f",
						tm.Time, tm.D2H, tm.H2D, o, maxStagedOverlap)
				}
			}
		})
	}
}

func us(s float64) float64 { return s * 1e6 }

func TestChunkSize(t *testing.T) {
	tests := []struct{ n, slot, want, chunks int }{
		{1, 4 << 20, 1, 1},
		{16 << 10, 4 << 20, 16 << 10, 1},
		{256 << 10, 4 << 20, 256 << 10, 1},
		{1 << 20, 4 << 20, 256 << 10, 4},
		{64 << 20, 4 << 20, 4 << 20, 16},
		{256 << 20, 4 << 20, 4 << 20, 64},
		{8<<20 + 12345, 4 << 20, 1088 << 10, 8}, // odd size: the last chunk is short
		{3*(1<<20) + 7, 1 << 20, 448 << 10, 7},  // an odd size
		{100 << 10, 64 << 10, 64 << 10, 2},      // slots smaller than the minimum
		{512 * 4096 * 4, 4 << 20, 1 << 20, 8},   // 512 rows of 4096 f32
		{2 * 4096 * 4, 4 << 20, 32 << 10, 1},    // 2 rows
	}
	for _, tt := range tests {
		c := chunkSize(tt.n, tt.slot)
		chunks := (tt.n + c - 1) / c
		if c != tt.want || chunks != tt.chunks || c > tt.slot {
			t.Errorf("chunkSize(%d, %d) = %d (%d chunks), want %d (%d chunks)", tt.n, tt.slot, c, chunks, tt.want, tt.chunks)
		}
	}
}
