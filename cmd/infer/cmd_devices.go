package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/infergo/infer/backend/cuda"
)

// Sizes `infer devices` measures each pair at: one 4096-f32 hidden state (latency), and
// a payload large enough for bandwidth.
const (
	devicesSmall = 16 << 10
	devicesLarge = 64 << 20
)

// cmdDevices implements 'infer devices': one line per CUDA device with its name, memory
// and compute capability; with two or more GPUs, the peer-access state of every ordered
// pair as a matrix (like `nvidia-smi topo -m`) and a table of each pair's measured
// latency and bandwidth, peer and staged. Without a CUDA driver it says so and fails.
func cmdDevices(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	peer := fs.String("peer", "auto", "peer access `mode`: auto, or off to stage every pair through host memory")
	measure := fs.Bool("measure", true, "measure each pair's latency (16 KiB) and bandwidth (64 MiB)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer devices [-peer auto|off] [-measure=false]\n\nList the CUDA devices and the peer-access table.")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	mode, err := cuda.ParsePeerMode(*peer)
	if err != nil {
		return usageError{err}
	}
	infos, err := cuda.Devices()
	if err != nil {
		return fmt.Errorf("devices: %w", err)
	}
	fmt.Fprintln(stdout, "cpu      (always available)")
	for _, in := range infos {
		fmt.Fprintf(stdout, "cuda:%-3d %-24s %7.1f GiB (%.1f free)  compute %d.%d  %d SMs  VMM %s\n",
			in.Ordinal, in.Name, gib(in.TotalMemory), gib(in.FreeMemory), in.Major, in.Minor, in.SMs, yesNo(in.VMM))
	}
	if len(infos) == 0 {
		fmt.Fprintln(stdout, "no CUDA devices")
	}
	if len(infos) < 2 {
		return nil
	}
	devs, closeAll, err := openDevices("")
	if err != nil {
		return fmt.Errorf("devices: %w", err)
	}
	defer closeAll()
	rows, err := pairRows(ctx, devs, mode, *measure, stderr)
	if err != nil {
		return fmt.Errorf("devices: %w", err)
	}
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = shortName(d)
	}
	fmt.Fprintln(stdout)
	if err := writeTopology(stdout, names, rows); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	return writePairTable(stdout, rows, *measure)
}

// pairRow is what `infer devices` knows of one ordered pair.
type pairRow struct {
	From, To  int
	Pair      cuda.Pair
	Peer      [2]cuda.Timing // small, large; zero unless the pair is peer and was measured
	Staged    [2]cuda.Timing // small, large; zero unless measured
	HasPeer   bool
	HasStaged bool
}

// pairRows builds the peer table of devs in mode, and with measure times each pair's
// peer path (where it has one) and then, with a second table in PeerOff, its staged path.
func pairRows(ctx context.Context, devs []*cuda.Device, mode cuda.PeerMode, measure bool, logw io.Writer) ([]pairRow, error) {
	pairs := orderedPairs(len(devs))
	p, err := cuda.NewPeers(devs, pairs, cuda.PeerOptions{Mode: mode, Logf: logTo(logw)})
	if err != nil {
		return nil, err
	}
	rows := make([]pairRow, len(pairs))
	for i, pr := range p.Pairs() {
		rows[i] = pairRow{From: pr.From, To: pr.To, Pair: pr}
		if !measure || pr.State != cuda.PeerEnabled || ctx.Err() != nil {
			continue
		}
		if rows[i].Peer, err = measurePair(p, pr.From, pr.To); err != nil {
			p.Close()
			return nil, err
		}
		rows[i].HasPeer = true
	}
	if err := p.Close(); err != nil || !measure {
		return rows, err
	}
	if p, err = cuda.NewPeers(devs, pairs, cuda.PeerOptions{Mode: cuda.PeerOff}); err != nil {
		return nil, err
	}
	defer p.Close()
	for i, pr := range pairs {
		if ctx.Err() != nil {
			break
		}
		if rows[i].Staged, err = measurePair(p, pr[0], pr[1]); err != nil {
			return nil, err
		}
		rows[i].HasStaged = true
	}
	return rows, p.Close()
}

// measurePair times the small and large payloads of one pair.
func measurePair(m meter, from, to int) ([2]cuda.Timing, error) {
	var ts [2]cuda.Timing
	for k, size := range []int{devicesSmall, devicesLarge} {
		var err error
		if ts[k], err = m.Measure(from, to, size, max(5, min(200, (1<<30)/size))); err != nil {
			return ts, err
		}
	}
	return ts, nil
}

// writeTopology prints the pair states as a matrix, rows the source and columns the
// destination, the way `nvidia-smi topo -m` prints links.
func writeTopology(w io.Writer, names []string, rows []pairRow) error {
	state := map[[2]int]string{}
	for _, r := range rows {
		state[[2]int{r.From, r.To}] = r.Pair.State.String()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "from\\to")
	for _, n := range names {
		fmt.Fprintf(tw, "\t%s", n)
	}
	fmt.Fprintln(tw)
	for i, n := range names {
		fmt.Fprint(tw, n)
		for j := range names {
			s, ok := state[[2]int{i, j}]
			switch {
			case i == j:
				s = "X"
			case !ok:
				s = "-"
			}
			fmt.Fprintf(tw, "\t%s", s)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw, "\npeer: direct copies, verified; staged: through pinned host memory; unsupported: no peer path")
	return tw.Flush()
}

// writePairTable prints one line per pair: state, the driver's performance rank and
// native atomics, why it stages, and with measured the timings.
func writePairTable(w io.Writer, rows []pairRow, measured bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "pair\tstate\trank\tatomics")
	if measured {
		fmt.Fprint(tw, "\tpeer 16 KiB\tpeer 64 MiB\tstaged 16 KiB\tstaged 64 MiB\tstaged overlap")
	}
	fmt.Fprintln(tw, "\tnote")
	for _, r := range rows {
		rank, atomics := "-", "-"
		if r.Pair.Info.CanAccess {
			rank, atomics = fmt.Sprint(r.Pair.Info.PerformanceRank), yesNo(r.Pair.Info.NativeAtomics)
		}
		fmt.Fprintf(tw, "%d -> %d\t%s\t%s\t%s", r.From, r.To, r.Pair.State, rank, atomics)
		if measured {
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s", latency(r.Peer[0], r.HasPeer), bandwidth(r.Peer[1], r.HasPeer),
				latency(r.Staged[0], r.HasStaged), bandwidth(r.Staged[1], r.HasStaged), overlap(r.Staged[1], r.HasStaged))
		}
		fmt.Fprintf(tw, "\t%s\n", r.Pair.Reason)
	}
	return tw.Flush()
}

func latency(t cuda.Timing, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f us", t.Time.Seconds()*1e6)
}

func bandwidth(t cuda.Timing, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f GB/s", t.GBps())
}

// overlap is the staged time over the sum of its halves alone (lower is better).
func overlap(t cuda.Timing, ok bool) string {
	if !ok || t.Overlap() == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", t.Overlap())
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
