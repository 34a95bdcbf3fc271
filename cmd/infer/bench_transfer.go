package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/infergo/infer/backend/cuda"
)

// transferSizes are bench transfer's default payloads: 4 KiB to 256 MiB by fours.
var transferSizes = []int{4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20}

// meter measures one pair of a peer table (cuda.Peers; tests use a fake).
type meter interface {
	Measure(from, to, size, reps int) (cuda.Timing, error)
}

// transferRow is one line of bench transfer's table.
type transferRow struct {
	From, To string // device names, e.g. "cuda:0"
	cuda.Timing
}

// cmdBenchTransfer implements 'infer bench transfer': for each ordered pair of GPUs the
// time and rate of hidden-state transfers over each path (peer, staged through pinned
// host memory, and within one GPU), with the staged path's halves timed alone.
func cmdBenchTransfer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench transfer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := append([]int(nil), transferSizes...)
	fs.Func("sizes", "payload `sizes` in bytes, comma-separated, with K, M or G suffixes (default 4K..256M)", sizeList(&sizes))
	devList := fs.String("d", "", "CUDA `ordinals` to measure, comma-separated (default all)")
	peer := fs.String("peer", "auto", "peer access `mode`: auto, or off to measure only staged and same-GPU paths")
	reps := fs.Int("r", 0, "`repetitions` per size (default: enough for about 1 GiB, 5 to 200)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer bench transfer [-d 0,1] [-sizes 4K,16K,64M] [-r N] [-peer auto|off]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	mode, err := cuda.ParsePeerMode(*peer)
	if err != nil {
		return usageError{err}
	}
	if *reps < 0 {
		return usageError{fmt.Errorf("bench transfer: -r %d: must not be negative", *reps)}
	}
	devs, closeAll, err := openDevices(*devList)
	if err != nil {
		return fmt.Errorf("bench transfer: %w", err)
	}
	defer closeAll()
	if _, err := fmt.Fprintln(stdout, "| from | to | path | size | time (us) | GB/s | D2H alone (us) | H2D alone (us) | staged / (D2H+H2D) |\n|---|---|---|---:|---:|---:|---:|---:|---:|"); err != nil {
		return err
	}
	pairs := orderedPairs(len(devs))
	for _, m := range []cuda.PeerMode{cuda.PeerAuto, cuda.PeerOff} {
		if m == cuda.PeerAuto && mode == cuda.PeerOff {
			continue
		}
		keep := func(s cuda.PeerState) bool { return m == cuda.PeerOff || s == cuda.PeerEnabled }
		if err := benchTable(ctx, stdout, stderr, devs, pairs, m, keep, sizes, *reps); err != nil {
			return err
		}
	}
	for _, d := range devs { // within one GPU: a second Device on the same ordinal
		twin, err := cuda.Open(d.Ordinal())
		if err != nil {
			return fmt.Errorf("bench transfer: %w", err)
		}
		err = benchTable(ctx, stdout, stderr, []*cuda.Device{d, twin}, [][2]int{{0, 1}}, cuda.PeerAuto,
			func(cuda.PeerState) bool { return true }, sizes, *reps)
		if err := errors.Join(err, twin.Close()); err != nil {
			return err
		}
	}
	return nil
}

// benchTable builds a peer table in mode over devs and prints the rows of the pairs
// keep accepts.
func benchTable(ctx context.Context, w, logw io.Writer, devs []*cuda.Device, pairs [][2]int, mode cuda.PeerMode,
	keep func(cuda.PeerState) bool, sizes []int, reps int) error {
	p, err := cuda.NewPeers(devs, pairs, cuda.PeerOptions{Mode: mode, Logf: logTo(logw)})
	if err != nil {
		return fmt.Errorf("bench transfer: %w", err)
	}
	defer p.Close()
	for _, pr := range p.Pairs() {
		if !keep(pr.State) {
			continue
		}
		from, to := shortName(devs[pr.From]), shortName(devs[pr.To])
		if err := benchPair(ctx, w, p, pr.From, pr.To, from, to, sizes, reps); err != nil {
			return err
		}
	}
	return p.Close()
}

// benchPair measures one pair at every size and prints a row as each completes.
func benchPair(ctx context.Context, w io.Writer, m meter, from, to int, fromName, toName string, sizes []int, reps int) error {
	for _, size := range sizes {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := reps
		if r == 0 {
			r = max(5, min(200, (1<<30)/size))
		}
		t, err := m.Measure(from, to, size, r)
		if err != nil {
			return fmt.Errorf("bench transfer %s -> %s, %d bytes: %w", fromName, toName, size, err)
		}
		if err := writeTransferRow(w, transferRow{From: fromName, To: toName, Timing: t}); err != nil {
			return err
		}
	}
	return nil
}

// writeTransferRow prints one markdown row; the staged columns are "-" for other paths.
func writeTransferRow(w io.Writer, r transferRow) error {
	d2h, h2d, ratio := "-", "-", "-"
	if r.D2H > 0 {
		d2h = fmt.Sprintf("%.1f", r.D2H.Seconds()*1e6)
		h2d = fmt.Sprintf("%.1f", r.H2D.Seconds()*1e6)
		ratio = fmt.Sprintf("%.2f", r.Overlap())
	}
	_, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %.1f | %.2f | %s | %s | %s |\n",
		r.From, r.To, r.Path, sizeName(r.Bytes), r.Time.Seconds()*1e6, r.GBps(), d2h, h2d, ratio)
	return err
}

// openDevices opens the GPUs named by list ("0,1"; empty: all of them). Without a
// driver the error says the command needs CUDA devices.
func openDevices(list string) ([]*cuda.Device, func(), error) {
	n, err := cuda.Count()
	if err != nil {
		return nil, nil, fmt.Errorf("needs CUDA devices: %w", err)
	}
	var ordinals []int
	if list == "" {
		for i := range n {
			ordinals = append(ordinals, i)
		}
	} else {
		for _, s := range strings.Split(list, ",") {
			o, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || o < 0 || o >= n {
				return nil, nil, usageError{fmt.Errorf("device %q: want an ordinal below %d", s, n)}
			}
			ordinals = append(ordinals, o)
		}
	}
	if len(ordinals) == 0 {
		return nil, nil, errors.New("needs CUDA devices: none found")
	}
	var devs []*cuda.Device
	closeAll := func() {
		for _, d := range devs {
			d.Close()
		}
	}
	for _, o := range ordinals {
		d, err := cuda.Open(o)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		devs = append(devs, d)
	}
	return devs, closeAll, nil
}

// orderedPairs lists every ordered pair of n devices.
func orderedPairs(n int) [][2]int {
	var pairs [][2]int
	for i := range n {
		for j := range n {
			if i != j {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	return pairs
}

// shortName is "cuda:N".
func shortName(d *cuda.Device) string { return fmt.Sprintf("cuda:%d", d.Ordinal()) }

// logTo returns a Logf writing lines to w.
func logTo(w io.Writer) func(string, ...any) {
	return func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
}

// sizeName prints a byte count the short way: 4 KiB, 64 MiB, 1000 B.
func sizeName(n int) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// sizeList returns a flag.Func setter for positive sizes like "4K,64M,1G,1000"
// (parseByteSize's units).
func sizeList(dst *[]int) func(string) error {
	return func(s string) error {
		*dst = nil
		for _, part := range strings.Split(s, ",") {
			v, err := parseByteSize(part)
			if err != nil || v <= 0 {
				return fmt.Errorf("%q is not a list of sizes", s)
			}
			*dst = append(*dst, int(v))
		}
		return nil
	}
}
